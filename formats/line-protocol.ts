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
 *
 * `parseLine` reads a line of text and is the reference; the write path
 * reads whole bodies with LineScanner, from their bytes, to the same result.
 */
import { isUtf8 } from 'node:buffer';
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

/** The measurement and tags at the start of a line; throws `Syntax`. */
function seriesPart(s: Scanner): Pick<Point, 'measurement' | 'tags'> {
  const measurement = s.token('measurement');
  const tags = new Map<string, string>();
  while (s.peek() === COMMA) {
    s.pos++;
    const key = s.token('tag key');
    s.expect(EQUALS, '=');
    tags.set(key, s.token('tag value'));
  }
  return { measurement, tags };
}

/** One non-blank line; throws `Syntax`. */
function parse(text: string, line: number): Point {
  const s = new Scanner(text);
  const { measurement, tags } = seriesPart(s);
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

/**
 * The measurement and tags of a series part that LineScanner found valid
 * (the bytes before the space that starts the fields).
 */
export function parseSeries(text: string): Pick<Point, 'measurement' | 'tags'> {
  return seriesPart(new Scanner(text));
}

/** A field key as written (quoted or with escapes) that LineScanner found valid. */
export function parseFieldKey(text: string): string {
  return new Scanner(text).token('field key');
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

/** Kinds of field values in LineScanner's arrays. */
export const FIELD_NUMBER = 0;
export const FIELD_BOOLEAN = 1;
export const FIELD_STRING = 2;

/** The longest field (separator, key and `=`) a layout holds: its length is one UTF-16 code unit. */
const MAX_LAYOUT_FIELD = 0xffff;

/** LineScanner.micros of a line without a timestamp. */
export const NO_TIMESTAMP = -1;

const LF = 0x0a;
const CR = 0x0d;
const HASH = 0x23;
const PLUS = 0x2b;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const LOWER_I = 0x69;
const LOWER_U = 0x75;
const BOM = [0xef, 0xbb, 0xbf];

/** Powers of ten that are exact doubles: a product or quotient with one rounds once, as Number() does. */
const EXACT_POWERS = Array.from({ length: 23 }, (_, i) => 10 ** i);
const MAX_EXACT_DIGITS = 15;
/** A series part with quotes or backslashes, read token by token. */
const QUOTED = -2;
/** FNV-1a, 32 bits: LineScanner.seriesHash. */
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

const BOOLEANS: [bytes: Buffer, value: number][] = [...TRUE].map((w): [Buffer, number] => [Buffer.from(w), 1]).concat(
  [...FALSE].map((w): [Buffer, number] => [Buffer.from(w), 0]),
);

/** Lead bytes of the UTF-8 encodings of the non-ASCII characters `String.prototype.trim` removes. */
const isSpaceLead = (c: number) => c === 0xc2 || (c >= 0xe1 && c <= 0xe3) || c === 0xef;

/**
 * Reads the lines of a body straight from its bytes, for the write path: no
 * string per line, and a line's series part (measurement and tags) is only
 * located, as its raw bytes, for the caller to recognise a series it has
 * seen before. Every valid line is read here but those with an integer
 * field of more than 15 digits (exact only through BigInt) or whitespace
 * after their timestamp; a line not read here goes through `parseLine`,
 * which gives the point or the error, so the scanner decides nothing the
 * general parser would decide differently.
 *
 * After next() answers true, either `point` holds the line's point (from
 * the general parser) or the series part is [seriesStart, seriesEnd) and the
 * fields, as written (a key may come twice: the caller then reparse()s), are
 * in keyStart/keyEnd (raw key bytes), kind and value; `micros` is the
 * timestamp in microseconds, NO_TIMESTAMP, or NaN when out of range (which
 * the caller refuses as Gnocchi does, after every line has parsed).
 */
export class LineScanner {
  /** 1-based number of the current line. */
  line = 0;
  point: Point | null = null;
  seriesStart = 0;
  seriesEnd = 0;
  /** FNV-1a (32 bits) of the series part's bytes, to find it in a map without reading it again. */
  seriesHash = 0;
  fieldCount = 0;
  keyStart = new Int32Array(16);
  keyEnd = new Int32Array(16);
  kind = new Uint8Array(16);
  value = new Float64Array(16);
  micros = NO_TIMESTAMP;
  /** The current line, without its line end. */
  lineStart = 0;
  lineEnd = 0;
  private pos: number;
  /** The body, for reads of four bytes. */
  private readonly view: DataView;
  private readonly precision: string;
  /**
   * The last timestamp read from its digits ([lastStart, lastStart +
   * lastLength) of the body) and its value: the lines of a push often give
   * the same timestamp (a time-major push, all of them), and comparing its
   * bytes costs less than reading its digits again.
   */
  private lastStart = 0;
  private lastLength = -1;
  private lastMicros = 0;
  /** ns: a timestamp's last three digits are dropped; otherwise it is multiplied by this. */
  private readonly nanos: boolean;
  private readonly multiplier: number;

  /** Throws LineProtocolError for a body that is not UTF-8 and FormatError for an unknown precision. */
  constructor(
    readonly body: Buffer,
    precision = 'ns',
  ) {
    const factor = PRECISIONS[precision];
    if (factor === undefined) throw new FormatError(`Invalid precision ${precision}`);
    this.precision = precision;
    this.nanos = factor === 1n;
    this.multiplier = Number(factor) / 1000;
    this.view = new DataView(body.buffer, body.byteOffset, body.byteLength);
    if (!isUtf8(body)) throw new LineProtocolError(firstInvalidLine(body), 'invalid UTF-8');
    // As TextDecoder, which the body used to go through, drops a byte order mark.
    this.pos = BOM.every((b, i) => body[i] === b) ? BOM.length : 0;
  }

  /** Moves to the next non-blank, non-comment line and reads it; false at the end. Throws LineProtocolError for a line that does not parse. */
  next(): boolean {
    if (!this.nextLine()) return false;
    this.read(-1);
    return true;
  }

  /**
   * Moves to the next non-blank, non-comment line, [lineStart, lineEnd),
   * without reading it (`read` does); false at the end.
   */
  nextLine(): boolean {
    const b = this.body;
    while (this.pos <= b.length) {
      const start = this.pos;
      let end = b.indexOf(LF, start);
      if (end === -1) end = b.length;
      this.pos = end + 1;
      this.line++;
      if (end > start && b[end - 1] === CR) end--;
      if (end === start) continue;
      const first = b[start]!;
      if ((first <= SPACE || isSpaceLead(first)) && b.toString('utf8', start, end).trim() === '') continue;
      if (first === HASH) continue;
      this.lineStart = start;
      this.lineEnd = end;
      return true;
    }
    return false;
  }

  /**
   * Reads the line nextLine found. `seriesEnd`, unless -1, is where the
   * caller knows the series part ends: [lineStart, seriesEnd) holds, byte
   * for byte, a series part this scanner read before, and a space follows
   * (the part is then neither checked nor hashed again: seriesHash is left
   * as it was). Throws LineProtocolError for a line that does not parse.
   */
  read(seriesEnd: number): void {
    this.point = null;
    if (!this.scan(this.lineStart, this.lineEnd, seriesEnd)) this.reparse();
  }

  /**
   * Reads the line nextLine found when its fields are written as in
   * `layout`, a line of the same series read before: [lineStart, seriesEnd)
   * and a space are as for `read`, and the line's fields are, one after the
   * other, written as layout's: each a character giving the length of what
   * follows it, then the field's separator (the space or a comma), key and
   * `=` as Latin-1 characters of the line's bytes (see `layoutOf`). Keys are
   * then not read again: the same bytes up to an `=` are the same key, and
   * the caller knows which. False for any other line, with nothing the
   * caller can use (it then `read`s the line): more or fewer fields, other
   * keys, or what `read` would send to parseLine.
   */
  readAs(seriesEnd: number, layout: string): boolean {
    const b = this.body;
    const end = this.lineEnd;
    let p = seriesEnd;
    let n = 0;
    for (let j = 0; j < layout.length; n++) {
      const length = layout.charCodeAt(j);
      const stop = j + 1 + length;
      // The field's value must follow in the line.
      if (p + length >= end) return false;
      if (n === this.kind.length) this.grow();
      this.keyStart[n] = p + 1;
      for (j++; j < stop; j++, p++) if (b[p] !== layout.charCodeAt(j)) return false;
      this.keyEnd[n] = p - 1;
      p = this.valueAt(n, p, end);
      if (p < 0) return false;
    }
    // A line without fields does not parse.
    if (n === 0) return false;
    this.point = null;
    this.seriesStart = this.lineStart;
    this.seriesEnd = seriesEnd;
    return this.fieldsEnd(n, p, end);
  }

  /**
   * The layout of the line read last (by `read`, from its bytes), for
   * readAs: its fields' separators, keys and `=`, each after a character
   * giving its length; '' (no line reads as it) when a key is too long for
   * a character to give.
   */
  layoutOf(): string {
    let layout = '';
    for (let i = 0; i < this.fieldCount; i++) {
      const start = this.keyStart[i]! - 1;
      const end = this.keyEnd[i]! + 1;
      if (end - start > MAX_LAYOUT_FIELD) return '';
      layout += String.fromCharCode(end - start) + this.body.toString('latin1', start, end);
    }
    return layout;
  }

  /**
   * Reads the current line again through parseLine, into `point` and
   * `micros`: for a line the caller cannot take from the arrays (a field
   * key given twice, whose last value counts).
   */
  reparse(): void {
    const p = parseLine(this.body.toString('utf8', this.lineStart, this.lineEnd), this.line);
    this.point = p;
    this.micros = p.timestamp === null ? NO_TIMESTAMP : (timestampMicros(p.timestamp, this.precision) ?? Number.NaN);
  }

  /** The line [start, end) from its bytes (its series part up to `known` unless -1); false when it must go through parseLine. */
  private scan(start: number, end: number, known: number): boolean {
    const b = this.body;
    let p = known === -1 ? this.plainSeriesEnd(start, end) : known;
    if (p === QUOTED) p = this.quotedSeriesEnd(start, end);
    if (p < 0) return false;
    this.seriesStart = start;
    this.seriesEnd = p;
    let n = 0;
    for (;;) {
      const keyStart = p + 1;
      p = this.tokenEnd(keyStart, end);
      if (p < 0 || p >= end || b[p] !== EQUALS) return false;
      if (n === this.keyStart.length) this.grow();
      this.keyStart[n] = keyStart;
      this.keyEnd[n] = p;
      p = this.valueAt(n, p + 1, end);
      if (p < 0) return false;
      n++;
      if (p >= end || b[p] !== COMMA) break;
    }
    return this.fieldsEnd(n, p, end);
  }

  /** Reads field n's value from `p`, just past its `=`; where the value ends, or -1 when the line must go through parseLine. */
  private valueAt(n: number, p: number, end: number): number {
    const b = this.body;
    if (p < end && b[p] === QUOTE) {
      this.kind[n] = FIELD_STRING;
      return this.quotedEnd(p, end);
    }
    const valueStart = p;
    while (p < end && b[p] !== SPACE && b[p] !== COMMA) p++;
    return this.bareValue(n, valueStart, p) ? p : -1;
  }

  /** A line's `n` fields are read up to `p`: reads the timestamp after them, if any; false when the line must go through parseLine. */
  private fieldsEnd(n: number, p: number, end: number): boolean {
    this.fieldCount = n;
    if (p === end) {
      this.micros = NO_TIMESTAMP;
      return true;
    }
    if (this.body[p] !== SPACE) return false;
    return this.timestamp(p + 1, end);
  }

  /**
   * End of the series part at `start` (measurement and tags, up to the
   * space before the fields) with its seriesHash, in one pass; -1 when the
   * line must go through parseLine, QUOTED when the part has a quote or a
   * backslash (quotedSeriesEnd reads those). Without either, a part is
   * tokens split by `,` and `=` alone, as Scanner.token splits them.
   */
  private plainSeriesEnd(start: number, end: number): number {
    const b = this.body;
    let h = FNV_OFFSET;
    let inKey = false;
    let tokenStart = start;
    for (let p = start; p < end; p++) {
      const c = b[p]!;
      if (c === SPACE) {
        if (p === tokenStart || inKey) return -1;
        this.seriesHash = h;
        return p;
      }
      if (c === COMMA) {
        if (p === tokenStart || inKey) return -1;
        inKey = true;
        tokenStart = p + 1;
      } else if (c === EQUALS) {
        if (p === tokenStart || !inKey) return -1;
        inKey = false;
        tokenStart = p + 1;
      } else if (c === QUOTE || c === BACKSLASH) {
        return QUOTED;
      }
      h = Math.imul(h ^ c, FNV_PRIME);
    }
    return -1;
  }

  /** plainSeriesEnd of a part with quotes or backslashes, token by token. */
  private quotedSeriesEnd(start: number, end: number): number {
    const b = this.body;
    let p = this.tokenEnd(start, end);
    while (p >= 0 && p < end && b[p] === COMMA) {
      p = this.tokenEnd(p + 1, end);
      if (p < 0 || p >= end || b[p] !== EQUALS) return -1;
      p = this.tokenEnd(p + 1, end);
    }
    if (p < 0 || p >= end || b[p] !== SPACE) return -1;
    let h = FNV_OFFSET;
    for (let i = start; i < p; i++) h = Math.imul(h ^ b[i]!, FNV_PRIME);
    this.seriesHash = h;
    return p;
  }

  private grow(): void {
    const size = 2 * this.keyStart.length;
    const grown = <T extends Int32Array | Uint8Array | Float64Array>(a: T, next: T): T => {
      next.set(a);
      return next;
    };
    this.keyStart = grown(this.keyStart, new Int32Array(size));
    this.keyEnd = grown(this.keyEnd, new Int32Array(size));
    this.kind = grown(this.kind, new Uint8Array(size));
    this.value = grown(this.value, new Float64Array(size));
  }

  /** End of the measurement, key or tag value at `p` (as Scanner.token reads it), or -1 for an empty or unterminated one. */
  private tokenEnd(p: number, end: number): number {
    const b = this.body;
    if (p < end && b[p] === QUOTE) return this.quotedEnd(p, end);
    const start = p;
    while (p < end) {
      const c = b[p]!;
      if (c === SPACE || c === COMMA || c === EQUALS) break;
      if (c === BACKSLASH && p + 1 < end) {
        const next = b[p + 1];
        if (next === SPACE || next === COMMA || next === EQUALS || next === BACKSLASH) {
          p += 2;
          continue;
        }
      }
      p++;
    }
    return p === start ? -1 : p;
  }

  /** End of the double-quoted string at `p` (after its closing quote), or -1 when it is not closed. */
  private quotedEnd(p: number, end: number): number {
    const b = this.body;
    for (p++; p < end; p++) {
      const c = b[p];
      if (c === QUOTE) return p + 1;
      if (c === BACKSLASH) {
        if (p + 1 >= end) return -1;
        p++;
      }
    }
    return -1;
  }

  /** An unquoted field value [start, end) into field n; false when parseLine must read it. */
  private bareValue(n: number, start: number, end: number): boolean {
    const b = this.body;
    const length = end - start;
    if (length === 0) return false;
    const first = b[start]!;
    if (first === 0x74 || first === 0x54 || first === 0x66 || first === 0x46) {
      for (const [word, value] of BOOLEANS) {
        if (word.length === length && b.compare(word, 0, length, start, end) === 0) {
          this.kind[n] = FIELD_BOOLEAN;
          this.value[n] = value;
          return true;
        }
      }
      return false;
    }
    const last = b[end - 1];
    if (last === LOWER_I || last === LOWER_U) {
      let p = start;
      const negative = first === MINUS;
      if (first === MINUS || first === PLUS) p++;
      if (end - 1 - p > MAX_EXACT_DIGITS || p === end - 1) return false;
      let v = 0;
      for (; p < end - 1; p++) {
        const d = b[p]! - ZERO;
        if (d < 0 || d > 9) return false;
        v = v * 10 + d;
      }
      if (negative && v !== 0 && last === LOWER_U) return false;
      this.kind[n] = FIELD_NUMBER;
      // BigInt has no -0.
      this.value[n] = negative && v !== 0 ? -v : v;
      return true;
    }
    if (!this.float(n, start, end)) return false;
    this.kind[n] = FIELD_NUMBER;
    return true;
  }

  /**
   * A float as the FLOAT pattern reads it, valued as Number() values it,
   * into field n; false when it is not one or not finite. Values are stored
   * rather than returned: a double returned from a call is boxed, an
   * allocation per line.
   */
  private float(n: number, start: number, end: number): boolean {
    const b = this.body;
    let p = start;
    const negative = b[p] === MINUS;
    if (b[p] === MINUS || b[p] === PLUS) p++;
    let mantissa = 0;
    let digits = 0;
    let integerDigits = 0;
    let fractionDigits = 0;
    let c = b[p];
    while (p < end && c! >= ZERO && c! <= NINE) {
      mantissa = mantissa * 10 + (c! - ZERO);
      if (mantissa !== 0) digits++;
      integerDigits++;
      c = b[++p];
    }
    if (p < end && c === DOT) {
      c = b[++p];
      while (p < end && c! >= ZERO && c! <= NINE) {
        mantissa = mantissa * 10 + (c! - ZERO);
        if (mantissa !== 0) digits++;
        fractionDigits++;
        c = b[++p];
      }
    }
    if (integerDigits === 0 && fractionDigits === 0) return false;
    let exponent = 0;
    if (p < end && (c === 0x65 || c === 0x45)) {
      c = b[++p];
      let sign = 1;
      if (p < end && (c === MINUS || c === PLUS)) {
        sign = c === MINUS ? -1 : 1;
        c = b[++p];
      }
      const exponentStart = p;
      while (p < end && c! >= ZERO && c! <= NINE) {
        // Past this the fast path is out anyway; the digits are still checked.
        if (exponent < 1000) exponent = exponent * 10 + (c! - ZERO);
        c = b[++p];
      }
      if (p === exponentStart) return false;
      exponent *= sign;
    }
    if (p !== end) return false;
    const scale = exponent - fractionDigits;
    let v: number;
    if (digits <= MAX_EXACT_DIGITS && scale >= -22 && scale <= 22) {
      // Clinger's fast path: both operands exact, so one correctly rounded operation.
      const magnitude = scale >= 0 ? mantissa * EXACT_POWERS[scale]! : mantissa / EXACT_POWERS[-scale]!;
      v = negative ? -magnitude : magnitude;
    } else {
      v = Number(b.toString('latin1', start, end));
      if (!Number.isFinite(v)) return false;
    }
    this.value[n] = v;
    return true;
  }

  /**
   * The timestamp [start, end) into `micros` (NaN when out of range,
   * NO_TIMESTAMP for none); false when parseLine must read it. Stored
   * rather than returned, as `float`.
   */
  private timestamp(start: number, end: number): boolean {
    const b = this.body;
    if (start === end) {
      this.micros = NO_TIMESTAMP;
      return true;
    }
    if (end - start === this.lastLength && this.sameBytes(this.lastStart, start, this.lastLength)) {
      this.micros = this.lastMicros;
      return true;
    }
    let p = start;
    let first = b[p];
    if (first === MINUS || first === PLUS) {
      p++;
      first = b[p];
    }
    if (p === end) return false;
    // Unsigned: exact in doubles while below 2^53. Digits go eight at a time
    // (two reads of four bytes) into small integers: one double operation
    // per eight digits. The nanoseconds dropped are still checked to be digits.
    const last = this.nanos ? Math.max(p, end - 3) : end;
    for (let i = last; i < end; i++) {
      const d = b[i]! - ZERO;
      if (d < 0 || d > 9) return false;
    }
    let v = 0;
    let i = p;
    for (; i + 8 <= last; i += 8) {
      const high = fourDigits(this.view.getUint32(i, true));
      const low = fourDigits(this.view.getUint32(i + 4, true));
      if (high === -1 || low === -1) return false;
      v = v * 1e8 + (high * 10_000 + low);
    }
    let group = 0;
    const inGroup = last - i;
    for (; i < last; i++) {
      const d = b[i]! - ZERO;
      if (d < 0 || d > 9) return false;
      group = group * 10 + d;
    }
    if (p === start) {
      if (inGroup > 0) v = v * EXACT_POWERS[inGroup]! + group;
      if (!this.nanos) v *= this.multiplier;
      if (v <= Number.MAX_SAFE_INTEGER) {
        this.micros = this.lastMicros = v;
        this.lastStart = start;
        this.lastLength = end - start;
        return true;
      }
    }
    this.micros = timestampMicros(BigInt(b.toString('latin1', start, end)), this.precision) ?? Number.NaN;
    return true;
  }

  /** Whether the body's `length` bytes at `a` and at `b` are the same, four at a time. */
  private sameBytes(a: number, b: number, length: number): boolean {
    const { view } = this;
    let j = 0;
    for (; j + 4 <= length; j += 4) if (view.getUint32(a + j, true) !== view.getUint32(b + j, true)) return false;
    for (; j < length; j++) if (this.body[a + j] !== this.body[b + j]) return false;
    return true;
  }
}

/**
 * The value of four ASCII digits read as a little-endian 32-bit word (the
 * first digit in its low byte), or -1 when a byte is not a digit; with
 * integer operations on the word instead of one per digit.
 */
function fourDigits(word: number): number {
  // Each byte 0x30-0x39: its high nibble 3, and still 3 after adding 6 (no carry: every byte at most 0x39).
  if (((word & 0xf0f0f0f0) | (((word + 0x06060606) & 0xf0f0f0f0) >>> 4)) !== 0x33333333) return -1;
  const d = word - 0x30303030;
  // Bytes 0 and 2 of `pairs`: the first and the last two digits as numbers.
  const pairs = d * 10 + (d >>> 8);
  return (pairs & 0xff) * 100 + ((pairs >>> 16) & 0xff);
}

/** The first line of a body that is not UTF-8. */
function firstInvalidLine(body: Buffer): number {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let line = 1;
  let start = 0;
  for (let i = 0; i <= body.length; i++) {
    if (i === body.length || body[i] === LF) {
      try {
        decoder.decode(body.subarray(start, i));
      } catch {
        return line;
      }
      line++;
      start = i + 1;
    }
  }
  return 1;
}
