import { FormatError } from './errors.js';

const MICROS_PER_SECOND = 1_000_000;
const MICROS_PER_DAY = 86_400 * MICROS_PER_SECOND;

// Python's float() grammar, which Gnocchi tries before anything else: it
// allows surrounding whitespace, single underscores between digits, a bare
// leading or trailing dot, and the inf/infinity/nan words in any case.
const DIGITS = String.raw`\d(?:_?\d)*`;
const FLOAT_LITERAL = new RegExp(
  String.raw`^[+-]?(?:(?:${DIGITS}(?:\.(?:${DIGITS})?)?|\.${DIGITS})(?:e[+-]?${DIGITS})?|inf(?:inity)?|nan)$`,
  'i',
);

/**
 * The value of `text` as Python's `float(text)` reads it, or undefined when
 * Python would raise ValueError.
 */
export function parsePythonFloat(text: string): number | undefined {
  const literal = text.trim();
  if (!FLOAT_LITERAL.test(literal)) return undefined;
  const word = literal.replace(/^[+-]/, '').toLowerCase();
  if (word === 'nan') return NaN;
  if (word.startsWith('inf')) return literal.startsWith('-') ? -Infinity : Infinity;
  return Number(literal.replaceAll('_', ''));
}

// pytimeparse 1.1.5, the parser behind Gnocchi's to_timespan. The patterns,
// their order and the arithmetic below follow it so that every ambiguous or
// odd input (for instance "1:24" being 84 seconds) gives the same number.
const UNIT_SECONDS = { weeks: 604_800, days: 86_400, hours: 3_600, mins: 60, secs: 1 } as const;
type Unit = keyof typeof UNIT_SECONDS;
const UNITS = Object.keys(UNIT_SECONDS) as Unit[];

const WEEKS = String.raw`(?<weeks>[\d.]+)\s*(?:w|wks?|weeks?)`;
const DAYS = String.raw`(?<days>[\d.]+)\s*(?:d|dys?|days?)`;
const HOURS = String.raw`(?<hours>[\d.]+)\s*(?:h|hrs?|hours?)`;
const MINS = String.raw`(?<mins>[\d.]+)\s*(?:m|mins?|minutes?)`;
const SECS = String.raw`(?<secs>[\d.]+)\s*(?:s|secs?|seconds?)`;
const CLOCK_SECS = String.raw`(?<secs>\d{2}(?:\.\d+)?)`;
const optionalWithSeparator = (unit: string): string => String.raw`(?:${unit}\s*(?:[,/]\s*)?)?`;

const TIME_FORMATS = [
  [WEEKS, DAYS, HOURS, MINS].map(optionalWithSeparator).join(String.raw`\s*`) + String.raw`\s*(?:${SECS})?`,
  String.raw`(?<mins>\d{1,2}):${CLOCK_SECS}`,
  [WEEKS, DAYS].map(optionalWithSeparator).join(String.raw`\s*`) +
    String.raw`\s*(?<hours>\d+):(?<mins>\d{2}):${CLOCK_SECS}`,
  String.raw`(?<days>\d+):(?<hours>\d{2}):(?<mins>\d{2}):${CLOCK_SECS}`,
  String.raw`:${CLOCK_SECS}`,
].map((format) => new RegExp(String.raw`^\s*${format}\s*$`, 'i'));

// pytimeparse's sign class is `[+|-]`, so a leading "|" is a (positive) sign.
// `[^\n]*` and `(?=\n?$)` stand for Python's `.*` and `$`, which stop at a
// newline but tolerate a single one at the very end.
const SIGNED = /^\s*(?<sign>[+|-])?\s*(?<unsigned>[^\n]*)(?=\n?$)/;

const INTEGER = /^\d+$/;
const DECIMAL = /^(?:\d+\.?\d*|\.\d+)$/;

function pythonFloatOfField(text: string): number {
  if (!DECIMAL.test(text)) {
    // The pattern lets through things like "1.2.3"; Python's float() then
    // raises and Gnocchi answers with that message.
    throw new FormatError(`could not convert string to float: '${text}'`);
  }
  return Number(text);
}

function timeparse(text: string): number | undefined {
  const signed = SIGNED.exec(text)?.groups;
  if (signed?.unsigned === undefined || signed.unsigned.trim() === '') return undefined;
  const sign = signed.sign === '-' ? -1 : 1;
  for (const format of TIME_FORMATS) {
    const groups = format.exec(signed.unsigned)?.groups;
    if (groups === undefined) continue;
    const fields = UNITS.flatMap((unit) => {
      const value = groups[unit];
      return value === undefined ? [] : [[unit, value] as const];
    });
    if (fields.every(([, value]) => INTEGER.test(value))) {
      return sign * fields.reduce((sum, [unit, value]) => sum + UNIT_SECONDS[unit] * Number(value), 0);
    }
    const secs = groups.secs;
    if (secs === undefined || INTEGER.test(secs)) {
      // pytimeparse truncates the non-second part to whole seconds and adds
      // the seconds after applying the sign, so "-1.5 minutes 10 seconds" is
      // -80 seconds.
      let sum = 0;
      for (const [unit, value] of fields) {
        if (unit !== 'secs') sum += UNIT_SECONDS[unit] * pythonFloatOfField(value);
      }
      return sign * Math.trunc(sum) + (secs === undefined ? 0 : Number(secs));
    }
    let sum = 0;
    for (const [unit, value] of fields) sum += UNIT_SECONDS[unit] * pythonFloatOfField(value);
    return sign * sum;
  }
  return undefined;
}

function secondsToMicros(seconds: number): number {
  if (Number.isNaN(seconds)) throw new FormatError('cannot convert float NaN to integer');
  // Rounding the magnitude keeps the result symmetric around zero; adding 0
  // turns a -0 into 0.
  const micros = Math.sign(seconds) * Math.round(Math.abs(seconds) * MICROS_PER_SECOND) + 0;
  if (!Number.isSafeInteger(micros)) throw new FormatError('Unable to parse timespan');
  return micros;
}

/**
 * A timespan in microseconds, read as Gnocchi's `utils.to_timespan` does: a
 * number or numeric string is seconds, anything else a pytimeparse duration
 * such as "5 minutes", "1h", "1:00:00" or "-2 days".
 */
export function parseDuration(input: unknown, opts?: { allowNonPositive?: boolean }): number {
  let seconds: number | undefined;
  if (typeof input === 'number') {
    seconds = input;
  } else if (typeof input === 'string') {
    seconds = parsePythonFloat(input) ?? timeparse(input);
    if (seconds === undefined) throw new FormatError('Unable to parse timespan');
  } else {
    throw new FormatError('Invalid timespan');
  }
  const micros = secondsToMicros(seconds);
  if (micros <= 0 && !opts?.allowNonPositive) throw new FormatError('Timespan must be positive');
  return micros;
}

const twoDigits = (n: number): string => (n < 10 ? `0${n}` : `${n}`);

/** Python's `str(datetime.timedelta)`: "0:01:00", "1 day, 0:00:00", "-1 day, 23:59:00". */
export function formatDuration(micros: number): string {
  const days = Math.floor(micros / MICROS_PER_DAY);
  const withinDay = micros - days * MICROS_PER_DAY;
  const fraction = withinDay % MICROS_PER_SECOND;
  const seconds = (withinDay - fraction) / MICROS_PER_SECOND;
  const hours = Math.floor(seconds / 3_600);
  const clock =
    `${hours}:${twoDigits(Math.floor(seconds / 60) % 60)}:${twoDigits(seconds % 60)}` +
    (fraction === 0 ? '' : `.${String(fraction).padStart(6, '0')}`);
  if (days === 0) return clock;
  return `${days} day${Math.abs(days) === 1 ? '' : 's'}, ${clock}`;
}
