/**
 * The numbers of a metric state (engine/metric-state.ts) in few bytes. Most
 * lie close to one the decoder already has (a timestamp to its split's key
 * or to the row before it, a value to the one before it) and are whole in
 * some unit (periods, seconds) or decimals of few places, as collected
 * points mostly are. Each is a varint whose low bits say how to read it,
 * with the double's eight bytes after a tag as the way out for any other,
 * so that every double comes back as it went in (-0 and NaN included).
 */
import { writeVaruint } from '../formats/varint.js';

/** Longest varint: 8 x 7 bits hold any count or tagged number below 2^53. */
export const MAX_LONG_BYTES = 8;

/** Bytes a number of this module takes at most: a tag byte and a double. */
export const MAX_NUMBER_BYTES = 9;

/**
 * Whole multiples below this, zigzagged and shifted past a tag of up to 3
 * bits, stay exact in a double.
 */
const MAX_WHOLE = 2 ** 47;

/**
 * Writes the non-negative integer `x` (below 2^53) as a varint at `at`; the
 * offset after it. The LEB128 of formats/varint.ts, read back by readLong
 * past that module's five bytes.
 */
export const writeLong: (out: Uint8Array, x: number, at: number) => number = writeVaruint;

/** Where the varint readLong last read ends: a second result without an object per read. */
let longEnd = 0;

/** The varint writeLong wrote at `at` of `bytes`. */
export function readLong(bytes: Uint8Array, at: number): number {
  let value = 0;
  let scale = 1;
  for (let i = at; i < at + MAX_LONG_BYTES; i++) {
    const b = bytes[i];
    if (b === undefined) throw new Error(`metric state: truncated varint at byte ${at}`);
    value += (b & 0x7f) * scale;
    if (b < 0x80) {
      longEnd = i + 1;
      return value;
    }
    scale *= 0x80;
  }
  throw new Error(`metric state: overlong varint at byte ${at}`);
}

const zigzag = (q: number): number => (q >= 0 ? 2 * q : -2 * q - 1);
const unzigzag = (z: number): number => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);

const enum OffsetTag {
  /** (x - base) / unit, whole. */
  Units = 0,
  /** x - base, whole. */
  Ones = 1,
  Double = 2,
}

/**
 * Writes `x` as its distance from `base`: in `unit`s when whole, else in
 * ones when whole (a timestamp off its grid), else as a double.
 */
export function writeOffset(out: Buffer, at: number, x: number, base: number, unit: number): number {
  const q = (x - base) / unit;
  if (Number.isInteger(q) && Math.abs(q) < MAX_WHOLE && Object.is(base + q * unit, x)) return writeLong(out, 4 * zigzag(q) + OffsetTag.Units, at);
  const d = x - base;
  if (Number.isInteger(d) && Math.abs(d) < MAX_WHOLE && Object.is(base + d, x)) return writeLong(out, 4 * zigzag(d) + OffsetTag.Ones, at);
  out[at] = OffsetTag.Double;
  return out.writeDoubleLE(x, at + 1);
}

// Literals rather than 10 ** d, so that encoder and decoder scale by the same exact doubles.
const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5];
const SAME = POW10.length;
/**
 * How far from a whole number, relative to it, a decimal of up to 5 places
 * times 10^5 may land: the product's rounding and the decimal's own (a
 * double holds it to 2^-53), with room to spare. Only a filter: a value
 * that passes is still checked exactly.
 */
const NEAR_WHOLE = 2 ** -48;
const DOUBLE = SAME + 1;

/** `v` as a whole number of 10^-d, or NaN when it is not one (-0 never is: it would come back as 0). */
function mantissa(v: number, d: number): number {
  const m = Math.round(v * POW10[d]!);
  return Math.abs(m) < MAX_WHOLE && m / POW10[d]! === v && (v !== 0 || 1 / v > 0) ? m : Number.NaN;
}

/**
 * Writes the value `v` against `base` (NaN: none): the same value in one
 * byte, else a decimal of up to 5 places as its mantissa's distance from
 * base's at that scale (base's own when base has none there), else as a
 * double.
 */
export function writeValue(out: Buffer, at: number, v: number, base: number): number {
  if (v === base && (v !== 0 || Object.is(v, base))) return writeLong(out, SAME, at);
  // A decimal of up to 5 places scaled by 10^5 lands within rounding of a whole number: most
  // others (a mean of many points, a std) are told apart by one product, not 6 tries.
  const scaled = v * POW10[POW10.length - 1]!;
  if (!(Math.abs(scaled - Math.round(scaled)) <= Math.abs(scaled) * NEAR_WHOLE)) return writeDouble(out, at, v);
  // The fewest places: one encoding per value, so that a state re-encodes to its very bytes (engine/check.ts).
  for (let d = 0; d < POW10.length; d++) {
    const m = mantissa(v, d);
    if (Number.isNaN(m)) continue;
    const b = mantissa(base, d);
    return writeLong(out, 8 * zigzag(Number.isNaN(b) ? m : m - b) + d, at);
  }
  return writeDouble(out, at, v);
}

function writeDouble(out: Buffer, at: number, v: number): number {
  out[at] = DOUBLE;
  return out.writeDoubleLE(v, at + 1);
}

/** Reads what this module wrote, from `at` on. */
export class NumberReader {
  constructor(
    private readonly bytes: Buffer,
    public at: number,
  ) {}

  long(): number {
    const value = readLong(this.bytes, this.at);
    this.at = longEnd;
    return value;
  }

  /** A double's eight bytes. */
  double(): number {
    const v = this.bytes.readDoubleLE(this.at);
    this.at += 8;
    return v;
  }

  offset(base: number, unit: number): number {
    const u = this.long();
    const tag = u % 4;
    if (tag === OffsetTag.Double) return this.double();
    const q = unzigzag((u - tag) / 4);
    return tag === OffsetTag.Units ? base + q * unit : base + q;
  }

  value(base: number): number {
    const u = this.long();
    const tag = u % 8;
    if (tag === SAME) return base;
    if (tag === DOUBLE) return this.double();
    const b = mantissa(base, tag);
    const m = unzigzag((u - tag) / 8);
    return (Number.isNaN(b) ? m : m + b) / POW10[tag]!;
  }
}
