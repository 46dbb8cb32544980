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

// A decimal of at most six places that reads back as v is the shortest text
// that does, the one pyFloat prints, while no two such decimals read back as
// the same double: while the doubles around v are closer together than
// 10^-6, i.e. while v * 10^6 < 2^52. Scaled values stay below this bound,
// with room to spare.
const FAST_LIMIT = 1e14;

/**
 * `pyFloat(v)` as ASCII at `pos`; returns the position after it. Values with
 * at most six decimals, as measures mostly are, are written from integer
 * arithmetic without building the string: one division tells whether v is
 * one, its whole part and its six decimals (trailing zeros dropped) are then
 * integers to write.
 */
export function writePyFloat(buf: Uint8Array, pos: number, v: number): number {
  const magnitude = Math.abs(v);
  const millionths = Math.round(magnitude * 1e6);
  // Zeros (-0.0 keeps its sign), exponent notation and longer decimals: pyFloat's text.
  if (!(magnitude >= 1e-4 && millionths < FAST_LIMIT) || millionths / 1e6 !== magnitude) return writeAscii(buf, pos, pyFloat(v));
  if (v < 0) buf[pos++] = 0x2d;
  // Exact: a decimal of six places is 10^-6 or more from the next integer, far more than the doubles' spacing.
  const whole = Math.floor(magnitude);
  const width = digitCount(whole);
  writeDigits(buf, pos + width, whole, width);
  pos += width;
  buf[pos++] = 0x2e;
  let decimals = (millionths - whole * 1e6) | 0;
  if (decimals === 0) {
    buf[pos] = 0x30;
    return pos + 1;
  }
  let places = 6;
  while (decimals % 10 === 0) {
    decimals = (decimals / 10) | 0;
    places--;
  }
  writeDigits(buf, pos + places, decimals, places);
  return pos + places;
}

/**
 * A value Gnocchi holds as a Python object whose `repr()` differs from its
 * JSON (a UUID, a set): its error pages show `repr`, its JSON answers `json`.
 */
export class PyValue {
  constructor(
    readonly json: unknown,
    readonly repr: string,
  ) {}

  toJSON(): unknown {
    return this.json;
  }
}

/** A uuid.UUID: `UUID('...')` in reprs. */
export const pyUuid = (id: string): PyValue => new PyValue(id, `UUID('${id}')`);

/** A set of strings, listed (in this order) as JSON, `{'a', 'b'}` in reprs. */
export const pySet = (items: readonly string[]): PyValue =>
  new PyValue([...items], items.length === 0 ? 'set()' : `{${items.map(pyStr).join(', ')}}`);

export function pyJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value instanceof PyValue) return pyJson(value.json);
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
  if (value instanceof PyValue) return value.repr;
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
