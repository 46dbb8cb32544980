/**
 * Accepted measures wait for processing as one record per push: the push's
 * series of every metric, back to back. One record instead of one per
 * metric keeps a collector's push of 10,000 metrics to a single LMDB put that
 * appends at the end of the key space, instead of 10,000 puts rewriting
 * pages all over it. A metric's share is found again by its offset.
 *
 * Layout: u32 entry count, then per entry: u8 id length, the id (latin1),
 * u32 point count n, n float64 timestamps, n float64 values (little-endian).
 */
import type { Series } from './aggregation.js';

/** Where one metric's points of one push are. */
export interface IncomingRef {
  /** The record's key: pushes are numbered in commit order. */
  seq: number;
  /** Byte offset of the timestamps inside the record. */
  offset: number;
  count: number;
}

export interface IncomingEntry {
  metricId: string;
  offset: number;
  count: number;
  /** The earliest and the latest timestamp among the points (engine/reorder-window.ts). */
  oldest: number;
  newest: number;
}

export function encodeIncomingBatch(batches: Map<string, Series>): { bytes: Buffer; entries: IncomingEntry[] } {
  let size = 4;
  for (const [id, s] of batches) size += 1 + Buffer.byteLength(id, 'latin1') + 4 + 16 * s.timestamps.length;
  const bytes = Buffer.allocUnsafe(size);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  view.setUint32(0, batches.size, true);
  let offset = 4;
  const entries: IncomingEntry[] = [];
  for (const [metricId, { timestamps, values }] of batches) {
    const idLength = bytes.write(metricId, offset + 1, 'latin1');
    if (idLength > 255) throw new RangeError(`Metric id too long: ${metricId}`);
    bytes[offset] = idLength;
    offset += 1 + idLength;
    const count = timestamps.length;
    view.setUint32(offset, count, true);
    offset += 4;
    entries.push({ metricId, offset, count, ...span(timestamps) });
    offset = writeFloats(view, offset, timestamps);
    offset = writeFloats(view, offset, values);
  }
  return { bytes, entries };
}

function span(timestamps: Float64Array): { oldest: number; newest: number } {
  let oldest = Infinity;
  let newest = -Infinity;
  for (let i = 0; i < timestamps.length; i++) {
    const t = timestamps[i]!;
    if (t < oldest) oldest = t;
    if (t > newest) newest = t;
  }
  return { oldest, newest };
}

/**
 * Copies one by one: a collector's push has 10,000 series of a point or
 * two, for which two typed-array views per series (to copy in bulk) cost
 * more than the copy.
 */
function writeFloats(view: DataView, offset: number, floats: Float64Array): number {
  for (let i = 0; i < floats.length; i++) view.setFloat64(offset + 8 * i, floats[i]!, true);
  return offset + 8 * floats.length;
}

/** The entries of a record, without copying their points (recovery after a restart). */
export function incomingEntries(bytes: Uint8Array): IncomingEntry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const entries: IncomingEntry[] = [];
  let offset = 4;
  for (let i = view.getUint32(0, true); i > 0; i--) {
    const idLength = bytes[offset]!;
    const metricId = Buffer.from(bytes.buffer, bytes.byteOffset + offset + 1, idLength).toString('latin1');
    offset += 1 + idLength;
    const count = view.getUint32(offset, true);
    offset += 4;
    let oldest = Infinity;
    let newest = -Infinity;
    for (let k = 0; k < count; k++) {
      const t = view.getFloat64(offset + 8 * k, true);
      oldest = Math.min(oldest, t);
      newest = Math.max(newest, t);
    }
    entries.push({ metricId, offset, count, oldest, newest });
    offset += 16 * count;
  }
  return entries;
}

/**
 * Copies one metric's points of a record into `into` from `at` (LMDB
 * buffers are short-lived and unaligned); the position after them.
 */
export function copyIncomingSlice(bytes: Uint8Array, offset: number, count: number, into: Series, at: number): number {
  const bytesOf = (array: Float64Array) => new Uint8Array(array.buffer, array.byteOffset + 8 * at, 8 * count);
  bytesOf(into.timestamps).set(bytes.subarray(offset, offset + 8 * count));
  bytesOf(into.values).set(bytes.subarray(offset + 8 * count, offset + 16 * count));
  return at + count;
}
