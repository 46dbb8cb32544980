/**
 * The statsd text protocol, as `gnocchi-statsd` reads it (`gnocchi/statsd.py`)
 * plus gauge deltas and sets: one UDP datagram holds lines separated by
 * `\n` (or `\r\n`), each
 *
 *   name:value|type[|@rate]
 *
 * where type is `c` (counter; the rate, 0 < rate <= 1, says the client sent
 * one sample in 1/rate), `g` (gauge; a value signed with `+` or `-` is a
 * delta on the gauge's current value), `ms` (timer) or `s` (set; the value is
 * any member, counted distinct). As Gnocchi, a rate on anything but a counter
 * is refused. The name is everything before the first `:`. Blank lines are
 * skipped. A bad line is reported with its reason and the other lines still
 * count; a datagram that is not UTF-8 is one error.
 */

export type StatsdSample =
  | { type: 'c'; name: string; value: number; rate: number }
  | { type: 'g'; name: string; value: number; delta: boolean }
  | { type: 'ms'; name: string; value: number }
  | { type: 's'; name: string; member: string };

export type StatsdType = StatsdSample['type'];

export interface StatsdLineError {
  /** The line as received; null when the whole datagram is refused. */
  line: string | null;
  reason: string;
}

export interface StatsdDatagram {
  samples: StatsdSample[];
  errors: StatsdLineError[];
}

const TYPES: ReadonlySet<string> = new Set<StatsdType>(['c', 'g', 'ms', 's']);
/** Decimal numbers only: no `inf`, `nan`, hex or blanks, which Number() would take. */
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseNumber(text: string): number | undefined {
  if (!NUMBER.test(text)) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/** One line's sample, or why it is refused. */
export function parseStatsdLine(line: string): StatsdSample | string {
  const parts = line.split('|');
  if (parts.length !== 2 && parts.length !== 3) return 'expected name:value|type[|@rate]';
  const [nameValue, type, rateText] = parts as [string, string, string | undefined];
  const colon = nameValue.indexOf(':');
  if (colon === -1) return 'no colon between name and value';
  const name = nameValue.slice(0, colon);
  const valueText = nameValue.slice(colon + 1);
  if (name === '') return 'empty name';
  if (!TYPES.has(type)) return `unknown type ${JSON.stringify(type)}`;
  const kind = type as StatsdType;
  let rate = 1;
  if (rateText !== undefined) {
    if (kind !== 'c') return `a sample rate is only valid for counters, not ${kind}`;
    const r = rateText.startsWith('@') ? parseNumber(rateText.slice(1)) : undefined;
    if (r === undefined || r <= 0 || r > 1) return `bad sample rate ${JSON.stringify(rateText)}: expected @rate with 0 < rate <= 1`;
    rate = r;
  }
  if (kind === 's') return valueText === '' ? 'empty set member' : { type: kind, name, member: valueText };
  const value = parseNumber(valueText);
  if (value === undefined) return `bad number ${JSON.stringify(valueText)}`;
  switch (kind) {
    case 'c':
      return { type: kind, name, value, rate };
    case 'g':
      return { type: kind, name, value, delta: valueText.startsWith('+') || valueText.startsWith('-') };
    case 'ms':
      return { type: kind, name, value };
  }
}

export function parseStatsdDatagram(datagram: Uint8Array | string): StatsdDatagram {
  let text: string;
  if (typeof datagram === 'string') {
    text = datagram;
  } else {
    try {
      text = utf8.decode(datagram);
    } catch {
      return { samples: [], errors: [{ line: null, reason: 'datagram is not valid UTF-8' }] };
    }
  }
  const samples: StatsdSample[] = [];
  const errors: StatsdLineError[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line === '') continue;
    const parsed = parseStatsdLine(line);
    if (typeof parsed === 'string') errors.push({ line, reason: parsed });
    else samples.push(parsed);
  }
  return { samples, errors };
}
