/**
 * The fast path for measure pushes: reads the common shapes of
 * `[{"timestamp": ..., "value": ...}, ...]` and of the batch
 * `{"<metric>": [...], ...}` straight from the body's bytes into typed
 * arrays, without decoding the body to a string (a large one per push, for
 * the collector to sweep) or building a JSON value per measure. Anything
 * outside that shape (other keys, string or boolean values, numeric-string
 * or relative timestamps, escapes or non-ASCII bytes in strings, malformed
 * JSON...) returns null, and the
 * caller takes the general path (JSON.parse and `decodeMeasures`), which
 * gives Gnocchi's answers, errors included. So this never decides anything
 * the general path would decide differently; it only decides faster.
 */
import type { DecodedMeasures } from './measures.js';
import { epochSecondsToMicros, parseIsoTimestamp } from './timestamp.js';

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** Powers of ten that are exact doubles: a product or quotient with one rounds once, as parsing does. */
const EXACT_POWERS = Array.from({ length: 23 }, (_, i) => 10 ** i);
const MAX_EXACT_DIGITS = 15;

const TIMESTAMP = Buffer.from('timestamp', 'latin1');
const VALUE = Buffer.from('value', 'latin1');

/** Thrown inside the scanner when the body leaves the fast shape; never escapes this module. */
class OffPath extends Error {}
const OFF_PATH = new OffPath();

/**
 * The points of every list of a body, in one pair of typed arrays (one
 * allocation per body, not per metric); a list is a [from, to) range of it.
 */
class Points {
  timestamps: Float64Array;
  values: Float64Array;
  n = 0;

  constructor(bodyLength: number) {
    // A measure takes at least ~25 bytes of JSON: usually no regrowth.
    const capacity = Math.ceil(bodyLength / 24) + 16;
    this.timestamps = new Float64Array(capacity);
    this.values = new Float64Array(capacity);
  }

  push(timestamp: number, value: number): void {
    if (this.n === this.timestamps.length) {
      const grow = (old: Float64Array) => {
        const next = new Float64Array(old.length * 2);
        next.set(old);
        return next;
      };
      this.timestamps = grow(this.timestamps);
      this.values = grow(this.values);
    }
    this.timestamps[this.n] = timestamp;
    this.values[this.n++] = value;
  }

  /** Views built directly: `subarray` looks up a species constructor, a third slower per list. */
  range(from: number, to: number): DecodedMeasures {
    return { timestamps: view(this.timestamps, from, to), values: view(this.values, from, to) };
  }
}

function view(array: Float64Array, from: number, to: number): Float64Array {
  return new Float64Array(array.buffer, array.byteOffset + 8 * from, to - from);
}

class Scanner {
  pos = 0;
  /** The kind of the current list's timestamps: its first one decides, as in Gnocchi. */
  private kind: 'number' | 'iso' | undefined;
  private readonly points: Points;

  constructor(private readonly bytes: Buffer) {
    this.points = new Points(bytes.length);
  }

  ws(): void {
    const b = this.bytes;
    let c = b[this.pos];
    while (c === SPACE || c === LF || c === CR || c === TAB) c = b[++this.pos];
  }

  /** Skips whitespace, then expects `code`. */
  expect(code: number): void {
    this.ws();
    if (this.bytes[this.pos] !== code) throw OFF_PATH;
    this.pos++;
  }

  /** Skips whitespace; consumes `code` if it comes next. */
  accept(code: number): boolean {
    this.ws();
    if (this.bytes[this.pos] !== code) return false;
    this.pos++;
    return true;
  }

  end(): void {
    this.ws();
    if (this.pos !== this.bytes.length) throw OFF_PATH;
  }

  /** A string of ASCII without escapes; returns its [start, end) inside the quotes. */
  stringBounds(): [number, number] {
    this.expect(QUOTE);
    const start = this.pos;
    const end = this.bytes.indexOf(QUOTE, start);
    if (end === -1) throw OFF_PATH;
    for (let i = start; i < end; i++) {
      const c = this.bytes[i]!;
      if (c < SPACE || c === BACKSLASH || c >= 0x80) throw OFF_PATH;
    }
    this.pos = end + 1;
    return [start, end];
  }

  string(): string {
    const [start, end] = this.stringBounds();
    return this.bytes.toString('latin1', start, end);
  }

  /** A JSON number, valued exactly as JSON.parse values it. */
  number(): number {
    this.ws();
    const t = this.bytes;
    const start = this.pos;
    let i = start;
    let negative = false;
    if (t[i] === MINUS) {
      negative = true;
      i++;
    }
    let mantissa = 0;
    let digits = 0;
    let scale = 0;
    let c = t[i];
    if (c === ZERO) {
      c = t[++i];
    } else if (c > ZERO && c <= NINE) {
      while (c >= ZERO && c <= NINE) {
        mantissa = mantissa * 10 + (c - ZERO);
        digits++;
        c = t[++i];
      }
    } else {
      throw OFF_PATH;
    }
    if (c === DOT) {
      c = t[++i];
      if (!(c >= ZERO && c <= NINE)) throw OFF_PATH;
      while (c >= ZERO && c <= NINE) {
        mantissa = mantissa * 10 + (c - ZERO);
        if (mantissa !== 0) digits++;
        scale--;
        c = t[++i];
      }
    }
    let exact = true;
    if (c === 0x65 || c === 0x45) {
      c = t[++i];
      let sign = 1;
      if (c === MINUS || c === PLUS) {
        sign = c === MINUS ? -1 : 1;
        c = t[++i];
      }
      if (!(c >= ZERO && c <= NINE)) throw OFF_PATH;
      let exponent = 0;
      while (c >= ZERO && c <= NINE) {
        exponent = exponent * 10 + (c - ZERO);
        if (exponent > 400) exact = false;
        c = t[++i];
      }
      scale += sign * exponent;
    }
    this.pos = i;
    if (exact && digits <= MAX_EXACT_DIGITS && scale >= -22 && scale <= 22) {
      // Clinger's fast path: both operands exact, so one correctly rounded operation.
      const magnitude = scale >= 0 ? mantissa * EXACT_POWERS[scale]! : mantissa / EXACT_POWERS[-scale]!;
      return negative ? -magnitude : magnitude;
    }
    return Number(t.toString('latin1', start, i));
  }

  /** True when the next thing is the string `"word"`, which is then consumed. */
  word(word: Uint8Array): boolean {
    this.ws();
    const b = this.bytes;
    const p = this.pos;
    if (b[p] !== QUOTE || b[p + word.length + 1] !== QUOTE) return false;
    for (let i = 0; i < word.length; i++) if (b[p + 1 + i] !== word[i]) return false;
    this.pos = p + word.length + 2;
    return true;
  }

  timestamp(): number {
    this.ws();
    let micros: number | undefined;
    if (this.bytes[this.pos] === QUOTE) {
      if (this.kind === 'number') throw OFF_PATH;
      this.kind = 'iso';
      const [start, end] = this.stringBounds();
      micros = parseIsoTimestamp(this.bytes, start, end);
    } else {
      if (this.kind === 'iso') throw OFF_PATH;
      this.kind = 'number';
      micros = epochSecondsToMicros(this.number());
    }
    if (micros === undefined) throw OFF_PATH;
    return micros;
  }

  /** `{"timestamp": t, "value": v}` with the two keys in either order. */
  measure(): void {
    this.expect(OPEN_BRACE);
    let timestamp: number;
    let value: number;
    if (this.word(TIMESTAMP)) {
      this.expect(COLON);
      timestamp = this.timestamp();
      this.expect(COMMA);
      if (!this.word(VALUE)) throw OFF_PATH;
      this.expect(COLON);
      value = this.number();
    } else if (this.word(VALUE)) {
      this.expect(COLON);
      value = this.number();
      this.expect(COMMA);
      if (!this.word(TIMESTAMP)) throw OFF_PATH;
      this.expect(COLON);
      timestamp = this.timestamp();
    } else {
      throw OFF_PATH;
    }
    this.expect(CLOSE_BRACE);
    this.points.push(timestamp, value);
  }

  list(): DecodedMeasures {
    this.expect(OPEN_BRACKET);
    const from = this.points.n;
    this.kind = undefined;
    if (!this.accept(CLOSE_BRACKET)) {
      do this.measure();
      while (this.accept(COMMA));
      this.expect(CLOSE_BRACKET);
    }
    return this.points.range(from, this.points.n);
  }
}

function scan<T>(bytes: Buffer, read: (s: Scanner) => T): T | null {
  const s = new Scanner(bytes);
  try {
    const result = read(s);
    s.end();
    return result;
  } catch (err) {
    if (err === OFF_PATH) return null;
    throw err;
  }
}

/** A measure list body, or null to take the general path. */
export function scanMeasureList(bytes: Buffer): DecodedMeasures | null {
  return scan(bytes, (s) => s.list());
}

/** A batch body's lists in body order, each with its key as written. */
export interface ScannedBatch {
  keys: string[];
  lists: DecodedMeasures[];
}

/**
 * A batch body, or null to take the general path. A repeated key is kept
 * twice: JSON.parse would keep the last list at the first one's place, so a
 * caller must step aside on one (which it finds anyway in indexing lists by
 * metric; a Map by key here cost more than the rest of the scan).
 */
export function scanMeasureBatch(bytes: Buffer): ScannedBatch | null {
  return scan(bytes, (s) => {
    const batch: ScannedBatch = { keys: [], lists: [] };
    s.expect(OPEN_BRACE);
    if (s.accept(CLOSE_BRACE)) return batch;
    do {
      batch.keys.push(s.string());
      s.expect(COLON);
      batch.lists.push(s.list());
    } while (s.accept(COMMA));
    s.expect(CLOSE_BRACE);
    return batch;
  });
}
