/**
 * Everything processing rewrites for a metric, in one record so an update
 * costs one read and one write: the raw back-window tail, and per
 * granularity the open split (the newest one, still receiving points, kept
 * in the raw split form and carried as bytes: processing appends to it
 * without decoding it) and the key of the oldest sealed split (so retention only scans the
 * split store when something actually expires). Only the newest rows of
 * the tail and of each open split are inline; older ones are frozen into
 * chunk records (engine/state-chunks.ts), so an update rewrites a bounded
 * number of bytes whatever the sizes of the tail and of the splits.
 */
import { readVaruint } from '../formats/varint.js';
import type { Series } from './aggregation.js';
import { freshFloat64, type Float64Alloc } from './scratch.js';
import { POINTS_PER_SPLIT, putFloats, rawCell, rawColumnCount, rawRowCount } from './split.js';
import { MAX_LONG_BYTES, MAX_NUMBER_BYTES, NumberReader, readLong, writeLong, writeOffset, writeValue } from './state-numbers.js';
import { readStateRows, stateRowsBound, writeStateRows } from './state-rows.js';

export interface OpenSplit {
  key: number;
  /** The split's newest rows, in the raw form of `encodeRawSplit`. */
  raw: Uint8Array;
  /** How many chunk records hold its older rows. */
  frozen: number;
  /**
   * The first timestamp (key) of the newest of them, which a freeze grows:
   * a get rather than a range read. Undefined without chunk records, and
   * in states written before version 5.
   */
  newest?: number | undefined;
  /**
   * A small chunk kept in the state instead of a record of its own: the
   * older rows of a settled quiet metric (engine/state-chunks.ts). Only
   * while `frozen` is 0.
   */
  inline?: InlineChunk | undefined;
}

/** A chunk inside the state: what a chunk record would hold, and its key's first timestamp. */
export interface InlineChunk {
  first: number;
  bytes: Uint8Array;
}

export interface GranularityState {
  granularity: number;
  open: OpenSplit | null;
  oldestSealedKey: number | null;
}

export interface MetricState {
  /** The raw back-window points, or their newest ones when `tailFrozen` chunks hold the older. */
  tail: Series;
  tailFrozen: number;
  granularities: GranularityState[];
  /**
   * The newest incoming record (engine/incoming-batch.ts) whose points for
   * this metric are in this state: records at or below it are consumed.
   */
  lastSeq: number;
}

/**
 * Version 1 (before incoming records were shared by metrics) had no
 * `lastSeq`; versions 1 and 2 had no frozen chunks (read as 0): version 3
 * added the tail's chunk count to the header and the open split's to each
 * granularity's. Those headers are fixed: 8, 16 or 20 bytes, and 28 or 32
 * per granularity. Version 4 (format 7) writes what a quiet metric's state
 * mostly is, headers, in fewer bytes, and may hold an inline chunk:
 *
 *   version, granularity count, column count, 0 (1 byte each)
 *   lastSeq (float64), tail points n, tail chunks (varints)
 *   tail timestamps, tail values (8n bytes each)
 *   per granularity: granularity (float64), flags (1 byte: open split,
 *     oldest sealed key, inline chunk), then as flagged: the open split's
 *     key (float64), the oldest sealed key (float64), the open split's raw
 *     length and chunk count (varints), the inline chunk's length (varint)
 *     and first timestamp (float64); then the raw rows and the inline chunk
 *
 * A quiet metric's state (one point of tail, an open split with an inline
 * chunk): 14 + 16 + 28 bytes of header, tail and granularity header, where
 * version 3 took 20 + 16 + 32 without the inline chunk's.
 *
 * Version 5 (format 9) writes its numbers as varints against ones the
 * decoder already has (engine/state-numbers.ts), the open split's raw rows
 * in the form of engine/state-rows.ts, and keeps the key of the open
 * split's newest chunk record:
 *
 *   version, granularity count, column count (1 byte each)
 *   lastSeq, tail points n, tail chunks (varints)
 *   per granularity: flags (1 byte: open split, oldest sealed key, inline
 *     chunk, newest chunk key, raw rows), granularity (in seconds), then as
 *     flagged: the open split's key (in splits), the oldest sealed key (in
 *     splits from the open one's, or from 0), the open split's raw length
 *     (raw rows) or row count, and its chunk count (varints), the newest
 *     chunk's first timestamp (in periods from the key), the inline chunk's
 *     length (varint) and first timestamp (in periods from the key); then
 *     the rows, raw or in the compact form, and the inline chunk
 *   the tail: its one point's timestamp (in seconds from the first
 *     granularity's last raw row) and value (against that row's first
 *     value); several points as version 4 has them, timestamps then values
 *     (float64)
 *
 * The compact rows are for a settled metric's one row a granularity: a
 * metric receiving points rewrites up to CHUNK_ROWS (engine/state-chunks.ts)
 * on every update, which the compact form made slower to encode and decode
 * (15 rows of 6 methods: ~2.3 µs to encode instead of 0.4, 2.5 to decode
 * instead of 0.2), for bytes that last until its next freeze or settle;
 * they stay raw, and so does a tail of several points.
 *
 * The quiet metric of bench:footprint p60 (30 rows of one method, 29 in the
 * inline chunk): 152 bytes in version 4, 99 in version 5.
 */
export const METRIC_STATE_VERSION = 5;

/** Version 4's layout, still read. */
const COMPACT_VERSION = 4;

const enum Flag {
  Open = 1,
  OldestSealed = 2,
  Inline = 4,
  Newest = 8,
  /** The open split's rows in the raw form, as processing merges into them (several rows: a metric receiving points). */
  RawRows = 16,
}

/** Microseconds a second: the unit granularities and tail timestamps are written in. */
const SECOND = 1_000_000;

/** An empty tail's arrays, shared: with no element, nothing can be written to them. */
const NO_POINTS = new Float64Array(0);

/** A new metric's state: its empty tail's arrays shared (two of its own took ~0.4 us a state, 10,000 per time-major batch of new series). */
export function emptyMetricState(): MetricState {
  return { tail: { timestamps: NO_POINTS, values: NO_POINTS }, tailFrozen: 0, granularities: [], lastSeq: 0 };
}

function readCount(bytes: Uint8Array, at: number): { value: number; next: number } {
  const read = readVaruint(bytes, at);
  if (typeof read === 'string') throw new Error(`metric state: ${read} varint at byte ${at}`);
  return read;
}

/** The header: tail size, tail chunks and where the tail starts. */
interface Header {
  n: number;
  tailFrozen: number;
  tailAt: number;
}

function headerOf(bytes: Buffer): Header {
  switch (bytes[0]) {
    case 1:
      return { n: bytes.readUInt32LE(4), tailFrozen: 0, tailAt: 8 };
    case 2:
      return { n: bytes.readUInt32LE(4), tailFrozen: 0, tailAt: 16 };
    case 3:
      return { n: bytes.readUInt32LE(4), tailFrozen: bytes.readUInt32LE(16), tailAt: 20 };
    case 4: {
      const n = readCount(bytes, 12);
      const tailFrozen = readCount(bytes, n.next);
      return { n: n.value, tailFrozen: tailFrozen.value, tailAt: tailFrozen.next };
    }
    default:
      throw new Error(`Unknown metric state version ${bytes[0]}`);
  }
}

/** `lastSeq` alone, without decoding the rest. */
export function lastSeqOf(bytes: Buffer): number {
  switch (bytes[0]) {
    case 1:
      return 0;
    case 2:
    case 3:
      return bytes.readDoubleLE(8);
    case 4:
      return bytes.readDoubleLE(4);
    case 5:
      return readLong(bytes, 3);
    default:
      throw new Error(`Unknown metric state version ${bytes[0]}`);
  }
}

export function encodeMetricState(state: MetricState, columnCount: number): Buffer {
  const out = Buffer.allocUnsafe(metricStateBound(state));
  return out.subarray(0, writeMetricState(state, columnCount, out, 0));
}

/** Bytes the state takes encoded, at most (a bound without encoding it: asked before each write). */
export function metricStateBound(state: MetricState): number {
  let size = 3 + 3 * MAX_LONG_BYTES + 2 * MAX_NUMBER_BYTES * state.tail.timestamps.length;
  for (const { open } of state.granularities) {
    size += 1 + 3 * MAX_NUMBER_BYTES;
    if (open === null) continue;
    size += 3 * MAX_LONG_BYTES + 2 * MAX_NUMBER_BYTES + stateRowsBound(open.raw.length) + (open.inline?.bytes.length ?? 0);
  }
  return size;
}

/**
 * The timestamp and first value of the last raw row of the state's first
 * open split, which the tail's first point is written against (its one
 * point, in a quiet metric whose periods hold one point each: as often as
 * not the same value). Zero and NaN without one.
 */
function tailBases(state: Pick<MetricState, 'granularities'>): [number, number] {
  const open = state.granularities[0]?.open;
  // Rows or none, as the decoder sees it: an open split without rows reads as none.
  const last = open === null || open === undefined ? -1 : rawRowCount(open.raw) - 1;
  if (open === null || open === undefined || last < 0) return [0, Number.NaN];
  return [rawCell(open.raw, -1, last), rawColumnCount(open.raw) === 0 ? Number.NaN : rawCell(open.raw, 0, last)];
}

/**
 * Encodes the state into `out` from `at` (metricStateBound bytes at most);
 * the position after it. Into a buffer shared by a batch's states: a
 * Buffer per state lived as long as its batch, as an object each.
 */
export function writeMetricState(state: MetricState, columnCount: number, out: Buffer, start: number): number {
  const n = state.tail.timestamps.length;
  out[start] = METRIC_STATE_VERSION;
  out[start + 1] = state.granularities.length;
  out[start + 2] = columnCount;
  let at = writeLong(out, state.tailFrozen, writeLong(out, n, writeLong(out, state.lastSeq, start + 3)));
  for (const { granularity, open, oldestSealedKey } of state.granularities) {
    const inline = open?.inline;
    const newest = open?.newest;
    const rows = open === null ? 0 : rawRowCount(open.raw);
    out[at++] =
      (open === null ? 0 : Flag.Open) |
      (oldestSealedKey === null ? 0 : Flag.OldestSealed) |
      (inline === undefined ? 0 : Flag.Inline) |
      (newest === undefined ? 0 : Flag.Newest) |
      (rows > 1 ? Flag.RawRows : 0);
    at = writeOffset(out, at, granularity, 0, SECOND);
    const span = granularity * POINTS_PER_SPLIT;
    if (open !== null) at = writeOffset(out, at, open.key, 0, span);
    if (oldestSealedKey !== null) at = writeOffset(out, at, oldestSealedKey, open?.key ?? 0, span);
    if (open === null) continue;
    at = writeLong(out, open.frozen, writeLong(out, rows > 1 ? open.raw.length : rows, at));
    if (newest !== undefined) at = writeOffset(out, at, newest, open.key, granularity);
    if (inline !== undefined) at = writeOffset(out, writeLong(out, inline.bytes.length, at), inline.first, open.key, granularity);
    if (rows > 1) {
      out.set(open.raw, at);
      at += open.raw.length;
    } else at = writeStateRows(out, at, open.raw, inline?.first ?? open.key, granularity);
    if (inline !== undefined) {
      out.set(inline.bytes, at);
      at += inline.bytes.length;
    }
  }
  // Several points: a metric receiving them, which rewrites its tail on every update, as the open split's rows.
  if (n > 1) return putFloats(out, putFloats(out, at, state.tail.timestamps), state.tail.values);
  if (n === 0) return at;
  const [ts, value] = tailBases(state);
  return writeValue(out, writeOffset(out, at, state.tail.timestamps[0]!, ts, SECOND), state.tail.values[0]!, value);
}

function nullable(v: number): number | null {
  return Number.isNaN(v) ? null : v;
}

interface Entry {
  granularity: number;
  key: number | null;
  oldestSealedKey: number | null;
  /** Where the raw rows start. */
  offset: number;
  length: number;
  frozen: number;
  inlineLength: number;
  inlineFirst: number;
}

/** A version 1 to 3 granularity: fixed header of `size` bytes. */
function fixedEntry(bytes: Buffer, at: number, size: number): Entry {
  return {
    granularity: bytes.readDoubleLE(at),
    key: nullable(bytes.readDoubleLE(at + 8)),
    oldestSealedKey: nullable(bytes.readDoubleLE(at + 16)),
    offset: at + size,
    length: bytes.readUInt32LE(at + 24),
    frozen: size > 28 ? bytes.readUInt32LE(at + 28) : 0,
    inlineLength: 0,
    inlineFirst: 0,
  };
}

function compactEntry(bytes: Buffer, start: number): Entry {
  const granularity = bytes.readDoubleLE(start);
  const flags = bytes[start + 8]!;
  let at = start + 9;
  const key = flags & Flag.Open ? bytes.readDoubleLE(at) : null;
  if (key !== null) at += 8;
  const oldestSealedKey = flags & Flag.OldestSealed ? bytes.readDoubleLE(at) : null;
  if (oldestSealedKey !== null) at += 8;
  const entry: Entry = { granularity, key, oldestSealedKey, offset: at, length: 0, frozen: 0, inlineLength: 0, inlineFirst: 0 };
  if (key === null) return entry;
  const length = readCount(bytes, at);
  const frozen = readCount(bytes, length.next);
  entry.length = length.value;
  entry.frozen = frozen.value;
  at = frozen.next;
  if (flags & Flag.Inline) {
    const inlineLength = readCount(bytes, at);
    entry.inlineLength = inlineLength.value;
    entry.inlineFirst = bytes.readDoubleLE(inlineLength.next);
    at = inlineLength.next + 8;
  }
  entry.offset = at;
  return entry;
}

function entries(bytes: Buffer, header: Header = headerOf(bytes)): Entry[] {
  const count = bytes[1]!;
  const fixed = bytes[0] === 4 ? 0 : bytes[0] === 3 ? 32 : 28;
  let at = header.tailAt + 16 * header.n;
  const out: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const e = fixed === 0 ? compactEntry(bytes, at) : fixedEntry(bytes, at, fixed);
    out.push(e);
    at = e.offset + e.length + e.inlineLength;
  }
  return out;
}

function openOf(bytes: Buffer, e: Entry): OpenSplit | null {
  if (e.key === null || e.length === 0) return null;
  const end = e.offset + e.length;
  const inline = e.inlineLength === 0 ? undefined : { first: e.inlineFirst, bytes: bytes.subarray(end, end + e.inlineLength) };
  return { key: e.key, raw: bytes.subarray(e.offset, end), frozen: e.frozen, inline };
}

/**
 * The state in bytes `start` to `end` of `bytes` (all of them by default);
 * its open splits are views into `bytes`. A range rather than a view of it:
 * processing decodes each state of a batch out of one buffer. A version 4
 * state's tail is taken from `alloc` (processing's scratch: a state's
 * decode lives as long as its update).
 */
export function decodeMetricState(all: Buffer, start = 0, end = all.length, alloc: Float64Alloc = freshFloat64): MetricState {
  if (all[start] === METRIC_STATE_VERSION) return decodeV5(all, start, alloc);
  if (all[start] === COMPACT_VERSION) return decodeCompact(all, start, alloc);
  const bytes = start === 0 && end === all.length ? all : all.subarray(start, end);
  const header = headerOf(bytes);
  return {
    lastSeq: lastSeqOf(bytes),
    tail: tailOf(bytes, header.n, header.tailAt),
    tailFrozen: header.tailFrozen,
    granularities: entries(bytes, header).map((e) => ({
      granularity: e.granularity,
      open: openOf(bytes, e),
      oldestSealedKey: e.oldestSealedKey,
    })),
  };
}

function tailOf(bytes: Buffer, n: number, tailAt: number, alloc: Float64Alloc = freshFloat64): Series {
  // Value by value: byte views would first move a tail of a few points off the heap.
  const timestamps = alloc(n);
  const values = alloc(n);
  for (let i = 0; i < n; i++) {
    timestamps[i] = bytes.readDoubleLE(tailAt + 8 * i);
    values[i] = bytes.readDoubleLE(tailAt + 8 * (n + i));
  }
  return { timestamps, values };
}

/** Where the count `countAt` last read ends: a second result without an object per read (a state's decode reads two, and two or three per granularity). */
let countEnd = 0;

function countAt(bytes: Uint8Array, at: number): number {
  const first = bytes[at];
  if (first !== undefined && first < 0x80) {
    countEnd = at + 1;
    return first;
  }
  const read = readCount(bytes, at);
  countEnd = read.next;
  return read.value;
}

/** Bytes of the state as a plain view: cheaper to make than a Buffer's subarray, made for every open split of every update. */
function viewOf(bytes: Buffer, at: number, length: number): Uint8Array {
  return new Uint8Array(bytes.buffer, bytes.byteOffset + at, length);
}

/**
 * A version 4 state starting at `start`, read in one pass without an
 * object per header or count: processing decodes a state per metric update.
 */
function decodeCompact(bytes: Buffer, start: number, alloc: Float64Alloc): MetricState {
  const n = countAt(bytes, start + 12);
  const tailFrozen = countAt(bytes, countEnd);
  const tail = tailOf(bytes, n, countEnd, alloc);
  let at = countEnd + 16 * n;
  const granularities: GranularityState[] = new Array(bytes[start + 1]!);
  for (let g = 0; g < granularities.length; g++) {
    const granularity = bytes.readDoubleLE(at);
    const flags = bytes[at + 8]!;
    at += 9;
    const key = flags & Flag.Open ? bytes.readDoubleLE(at) : null;
    if (key !== null) at += 8;
    const oldestSealedKey = flags & Flag.OldestSealed ? bytes.readDoubleLE(at) : null;
    if (oldestSealedKey !== null) at += 8;
    let open: OpenSplit | null = null;
    if (key !== null) {
      const length = countAt(bytes, at);
      const frozen = countAt(bytes, countEnd);
      at = countEnd;
      let inline: InlineChunk | undefined;
      let inlineLength = 0;
      if (flags & Flag.Inline) {
        inlineLength = countAt(bytes, at);
        const first = bytes.readDoubleLE(countEnd);
        at = countEnd + 8;
        inline = { first, bytes: viewOf(bytes, at + length, inlineLength) };
      }
      // As the fixed versions: an open split without rows is none.
      if (length > 0) open = { key, raw: viewOf(bytes, at, length), frozen, inline: inlineLength === 0 ? undefined : inline };
      at += length + inlineLength;
    }
    granularities[g] = { granularity, open, oldestSealedKey };
  }
  return { lastSeq: bytes.readDoubleLE(start + 4), tail, tailFrozen, granularities };
}

/**
 * A version 5 state starting at `start`: its open splits' raw rows
 * rebuilt, their inline chunks views into `bytes`, its tail from `alloc`.
 */
function decodeV5(bytes: Buffer, start: number, alloc: Float64Alloc): MetricState {
  const r = new NumberReader(bytes, start + 3);
  const lastSeq = r.long();
  const n = r.long();
  const tailFrozen = r.long();
  const ncols = bytes[start + 2]!;
  const granularities: GranularityState[] = new Array(bytes[start + 1]!);
  for (let g = 0; g < granularities.length; g++) {
    const flags = bytes[r.at++]!;
    const granularity = r.offset(0, SECOND);
    const span = granularity * POINTS_PER_SPLIT;
    const key = flags & Flag.Open ? r.offset(0, span) : null;
    const oldestSealedKey = flags & Flag.OldestSealed ? r.offset(key ?? 0, span) : null;
    let open: OpenSplit | null = null;
    if (key !== null) {
      // The raw rows' length, or their count in the compact form.
      const size = r.long();
      const frozen = r.long();
      const newest = flags & Flag.Newest ? r.offset(key, granularity) : undefined;
      const inlineLength = flags & Flag.Inline ? r.long() : 0;
      const first = flags & Flag.Inline ? r.offset(key, granularity) : key;
      let raw: Uint8Array;
      if (flags & Flag.RawRows) {
        raw = viewOf(bytes, r.at, size);
        r.at += size;
      } else raw = readStateRows(r, bytes, size, ncols, first, granularity);
      const inline = flags & Flag.Inline ? { first, bytes: viewOf(bytes, r.at, inlineLength) } : undefined;
      r.at += inlineLength;
      // As the older versions: an open split without rows is none, unless chunks hold some (never written so: a freeze keeps its last row inline).
      if (size > 0 || frozen > 0 || inline !== undefined) open = { key, raw, frozen, newest, inline };
    }
    granularities[g] = { granularity, open, oldestSealedKey };
  }
  if (n > 1) return { lastSeq, tail: tailOf(bytes, n, r.at, alloc), tailFrozen, granularities };
  const tail = { timestamps: alloc(n), values: alloc(n) };
  if (n === 1) {
    const [ts, value] = tailBases({ granularities });
    tail.timestamps[0] = r.offset(ts, SECOND);
    tail.values[0] = r.value(value);
  }
  return { lastSeq, tail, tailFrozen, granularities };
}

/** The open split of one granularity (its inline chunk a view into `bytes`), without decoding the rest of a state before version 5. */
export function openSplitOf(bytes: Buffer, granularity: number): OpenSplit | null {
  if (bytes[0] === METRIC_STATE_VERSION) return decodeV5(bytes, 0, freshFloat64).granularities.find((x) => x.granularity === granularity)?.open ?? null;
  const e = entries(bytes).find((x) => x.granularity === granularity);
  return e === undefined ? null : openOf(bytes, e);
}
