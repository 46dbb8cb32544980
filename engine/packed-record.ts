/**
 * Incoming records as a processing thread keeps them (record-cache.ts):
 * their points alone, since processing reads a metric's points by the
 * offset its entry has in the record and never its id. A collector's push
 * names 10,000 metrics with a point or a few each, and every batch of 256
 * of them needs its points from every pending push: the more pushes fit in
 * the cache's bytes, the fewer are read and checked again per batch.
 *
 * Packed bytes start with their form (u32, little-endian like the rest):
 *
 *   ENTRIES  any record: u32 entry count n, per entry the u32 offset its
 *            timestamps have in the record, per entry where its points are
 *            in the packed bytes, then every entry's timestamps and values
 *            as the record holds them (8 bytes of offsets an entry).
 *   UNIFORM  every entry has the same id length and point count c, so its
 *            offset is arithmetic: u32 n, u32 the first entry's offset,
 *            u32 the distance between entries, u32 c, then per entry its c
 *            timestamps and c values.
 *   SHARED   UNIFORM, and every entry has the same timestamps (a collector
 *            writes one time for all its series: a time-major push's 10,000
 *            metrics share one): the same header, the c timestamps once,
 *            then per entry its c values. ~8 bytes a point: a third of
 *            ENTRIES for a time-major push.
 *
 * Points are copied as 32-bit words, so their bits (NaN payloads, -0) are
 * kept as the record has them.
 */
import type { Series } from './aggregation.js';

const ENTRIES = 0;
const UNIFORM = 1;
const SHARED = 2;
/** Bytes before the points of UNIFORM and SHARED. */
const HEADER = 20;

interface Layout {
  form: typeof ENTRIES | typeof UNIFORM | typeof SHARED;
  entries: number;
  /** Points of all entries. */
  points: number;
  /** UNIFORM and SHARED: the first entry's timestamps' offset, the distance between entries, their point count. */
  first: number;
  stride: number;
  count: number;
}

function layoutOf(record: Uint8Array): Layout {
  const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
  const n = view.getUint32(0, true);
  const idLength = n > 0 ? record[4]! : 0;
  const count = n > 0 ? view.getUint32(5 + idLength, true) : 0;
  let uniform = n > 0;
  let points = 0;
  for (let i = 0, offset = 4; i < n; i++) {
    const length = record[offset]!;
    const c = view.getUint32(offset + 1 + length, true);
    if (length !== idLength || c !== count) uniform = false;
    points += c;
    offset += 1 + length + 4 + 16 * c;
  }
  if (!uniform) return { form: ENTRIES, entries: n, points, first: 0, stride: 0, count: 0 };
  const first = 4 + 1 + idLength + 4;
  const stride = 1 + idLength + 4 + 16 * count;
  const form = sameTimestamps(view, n, first, stride, 8 * count) ? SHARED : UNIFORM;
  return { form, entries: n, points, first, stride, count };
}

/** Whether the `bytes` at `first + i * stride` are the same bits for every entry i. */
function sameTimestamps(view: DataView, n: number, first: number, stride: number, bytes: number): boolean {
  for (let i = 1; i < n; i++) {
    const at = first + i * stride;
    for (let b = 0; b < bytes; b += 4) if (view.getUint32(at + b, true) !== view.getUint32(first + b, true)) return false;
  }
  return true;
}

function sizeOf({ form, entries, points, count }: Layout): number {
  if (form === ENTRIES) return 8 + 8 * entries + 16 * points;
  return form === UNIFORM ? HEADER + 16 * points : HEADER + 8 * count + 8 * points;
}

/** `record` packed: its packed bytes' length, and `write`, which puts them at the start of `into`. */
export interface PackedRecord {
  readonly length: number;
  write(into: Uint8Array): void;
}

/**
 * `record` packed, its layout found once: the walk over its entries (and
 * their timestamps, to find them shared) was made once for the size and
 * again to write. 300 time-major pushes of 10,000 metrics packed in 68 ms
 * rather than 101 in one process; on the processing thread, where the
 * first walk meets the bytes just read, the second was ~20 ms of ~500.
 */
export function packRecordPoints(record: Uint8Array): PackedRecord {
  const layout = layoutOf(record);
  return { length: sizeOf(layout), write: (into) => writePacked(record, layout, into) };
}

function writePacked(record: Uint8Array, layout: Layout, into: Uint8Array): void {
  const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
  const out = new DataView(into.buffer, into.byteOffset, into.byteLength);
  const { form, entries: n, first, stride, count } = layout;
  out.setUint32(0, form, true);
  out.setUint32(4, n, true);
  if (form === ENTRIES) {
    let at = 8 + 8 * n;
    for (let i = 0, offset = 4; i < n; i++) {
      offset += 1 + record[offset]!;
      const bytes = 16 * view.getUint32(offset, true);
      offset += 4;
      out.setUint32(8 + 4 * i, offset, true);
      out.setUint32(8 + 4 * (n + i), at, true);
      copyWords(view, offset, out, at, bytes);
      at += bytes;
      offset += bytes;
    }
    return;
  }
  out.setUint32(8, first, true);
  out.setUint32(12, stride, true);
  out.setUint32(16, count, true);
  if (form === UNIFORM) {
    for (let i = 0; i < n; i++) copyWords(view, first + i * stride, out, HEADER + 16 * count * i, 16 * count);
    return;
  }
  copyWords(view, first, out, HEADER, 8 * count);
  for (let i = 0; i < n; i++) copyWords(view, first + i * stride + 8 * count, out, HEADER + 8 * count * (1 + i), 8 * count);
}

/** Word by word: an entry's point or few per push, where a subarray to copy from costs more. */
function copyWords(from: DataView, at: number, to: DataView, into: number, bytes: number): void {
  for (let b = 0; b < bytes; b += 4) to.setUint32(into + b, from.getUint32(at + b, true), true);
}

/** How RecordPoints reads its bytes: as the log holds the record, or packed in one of the forms. */
const RAW = -1;

/**
 * Reads metrics' points out of one record at a time, given as the log
 * holds it or packed, by the offset its entries give in the record. One
 * reader serves a batch's records in turn: one view per record, shared by
 * its metrics.
 */
export class RecordPoints {
  private view: DataView = new DataView(new ArrayBuffer(0));
  private form = RAW;
  private entries = 0;
  private first = 0;
  private stride = 0;
  private count = 0;

  /** Reads `bytes` from now on; valid as long as they are. */
  of(bytes: Uint8Array, packed: boolean): this {
    const view = (this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    this.form = packed ? view.getUint32(0, true) : RAW;
    this.entries = packed ? view.getUint32(4, true) : 0;
    if (this.form === UNIFORM || this.form === SHARED) {
      this.first = view.getUint32(8, true);
      this.stride = view.getUint32(12, true);
      this.count = view.getUint32(16, true);
    }
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
    let ts: number;
    let vs: number;
    switch (this.form) {
      case RAW:
        ts = offset;
        vs = offset + 8 * count;
        break;
      case ENTRIES:
        ts = this.startOf(offset);
        vs = ts + 8 * count;
        break;
      case UNIFORM:
        ts = HEADER + 16 * count * this.entryAt(offset, count);
        vs = ts + 8 * count;
        break;
      default:
        ts = HEADER;
        vs = HEADER + 8 * count * (1 + this.entryAt(offset, count));
    }
    for (let k = 0; k < count; k++) {
      timestamps[at + k] = view.getFloat64(ts + 8 * k, true);
      values[at + k] = view.getFloat64(vs + 8 * k, true);
    }
    return at + count;
  }

  /** UNIFORM and SHARED: the entry whose `count` timestamps are at `offset` of the record. */
  private entryAt(offset: number, count: number): number {
    const i = (offset - this.first) / this.stride;
    if (!(Number.isInteger(i) && i >= 0 && i < this.entries && count === this.count)) throw new RangeError(`No entry of the record at offset ${offset}`);
    return i;
  }

  /** ENTRIES: where the entry at `offset` of the record has its points in the packed bytes. */
  private startOf(offset: number): number {
    const n = this.entries;
    const first = this.offsetAt(0);
    const last = this.offsetAt(n - 1);
    // Entries of a size mostly: the guess is the entry.
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
    return this.view.getUint32(8 + 4 * (n + i), true);
  }

  /** ENTRIES: the record offset of entry i's timestamps. */
  private offsetAt(i: number): number {
    return this.view.getUint32(8 + 4 * i, true);
  }
}
