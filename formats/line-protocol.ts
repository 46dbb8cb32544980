/**
 * The InfluxDB line protocol, as Gnocchi's InfluxDB compatibility layer reads
 * it (`gnocchi/rest/influxdb.py`), but parsed strictly: a line is
 *
 *   measurement[,tag_key=tag_value...] field_key=field_value[,...] [timestamp]
 *
 * - measurement, tag keys/values and field keys are either double-quoted
 *   (Gnocchi's extension; `\` escapes the next character) or unquoted, where
 *   `\ `, `\,`, `\=` and `\\` stand for the character after the backslash and
 *   any other backslash is kept as is;
 * - field values are integers (`12i`, `-3i`, unsigned `7u`), floats (`1`,
 *   `-1.5e3`, `.5`), booleans (`t`, `T`, `true`, `True`, `TRUE`, and the `f`
 *   forms) or double-quoted strings (`\"` and `\\` escapes);
 * - the timestamp is a signed integer in the unit of the `precision` given to
 *   `timestampMicros` (nanoseconds by default).
 * Unlike Gnocchi's pyparsing grammar, which stops at the first thing it does
 * not understand and silently drops the rest of the line (a boolean field
 * drops the fields after it and the timestamp), anything left over is an
 * error. Blank lines and `#` comment lines are skipped.
 */
import { FormatError } from './errors.js';

export type FieldValue = number | boolean | string;

export interface Point {
  measurement: string;
  /** Tag key -> value; a repeated key keeps its last value. */
  tags: Map<string, string>;
  /** Field key -> value; a repeated key keeps its last value. */
  fields: Map<string, FieldValue>;
  /** The raw timestamp in the request's precision, or null when absent. */
  timestamp: bigint | null;
  /** 1-based line number in the body. */
  line: number;
}

/** A line that does not parse; `line` is 1-based, as Gnocchi reports it. */
export class LineProtocolError extends FormatError {
  constructor(
    readonly line: number,
    readonly why: string,
  ) {
    super(`Unable to parse line ${line}`);
  }
}

const SPACE = 0x20;
const COMMA = 0x2c;
const EQUALS = 0x3d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Thrown inside the scanner; turned into a LineProtocolError with the line number. */
class Syntax extends Error {}

class Scanner {
  pos = 0;
  constructor(readonly text: string) {}

  get done(): boolean {
    return this.pos >= this.text.length;
  }

  peek(): number {
    return this.text.charCodeAt(this.pos);
  }

  expect(code: number, what: string): void {
    if (this.peek() !== code) throw new Syntax(`expected ${what} at column ${this.pos + 1}`);
    this.pos++;
  }

  /** A double-quoted string; `\` escapes the next character. */
  quoted(): string {
    const { text } = this;
    this.pos++; // opening quote
    let out = '';
    let start = this.pos;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c === BACKSLASH) {
        if (this.pos + 1 >= text.length) break;
        out += text.slice(start, this.pos) + text[this.pos + 1];
        this.pos += 2;
        start = this.pos;
      } else if (c === QUOTE) {
        out += text.slice(start, this.pos);
        this.pos++;
        return out;
      } else {
        this.pos++;
      }
    }
    throw new Syntax('unterminated quoted string');
  }

  /**
   * A measurement, key or tag value: quoted, or unquoted up to an unescaped
   * space, comma or equals sign. Never empty.
   */
  token(what: string): string {
    if (this.peek() === QUOTE) return this.quoted();
    const { text } = this;
    let out = '';
    let start = this.pos;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c === SPACE || c === COMMA || c === EQUALS) break;
      if (c === BACKSLASH && this.pos + 1 < text.length) {
        const next = text.charCodeAt(this.pos + 1);
        if (next === SPACE || next === COMMA || next === EQUALS || next === BACKSLASH) {
          out += text.slice(start, this.pos) + text[this.pos + 1];
          this.pos += 2;
          start = this.pos;
          continue;
        }
      }
      this.pos++;
    }
    out += text.slice(start, this.pos);
    if (out === '') throw new Syntax(`empty ${what} at column ${this.pos + 1}`);
    return out;
  }

  /** The raw characters of an unquoted field value, up to a space or comma. */
  bare(): string {
    const start = this.pos;
    while (!this.done && this.peek() !== SPACE && this.peek() !== COMMA) this.pos++;
    return this.text.slice(start, this.pos);
  }
}

const INTEGER = /^[+-]?\d+$/;
const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const TRUE = new Set(['t', 'T', 'true', 'True', 'TRUE']);
const FALSE = new Set(['f', 'F', 'false', 'False', 'FALSE']);
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

function fieldValue(s: Scanner): FieldValue {
  if (s.peek() === QUOTE) return s.quoted();
  const raw = s.bare();
  if (TRUE.has(raw)) return true;
  if (FALSE.has(raw)) return false;
  const last = raw[raw.length - 1];
  if (last === 'i' || last === 'u') {
    const digits = raw.slice(0, -1);
    if (!INTEGER.test(digits)) throw new Syntax(`invalid integer ${JSON.stringify(raw)}`);
    const n = BigInt(digits);
    if (last === 'i' ? n < INT64_MIN || n > INT64_MAX : n < 0n || n > UINT64_MAX) {
      throw new Syntax(`integer out of range ${JSON.stringify(raw)}`);
    }
    return Number(n);
  }
  if (!FLOAT.test(raw)) throw new Syntax(`invalid field value ${JSON.stringify(raw)}`);
  const v = Number(raw);
  if (!Number.isFinite(v)) throw new Syntax(`field value out of range ${JSON.stringify(raw)}`);
  return v;
}

/** One non-blank line; throws `Syntax`. */
function parse(text: string, line: number): Point {
  const s = new Scanner(text);
  const measurement = s.token('measurement');
  const tags = new Map<string, string>();
  while (s.peek() === COMMA) {
    s.pos++;
    const key = s.token('tag key');
    s.expect(EQUALS, '=');
    tags.set(key, s.token('tag value'));
  }
  s.expect(SPACE, 'a space before the fields');
  const fields = new Map<string, FieldValue>();
  for (;;) {
    const key = s.token('field key');
    s.expect(EQUALS, '=');
    fields.set(key, fieldValue(s));
    if (s.peek() !== COMMA) break;
    s.pos++;
  }
  let timestamp: bigint | null = null;
  if (s.peek() === SPACE) {
    s.pos++;
    const rest = text.slice(s.pos).trimEnd();
    if (rest !== '') {
      if (!INTEGER.test(rest)) throw new Syntax(`invalid timestamp ${JSON.stringify(rest)}`);
      timestamp = BigInt(rest);
    }
    s.pos = text.length;
  }
  if (!s.done) throw new Syntax(`unexpected ${JSON.stringify(text[s.pos])} at column ${s.pos + 1}`);
  return { measurement, tags, fields, timestamp, line };
}

/** Parses one line (without its newline); `lineNumber` is for the error. */
export function parseLine(text: string, lineNumber = 1): Point {
  try {
    return parse(text, lineNumber);
  } catch (err) {
    if (err instanceof Syntax) throw new LineProtocolError(lineNumber, err.message);
    throw err;
  }
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Every point of a body: lines split on `\n` (a trailing `\r` is ignored),
 * blank and `#` lines skipped. A line that is not UTF-8 or does not parse
 * throws LineProtocolError with its 1-based number.
 */
export function parseLines(body: Uint8Array | string): Point[] {
  const points: Point[] = [];
  let text: string;
  if (typeof body === 'string') text = body;
  else {
    try {
      text = decoder.decode(body);
    } catch {
      // Find the first line that does not decode, for the message.
      let line = 1;
      let start = 0;
      for (let i = 0; i <= body.length; i++) {
        if (i === body.length || body[i] === 0x0a) {
          try {
            decoder.decode(body.subarray(start, i));
          } catch {
            throw new LineProtocolError(line, 'invalid UTF-8');
          }
          line++;
          start = i + 1;
        }
      }
      throw new LineProtocolError(1, 'invalid UTF-8');
    }
  }
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line.trim() === '' || line.startsWith('#')) continue;
    points.push(parseLine(line, i + 1));
  }
  return points;
}

export type Precision = 'ns' | 'us' | 'ms' | 's' | 'm' | 'h';

/** Precision names InfluxDB 1.x accepts for `precision`, to nanoseconds per unit. */
const PRECISIONS: Record<string, bigint> = {
  n: 1n,
  ns: 1n,
  u: 1_000n,
  us: 1_000n,
  'µ': 1_000n,
  'µs': 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

export function isPrecision(name: string): boolean {
  return Object.hasOwn(PRECISIONS, name);
}

/**
 * A raw timestamp in `precision` as microseconds since the epoch (floored, as
 * nanoseconds are beyond what the store keeps), or undefined when it is before
 * the epoch or beyond what the store can represent exactly.
 */
export function timestampMicros(raw: bigint, precision = 'ns'): number | undefined {
  const factor = PRECISIONS[precision];
  if (factor === undefined) throw new FormatError(`Invalid precision ${precision}`);
  const ns = raw * factor;
  if (ns < 0n) return undefined;
  const micros = ns / 1000n;
  if (micros > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  return Number(micros);
}
