import { digitCount, writeAscii, writeDigits } from './ascii.js';

/**
 * JSON text as Python's `json.dumps` writes it with its default separators
 * (`", "` and `": "`), which Gnocchi clients and tests match on literally.
 * Non-ASCII characters are kept as UTF-8; NaN and infinities are written as
 * the `NaN`/`Infinity` tokens Python emits.
 */
export function pyNumber(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
  return String(v);
}

/**
 * A float as Python's `repr` prints it: the shortest digits that read back
 * (as JavaScript's), in decimal notation from 1e-4 up to 1e16 with `.0` on
 * integral values, otherwise in exponent notation with at least two
 * exponent digits (`1e+16`, `1.5e-07`), and the sign of -0.0 kept.
 */
export function pyFloat(v: number): string {
  if (!Number.isFinite(v)) return pyNumber(v);
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  const magnitude = Math.abs(v);
  if (magnitude < 1e-4 || magnitude >= 1e16) {
    const [mantissa, exponent] = v.toExponential().split('e') as [string, string];
    return `${mantissa}e${exponent[0]}${exponent.slice(1).padStart(2, '0')}`;
  }
  return Number.isInteger(v) ? `${v}.0` : String(v);
}

/** Longest `pyFloat` text: "-1.2345678901234567e-308" or "-0.00012345678901234567" is shorter still. */
export const MAX_PY_FLOAT_LENGTH = 25;

const FAST_DECIMALS = [1, 10, 100, 1e3, 1e4, 1e5, 1e6];
// A decimal of k places that reads back as v is the shortest one, the one
// pyFloat prints, when no other decimal of up to k + 1 places reads back as v
// too; that holds while the doubles around v are closer together than
// 10^-(k+1), i.e. while v * 10^(k+1) < 2^52. Scaled values stay below this
// bound, with room to spare.
const FAST_LIMIT = 1e14;

/**
 * `pyFloat(v)` as ASCII at `pos`; returns the position after it. Values with
 * at most six decimals, as measures mostly are, are written from integer
 * arithmetic without building the string.
 */
export function writePyFloat(buf: Uint8Array, pos: number, v: number): number {
  const magnitude = Math.abs(v);
  // Zeros (-0.0 keeps its sign) and exponent notation: pyFloat's text.
  if (!(magnitude >= 1e-4)) return writeAscii(buf, pos, pyFloat(v));
  // Any decimal of at most six places would show at a million times v: one
  // test turns away the values that are none (means, rates) without the loop.
  const millionths = Math.round(magnitude * 1e6);
  if (millionths < FAST_LIMIT && millionths / 1e6 !== magnitude) return writeAscii(buf, pos, pyFloat(v));
  for (let k = 0; k < FAST_DECIMALS.length; k++) {
    const scale = FAST_DECIMALS[k]!;
    const scaled = Math.round(magnitude * scale);
    if (!(scaled < FAST_LIMIT)) break;
    // Both operands are exact integers, so the division rounds the decimal
    // scaled/scale exactly as reading its text would.
    if (scaled / scale === magnitude) return writeDecimal(buf, pos, v < 0, scaled, k);
  }
  return writeAscii(buf, pos, pyFloat(v));
}

/** `scaled` / 10^decimals with its sign, and ".0" for an integer. */
function writeDecimal(buf: Uint8Array, pos: number, negative: boolean, scaled: number, decimals: number): number {
  if (negative) buf[pos++] = 0x2d;
  const scale = FAST_DECIMALS[decimals]!;
  const whole = Math.floor(scaled / scale);
  const width = digitCount(whole);
  writeDigits(buf, pos + width, whole, width);
  pos += width;
  buf[pos++] = 0x2e;
  if (decimals === 0) {
    buf[pos] = 0x30;
    return pos + 1;
  }
  writeDigits(buf, pos + decimals, scaled - whole * scale, decimals);
  return pos + decimals;
}

export function pyJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return pyNumber(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(value)) return `[${value.map(pyJson).join(', ')}]`;
      const parts: string[] = [];
      for (const [k, v] of Object.entries(value)) {
        if (v !== undefined) parts.push(`${JSON.stringify(k)}: ${pyJson(v)}`);
      }
      return `{${parts.join(', ')}}`;
    }
    default:
      return 'null';
  }
}

function pyStr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  const escaped = s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\t/g, '\\t');
  return quote + (quote === "'" ? escaped.replace(/'/g, "\\'") : escaped) + quote;
}

/** Python's `repr()` of JSON-like data, as Gnocchi's plain-text errors show dicts. */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  switch (typeof value) {
    case 'string':
      return pyStr(value);
    case 'number':
      return pyNumber(value);
    case 'boolean':
      return value ? 'True' : 'False';
    case 'object':
      if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
      return `{${Object.entries(value)
        .map(([k, v]) => `${pyStr(k)}: ${pyRepr(v)}`)
        .join(', ')}}`;
    default:
      return 'None';
  }
}
