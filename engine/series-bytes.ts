/**
 * Plain (timestamp, value) series as bytes: n timestamps then n values,
 * little-endian float64. Used for incoming measures and the raw tail, which
 * are short-lived and rewritten often, so they are not compressed.
 */
import type { Series } from './aggregation.js';

export function encodeSeries(timestamps: Float64Array, values: Float64Array): Buffer {
  const n = timestamps.length;
  const out = Buffer.allocUnsafe(16 * n);
  out.set(new Uint8Array(timestamps.buffer, timestamps.byteOffset, 8 * n), 0);
  out.set(new Uint8Array(values.buffer, values.byteOffset, 8 * n), 8 * n);
  return out;
}

export function decodeSeries(bytes: Uint8Array): Series {
  const n = bytes.length >>> 4;
  const timestamps = new Float64Array(n);
  const values = new Float64Array(n);
  new Uint8Array(timestamps.buffer).set(bytes.subarray(0, 8 * n));
  new Uint8Array(values.buffer).set(bytes.subarray(8 * n, 16 * n));
  return { timestamps, values };
}
