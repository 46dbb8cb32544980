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

/** A float as Python prints it: integral values keep a `.0`. */
export function pyFloat(v: number): string {
  return Number.isInteger(v) && Math.abs(v) < 1e16 ? `${v}.0` : pyNumber(v);
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
