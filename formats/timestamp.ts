import { writePair } from './ascii.js';
import { parseDuration, parsePythonFloat } from './duration.js';
import { FormatError } from './errors.js';

const MICROS_PER_SECOND = 1_000_000;
const SECONDS_PER_DAY = 86_400;
const UNABLE = 'Unable to convert timestamps';
const BEFORE_EPOCH = 'Timestamp must be after Epoch';

// numpy's ISO 8601 reader, which Gnocchi uses for strings that are not
// numbers. Month and day are mandatory here because a bare year is always a
// valid float and so never reaches this reader. Only ASCII whitespace counts,
// as in C's isspace; trailing whitespace is tolerated only after a time of day,
// and "+HH" followed by anything must go on with the minutes.
const WS = String.raw`[ \t\n\v\f\r]`;
const NUMPY_DATETIME = new RegExp(
  String.raw`^${WS}*[+-]?(?<year>\d*)-(?<month>\d\d)(?:-(?<day>\d\d)` +
    String.raw`(?:[T ](?<hour>\d\d)(?::(?<minute>\d\d)(?::(?<second>\d\d)(?:\.(?<fraction>\d{0,18}))?)?)?` +
    String.raw`(?:Z${WS}*|(?<offsetSign>[+-])(?<offsetHour>\d\d)(?::?(?<offsetMinute>\d\d)${WS}*)?|${WS}*))?)?$`,
);

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const isLeapYear = (year: number): boolean => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);

/** Days from 1970-01-01 to the given proleptic Gregorian date. */
function daysFromCivil(year: number, month: number, day: number): number {
  // Counting years from March puts the leap day last, so the day of the year
  // follows from the month alone.
  const marchYear = month <= 2 ? year - 1 : year;
  const era = Math.floor(marchYear / 400);
  const yearOfEra = marchYear - era * 400;
  const dayOfYear = Math.floor((153 * ((month + 9) % 12) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

const toInt = (digits: string | undefined): number => (digits === undefined ? 0 : Number(digits));

export function parseNumpyDatetime(text: string): number | undefined {
  const g = NUMPY_DATETIME.exec(text)?.groups;
  if (g === undefined) return undefined;
  // numpy negates the year only when the very first character is "-", even
  // after it skipped leading whitespace.
  const year = toInt(g.year) * (text.startsWith('-') ? -1 : 1);
  const month = toInt(g.month);
  const day = g.day === undefined ? 1 : toInt(g.day);
  const hour = toInt(g.hour);
  const minute = toInt(g.minute);
  const second = toInt(g.second);
  const offsetHour = toInt(g.offsetHour);
  const offsetMinute = toInt(g.offsetMinute);
  const monthDays = month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1];
  if (
    monthDays === undefined ||
    day < 1 ||
    day > monthDays ||
    hour >= 24 ||
    minute >= 60 ||
    second >= 60 ||
    offsetHour >= 24 ||
    offsetMinute >= 60
  ) {
    return undefined;
  }
  const offset = (g.offsetSign === '-' ? -1 : 1) * (offsetHour * 3_600 + offsetMinute * 60);
  const seconds = daysFromCivil(year, month, day) * SECONDS_PER_DAY + hour * 3_600 + minute * 60 + second - offset;
  // Gnocchi refuses any instant before the epoch, even one that rounding
  // the fraction below would carry onto it.
  if (seconds < 0) throw new FormatError(BEFORE_EPOCH);
  // Gnocchi keeps nanoseconds, but its utils.to_datetime (resource dates)
  // goes through a float that rounds them to the nearest microsecond.
  const fraction = g.fraction ?? '';
  const micros = Number(fraction.slice(0, 6).padEnd(6, '0')) + ((fraction[6] ?? '0') >= '5' ? 1 : 0);
  return seconds * MICROS_PER_SECOND + micros;
}

const digitAt = (bytes: Uint8Array, i: number): number => {
  const d = bytes[i]! - 0x30;
  return d >= 0 && d <= 9 ? d : Number.NaN;
};
const twoDigits = (bytes: Uint8Array, i: number): number => digitAt(bytes, i) * 10 + digitAt(bytes, i + 1);

/**
 * The canonical ISO 8601 forms clients send (`YYYY-MM-DDTHH:MM:SS`, an
 * optional fraction, an optional `Z` or `±HH:MM`/`±HHMM` offset) of the
 * ASCII bytes[start, end), read without a regular expression: measure
 * pushes parse one per point, from the body's bytes. The value is the one
 * `parseNumpyDatetime` gives; anything else, including instants it would
 * refuse, is undefined and goes the general way. Bytes past `end` may be
 * looked at, never counted.
 */
export function parseIsoTimestamp(bytes: Uint8Array, start: number, end: number): number | undefined {
  if (end - start < 19) return undefined;
  const year = digitAt(bytes, start) * 1000 + digitAt(bytes, start + 1) * 100 + twoDigits(bytes, start + 2);
  const month = twoDigits(bytes, start + 5);
  const day = twoDigits(bytes, start + 8);
  const hour = twoDigits(bytes, start + 11);
  const minute = twoDigits(bytes, start + 14);
  const second = twoDigits(bytes, start + 17);
  const sep = bytes[start + 10];
  if (
    bytes[start + 4] !== 0x2d || bytes[start + 7] !== 0x2d || (sep !== 0x54 && sep !== 0x20) ||
    bytes[start + 13] !== 0x3a || bytes[start + 16] !== 0x3a
  ) {
    return undefined;
  }
  let i = start + 19;
  let micros = 0;
  if (bytes[i] === 0x2e && i < end) {
    i++;
    let digits = 0;
    let roundUp = 0;
    for (let d = digitAt(bytes, i); i < end && digits < 18 && d >= 0; d = digitAt(bytes, ++i), digits++) {
      if (digits < 6) micros = micros * 10 + d;
      else if (digits === 6 && d >= 5) roundUp = 1;
    }
    if (digits < 6) micros *= 10 ** (6 - digits);
    micros += roundUp;
  }
  let offset = 0;
  if (i < end) {
    const c = bytes[i];
    if (c === 0x5a && i + 1 === end) i++;
    else if (c === 0x2b || c === 0x2d) {
      const offsetHour = twoDigits(bytes, i + 1);
      const colon = bytes[i + 3] === 0x3a ? 1 : 0;
      const offsetMinute = twoDigits(bytes, i + 3 + colon);
      if (i + 5 + colon !== end || !(offsetHour < 24) || !(offsetMinute < 60)) return undefined;
      offset = (c === 0x2d ? -1 : 1) * (offsetHour * 3_600 + offsetMinute * 60);
      i = end;
    }
  }
  if (i !== end) return undefined;
  const monthDays = month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1];
  if (monthDays === undefined || !(day >= 1 && day <= monthDays && hour < 24 && minute < 60 && second < 60)) return undefined;
  const seconds = daysFromCivil(year, month, day) * SECONDS_PER_DAY + hour * 3_600 + minute * 60 + second - offset;
  const result = seconds * MICROS_PER_SECOND + micros;
  return seconds >= 0 && Number.isSafeInteger(result) ? result : undefined;
}

// The longest text parseIsoTimestamp reads: a date-time, 18 fraction digits, an offset.
const ISO_MAX_LENGTH = 50;
const isoScratch = new Uint8Array(ISO_MAX_LENGTH);

/** parseIsoTimestamp of a string (its bytes, when it is ASCII and short enough to be one). */
function parseIsoText(text: string): number | undefined {
  if (text.length > ISO_MAX_LENGTH) return undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) return undefined;
    isoScratch[i] = c;
  }
  return parseIsoTimestamp(isoScratch, 0, text.length);
}

/** Epoch seconds as microseconds when `parseTimestamp` would accept them, else undefined (without throwing). */
export function epochSecondsToMicros(seconds: number): number | undefined {
  if (!Number.isFinite(seconds) || seconds * 1e9 <= -1) return undefined;
  const micros = Math.round(seconds * MICROS_PER_SECOND) + 0;
  return micros >= 0 && Number.isSafeInteger(micros) ? micros : undefined;
}

function fromEpochSeconds(seconds: number): number {
  // Gnocchi turns NaN and infinities into NaT, which it cannot store.
  if (!Number.isFinite(seconds)) throw new FormatError(UNABLE);
  // Gnocchi truncates seconds * 1e9 to whole nanoseconds before its epoch
  // check, so only values at least 1 ns before the epoch are refused.
  if (seconds * 1e9 <= -1) throw new FormatError(BEFORE_EPOCH);
  return Math.round(seconds * MICROS_PER_SECOND) + 0;
}

function checked(micros: number): number {
  if (micros < 0) throw new FormatError(BEFORE_EPOCH);
  // Beyond 2^53 µs (2255-06-05) microseconds are no longer exact; Gnocchi
  // itself silently wraps around past 2262, so there is nothing to match.
  if (!Number.isSafeInteger(micros)) throw new FormatError(UNABLE);
  return micros;
}

/**
 * A timestamp in microseconds since the Unix epoch, read as Gnocchi's
 * `utils.to_timestamp` does: a number or numeric string is epoch seconds,
 * then an ISO 8601 date or date-time (naive means UTC), "now" or "today",
 * and last a duration relative to now such as "-2 days". `reading.relative`
 * is set when the timestamp was read relative to now: such a read names a
 * new instant every time.
 */
export function parseTimestamp(input: unknown, nowMicros: number = Date.now() * 1000, reading?: { relative: boolean }): number {
  if (typeof input === 'number') return checked(fromEpochSeconds(input));
  if (typeof input !== 'string') throw new FormatError(UNABLE);
  const iso = parseIsoText(input);
  if (iso !== undefined) return iso;

  const seconds = parsePythonFloat(input);
  if (seconds !== undefined) return checked(fromEpochSeconds(seconds));

  const special = input.toLowerCase();
  // numpy reads "" and "NaT" as not-a-time, which Gnocchi cannot store.
  if (special === '' || special === 'nat') throw new FormatError(UNABLE);
  // numpy's "now" comes from time() and so has whole-second resolution.
  if (special === 'now') return relativeTo(reading, Math.floor(nowMicros / MICROS_PER_SECOND) * MICROS_PER_SECOND);
  if (special === 'today') {
    const microsPerDay = SECONDS_PER_DAY * MICROS_PER_SECOND;
    return relativeTo(reading, Math.floor(nowMicros / microsPerDay) * microsPerDay);
  }

  const absolute = parseNumpyDatetime(input);
  if (absolute !== undefined) return checked(absolute);

  let offset: number;
  try {
    offset = parseDuration(input, { allowNonPositive: true });
  } catch {
    throw new FormatError(UNABLE);
  }
  return relativeTo(reading, nowMicros + offset);
}

/** `micros`, a timestamp read relative to now, which `reading` is told. */
function relativeTo(reading: { relative: boolean } | undefined, micros: number): number {
  if (reading !== undefined) reading.relative = true;
  return checked(micros);
}

/** Longest `formatTimestamp` text, for years up to 9999 as Python's datetime: "YYYY-MM-DDTHH:MM:SS.ffffff+00:00". */
export const MAX_TIMESTAMP_LENGTH = 32;

const SUFFIX = '+00:00';
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));

// Points come out in time order, so consecutive calls almost always fall on
// the same day: remembering its first second and its date saves a division
// and the calendar arithmetic.
let dayStart = NaN;
let datePrefix = '';
const date = { century: 0, yearOfCentury: 0, month: 0, day: 0 };

function enterDay(seconds: number): void {
  dayStart = Math.floor(seconds / SECONDS_PER_DAY) * SECONDS_PER_DAY;
  const d = new Date(dayStart * 1000);
  const year = d.getUTCFullYear();
  date.century = Math.floor(year / 100);
  date.yearOfCentury = year % 100;
  date.month = d.getUTCMonth() + 1;
  date.day = d.getUTCDate();
  datePrefix = `${String(year).padStart(4, '0')}-${TWO_DIGITS[date.month]}-${TWO_DIGITS[date.day]}T`;
}

/** A timestamp's time of day; one shared record, so that splitting one allocates nothing. */
const fields = { hour: 0, minute: 0, second: 0, micros: 0 };

/** The time of day of `micros`, its day's date being left in `datePrefix` and `date`. */
function split(micros: number): typeof fields {
  let seconds = Math.floor(micros / MICROS_PER_SECOND);
  let fraction = micros - seconds * MICROS_PER_SECOND;
  // The division can round up to the next whole second when the true
  // quotient is just below it; the subtraction itself is exact.
  if (fraction < 0) {
    seconds -= 1;
    fraction += MICROS_PER_SECOND;
  }
  let secondOfDay = seconds - dayStart;
  if (!(secondOfDay >= 0 && secondOfDay < SECONDS_PER_DAY)) {
    enterDay(seconds);
    secondOfDay = seconds - dayStart;
  }
  const minuteOfDay = (secondOfDay / 60) | 0;
  const hour = (minuteOfDay / 60) | 0;
  fields.hour = hour;
  fields.minute = minuteOfDay - hour * 60;
  fields.second = secondOfDay - minuteOfDay * 60;
  fields.micros = fraction;
  return fields;
}

/**
 * Python's `datetime.isoformat()` of the aware UTC datetime:
 * "2015-03-06T14:33:57+00:00", or with ".123400" when there are microseconds.
 */
export function formatTimestamp(micros: number): string {
  const { hour, minute, second, micros: fraction } = split(micros);
  const time = `${datePrefix}${TWO_DIGITS[hour]}:${TWO_DIGITS[minute]}:${TWO_DIGITS[second]}`;
  if (fraction === 0) return `${time}${SUFFIX}`;
  return `${time}.${String(fraction + MICROS_PER_SECOND).slice(1)}${SUFFIX}`;
}

/** `formatTimestamp(micros)`, for years up to 9999, as ASCII at `pos`; returns the position after it. */
export function writeTimestamp(buf: Uint8Array, pos: number, micros: number): number {
  const { hour, minute, second, micros: fraction } = split(micros);
  pos = writeDate(buf, pos);
  writePair(buf, pos, hour);
  buf[pos + 2] = 0x3a;
  writePair(buf, pos + 3, minute);
  buf[pos + 5] = 0x3a;
  writePair(buf, pos + 6, second);
  pos += 8;
  if (fraction !== 0) {
    writeFraction(buf, pos, fraction);
    pos += 7;
  }
  return writeUtcOffset(buf, pos);
}

/** "YYYY-MM-DDT" of the current day: stores from digit pairs beat copying bytes in a loop. */
function writeDate(buf: Uint8Array, pos: number): number {
  writePair(buf, pos, date.century);
  writePair(buf, pos + 2, date.yearOfCentury);
  buf[pos + 4] = 0x2d;
  writePair(buf, pos + 5, date.month);
  buf[pos + 7] = 0x2d;
  writePair(buf, pos + 8, date.day);
  buf[pos + 10] = 0x54;
  return pos + 11;
}

/** "+00:00", stored byte by byte: faster than copying it in a loop. */
function writeUtcOffset(buf: Uint8Array, pos: number): number {
  buf[pos] = 0x2b;
  buf[pos + 1] = 0x30;
  buf[pos + 2] = 0x30;
  buf[pos + 3] = 0x3a;
  buf[pos + 4] = 0x30;
  buf[pos + 5] = 0x30;
  return pos + 6;
}

/** ".ffffff" of 0 < micros < 1,000,000, by pairs of digits. */
function writeFraction(buf: Uint8Array, pos: number, micros: number): void {
  const high = (micros / 10_000) | 0;
  const low = micros - high * 10_000;
  const middle = (low / 100) | 0;
  buf[pos] = 0x2e;
  writePair(buf, pos + 1, high);
  writePair(buf, pos + 3, middle);
  writePair(buf, pos + 5, low - middle * 100);
}
