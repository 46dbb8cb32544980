/**
 * Accepted measures wait for processing as one record per push: the push's
 * series of every metric, back to back. One record instead of one per
 * metric keeps a collector's push of 10,000 metrics to a single LMDB put that
 * appends at the end of the key space, instead of 10,000 puts rewriting
 * pages all over it. A metric's share is found again by its offset.
 *
 * Layout: u32 entry count, then per entry: u8 id length, the id (latin1),
 * u32 point count n, n float64 timestamps, n float64 values (little-endian).
 *
 * A push's points come in, and its entries go out, as columns rather than
 * an object per metric: a collector push names 10,000 metrics, several are
 * in flight, and objects alive across the append's await are promoted to
 * the old generation, which then grows to a multiple of them.
 */
import type { Series } from './aggregation.js';

/**
 * The points of a push: metric i's are [start[i], start[i] + count[i]) of
 * `timestamps` and `values`, either one pair of columns for every metric
 * (a collector write's) or a pair per metric (the JSON routes' series).
 * One pair is given as itself, not as an array repeating it: a push lives
 * across the append's await, and an array per metric of a 10,000-metric
 * push is promoted to the old generation.
 */
export interface IncomingPoints {
  metricIds: string[];
  start: Uint32Array;
  count: Uint32Array;
  timestamps: Float64Array | Float64Array[];
  values: Float64Array | Float64Array[];
}

/**
 * The metrics of a record, entry i: its id, the byte offset of its
 * timestamps, its point count, and the earliest and the latest of them
 * (engine/reorder-window.ts).
 */
export interface IncomingEntries {
  metricIds: string[];
  offsets: Uint32Array;
  counts: Uint32Array;
  oldest: Float64Array;
  newest: Float64Array;
}

function allocEntries(n: number, metricIds = new Array<string>(n)): IncomingEntries {
  return { metricIds, offsets: new Uint32Array(n), counts: new Uint32Array(n), oldest: new Float64Array(n), newest: new Float64Array(n) };
}

/** A push given as a series per metric (the JSON routes), without copying them. */
export function incomingPoints(batches: Map<string, Series>): IncomingPoints {
  const series = [...batches.values()];
  return {
    metricIds: [...batches.keys()],
    start: new Uint32Array(series.length),
    count: Uint32Array.from(series, (s) => s.timestamps.length),
    timestamps: series.map((s) => s.timestamps),
    values: series.map((s) => s.values),
  };
}

export function encodeIncomingBatch(batches: Map<string, Series>): { bytes: Buffer; entries: IncomingEntries } {
  return encodeIncomingPoints(incomingPoints(batches));
}

/**
 * The record of the metrics `which` (indices into `points`; all by
 * default). The entries of all the metrics share the points' array of ids:
 * the caller must leave it as it is.
 */
export function encodeIncomingPoints(points: IncomingPoints, which?: readonly number[]): { bytes: Buffer; entries: IncomingEntries } {
  const n = which?.length ?? points.metricIds.length;
  const { metricIds, start, count, timestamps, values } = points;
  const shared = !Array.isArray(timestamps);
  // Every metric: the ids as given, rather than a copy of 10,000 for a collector's push.
  const entries = allocEntries(n, which === undefined ? metricIds : undefined);
  const same = which === undefined && sameLayout(metricIds, count);
  let bytes: Buffer;
  if (same) {
    // The ids and counts of the last record, in one copy: neither an id's characters nor its length read.
    bytes = Buffer.allocUnsafe(lastLayout!.bytes.length);
    lastLayout!.bytes.copy(bytes);
    entries.offsets.set(lastLayout!.offsets);
  } else {
    let size = 4;
    for (let k = 0; k < n; k++) {
      const i = which === undefined ? k : which[k]!;
      size += 1 + metricIds[i]!.length + 4 + 16 * count[i]!;
    }
    bytes = Buffer.allocUnsafe(size);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  view.setUint32(0, n, true);
  let offset = 4;
  for (let k = 0; k < n; k++) {
    const i = which === undefined ? k : which[k]!;
    const from = start[i]!;
    const to = from + count[i]!;
    if (same) {
      offset = entries.offsets[k]!;
    } else {
      const metricId = metricIds[i]!;
      const idLength = metricId.length;
      if (idLength > 255) throw new RangeError(`Metric id too long: ${metricId}`);
      bytes[offset] = idLength;
      // As latin1: a UUID's 36 characters cost less copied here than a Buffer.write call each.
      for (let c = 0; c < idLength; c++) bytes[offset + 1 + c] = metricId.charCodeAt(c);
      view.setUint32(offset + 1 + idLength, to - from, true);
      offset += 1 + idLength + 4;
      if (which !== undefined) entries.metricIds[k] = metricId;
      entries.offsets[k] = offset;
    }
    const ts = shared ? timestamps : timestamps[i]!;
    const vs = shared ? (values as Float64Array) : (values as Float64Array[])[i]!;
    entries.counts[k] = to - from;
    let oldest = Infinity;
    let newest = -Infinity;
    for (let p = from; p < to; p++) {
      const t = ts[p]!;
      if (t < oldest) oldest = t;
      if (t > newest) newest = t;
      view.setFloat64(offset, t, true);
      offset += 8;
    }
    for (let p = from; p < to; p++, offset += 8) view.setFloat64(offset, vs[p]!, true);
    entries.oldest[k] = oldest;
    entries.newest[k] = newest;
  }
  if (which === undefined) lastLayout = bytes.length <= MAX_LAYOUT_BYTES ? { metricIds, count, offsets: entries.offsets, bytes } : undefined;
  return { bytes, entries };
}

/**
 * The last record encoded of every metric of a push, its ids, point counts
 * and each metric's offset: a collector pushes the same metrics in the same
 * order, so the next record's ids and counts are mostly these bytes again.
 * Nothing changes a record's bytes, ids, counts or offsets once encoded.
 */
let lastLayout: { metricIds: readonly string[]; count: Uint32Array; offsets: Uint32Array; bytes: Buffer } | undefined;

/** Largest record kept as lastLayout: a huge push's would stay in memory until the next (4 MiB: ~70,000 metrics of a point). */
const MAX_LAYOUT_BYTES = 4 << 20;

/** Whether a push of every metric has the ids and counts of the last record encoded. */
function sameLayout(metricIds: readonly string[], count: Uint32Array): boolean {
  const last = lastLayout;
  if (last === undefined || last.metricIds.length !== metricIds.length) return false;
  for (let k = 0; k < metricIds.length; k++) {
    // The same id object mostly (a metric's record holds it): compared without reading its characters.
    if (last.metricIds[k] !== metricIds[k] || last.count[k] !== count[k]) return false;
  }
  return true;
}

/** The entries of a record, without copying their points (recovery after a restart). */
export function incomingEntries(bytes: Uint8Array): IncomingEntries {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const entries = allocEntries(view.getUint32(0, true));
  let offset = 4;
  for (let i = 0; i < entries.metricIds.length; i++) {
    const idLength = bytes[offset]!;
    entries.metricIds[i] = Buffer.from(bytes.buffer, bytes.byteOffset + offset + 1, idLength).toString('latin1');
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
    entries.offsets[i] = offset;
    entries.counts[i] = count;
    entries.oldest[i] = oldest;
    entries.newest[i] = newest;
    offset += 16 * count;
  }
  return entries;
}

/** The entries whose metric `keep` accepts. */
export function filterEntries(entries: IncomingEntries, keep: (metricId: string) => boolean): IncomingEntries {
  const kept: number[] = [];
  entries.metricIds.forEach((id, i) => {
    if (keep(id)) kept.push(i);
  });
  const out = allocEntries(kept.length);
  kept.forEach((i, k) => {
    out.metricIds[k] = entries.metricIds[i]!;
    out.offsets[k] = entries.offsets[i]!;
    out.counts[k] = entries.counts[i]!;
    out.oldest[k] = entries.oldest[i]!;
    out.newest[k] = entries.newest[i]!;
  });
  return out;
}

