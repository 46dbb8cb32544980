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

/**
 * Bytes of a record's points alone, as packRecordPoints writes them: u32
 * entry count, then per entry the u32 offset its timestamps have in the
 * record, then per entry where they are in the packed bytes, then every
 * entry's timestamps and values as the record holds them. A processing
 * thread keeps records to read each metric's points a batch at a time
 * (record-cache.ts): the ids are ~70% of a time-major record (a text UUID
 * per point), so packed, ~3 times as many pushes fit in the same bytes.
 */
export function packedRecordSize(record: Uint8Array): number {
  const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
  const n = view.getUint32(0, true);
  let points = 0;
  for (let i = 0, offset = 4; i < n; i++) {
    const idLength = record[offset]!;
    const count = view.getUint32(offset + 1 + idLength, true);
    points += 16 * count;
    offset += 1 + idLength + 4 + 16 * count;
  }
  return 4 + 8 * n + points;
}

/** Packs `record` into the first packedRecordSize(record) bytes of `into`. */
export function packRecordPoints(record: Uint8Array, into: Uint8Array): void {
  const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
  const out = new DataView(into.buffer, into.byteOffset, into.byteLength);
  const n = view.getUint32(0, true);
  out.setUint32(0, n, true);
  let at = 4 + 8 * n;
  for (let i = 0, offset = 4; i < n; i++) {
    offset += 1 + record[offset]!;
    const bytes = 16 * view.getUint32(offset, true);
    offset += 4;
    out.setUint32(4 + 4 * i, offset, true);
    out.setUint32(4 + 4 * (n + i), at, true);
    // Word by word (the bits as they are, NaN payloads included): a metric's point or few per push, where a subarray to copy from costs more.
    for (let b = 0; b < bytes; b += 4) out.setUint32(at + b, view.getUint32(offset + b, true), true);
    at += bytes;
    offset += bytes;
  }
}

/**
 * Reads metrics' points out of one record at a time, given as the log
 * holds it or packed (packRecordPoints), by the offset its entries give in
 * the record. One reader serves a batch's records in turn: one view per
 * record, shared by its metrics.
 */
export class RecordPoints {
  private view: DataView = new DataView(new ArrayBuffer(0));
  private packed = false;
  private entries = 0;

  /** Reads `bytes` from now on; valid as long as they are. */
  of(bytes: Uint8Array, packed: boolean): this {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.packed = packed;
    this.entries = packed ? this.view.getUint32(0, true) : 0;
    return this;
  }

  /**
   * Copies the `count` points whose timestamps are at `offset` of the record
   * into `into` from `at` (LMDB buffers are short-lived and unaligned); the
   * position after them. Value by value: a metric has a point or a few per
   * push, and byte views of `into` would first move each small array's
   * memory off the heap.
   */
  copy(offset: number, count: number, into: Series, at: number): number {
    const { timestamps, values } = into;
    const view = this.view;
    const start = this.packed ? this.startOf(offset) : offset;
    for (let k = 0; k < count; k++) {
      timestamps[at + k] = view.getFloat64(start + 8 * k, true);
      values[at + k] = view.getFloat64(start + 8 * (count + k), true);
    }
    return at + count;
  }

  /** Where the entry at `offset` of the record has its points in the packed bytes. */
  private startOf(offset: number): number {
    const n = this.entries;
    const first = this.offsetAt(0);
    const last = this.offsetAt(n - 1);
    // A collector's push gives every metric the same points: entries the same size, so the guess is the entry.
    let i = last > first ? Math.round(((offset - first) * (n - 1)) / (last - first)) : 0;
    if (!(i >= 0 && i < n && this.offsetAt(i) === offset)) {
      let lo = 0;
      let hi = n - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (this.offsetAt(mid) < offset) lo = mid + 1;
        else hi = mid;
      }
      if (this.offsetAt(lo) !== offset) throw new RangeError(`No entry of the record at offset ${offset}`);
      i = lo;
    }
    return this.view.getUint32(4 + 4 * (n + i), true);
  }

  /** The record offset of entry i's timestamps. */
  private offsetAt(i: number): number {
    return this.view.getUint32(4 + 4 * i, true);
  }
}
