/**
 * Decoding pushed measures (`[{timestamp, value}, ...]`) into typed arrays,
 * with Gnocchi's rules: the first timestamp decides whether the whole list is
 * epoch numbers or date strings, and values are read as Python's `float()`.
 */
import { parsePythonFloat } from './duration.js';
import { FormatError } from './errors.js';
import { parseTimestamp } from './timestamp.js';

export interface DecodedMeasures {
  timestamps: Float64Array;
  values: Float64Array;
}

/** Which of Gnocchi's messages a bad measure list gets. */
export class MeasuresError extends FormatError {}

function isEpoch(v: unknown): boolean {
  return typeof v === 'number' || (typeof v === 'string' && parsePythonFloat(v) !== undefined);
}

function toFloat(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') return parsePythonFloat(v);
  return undefined;
}

export function decodeMeasures(body: unknown, nowMicros: number = Date.now() * 1000): DecodedMeasures {
  if (!Array.isArray(body)) throw new MeasuresError('unexpected measures format');
  const n = body.length;
  const timestamps = new Float64Array(n);
  const values = new Float64Array(n);
  for (const m of body) {
    if (typeof m !== 'object' || m === null || Array.isArray(m) || !('timestamp' in m)) {
      throw new MeasuresError('unexpected measures format');
    }
  }
  const epochs = n > 0 && isEpoch((body[0] as { timestamp: unknown }).timestamp);
  for (let i = 0; i < n; i++) {
    const ts = (body[i] as { timestamp: unknown }).timestamp;
    try {
      if (isEpoch(ts) !== epochs) throw new FormatError('Unable to convert timestamps');
      timestamps[i] = parseTimestamp(ts, nowMicros);
    } catch (err) {
      if (err instanceof FormatError) throw new MeasuresError(`unexpected timestamp '${err.message}'`);
      throw err;
    }
  }
  for (let i = 0; i < n; i++) {
    const v = toFloat((body[i] as { value: unknown }).value);
    if (v === undefined) throw new MeasuresError('unexpected measures value');
    values[i] = v;
  }
  return { timestamps, values };
}
