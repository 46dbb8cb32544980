/**
 * A metric's state is rewritten on every update, so what it holds inline
 * must not grow with the data: the raw tail (up to a block of points, 3,600
 * at 1 s for a 1 h block) and each open split (up to 3,600 rows of every
 * method: ~200 KB for 6 methods) would make every update rewrite that much.
 * So only their newest rows stay inline; once there are CHUNK_ROWS of them,
 * all but the last are frozen into a chunk record, written once and keyed
 * [metric, granularity, first timestamp] (granularity 0: the tail).
 *
 * Updates almost always start at or after the first inline row (the last
 * period can still change; earlier ones only through points arriving out
 * of order), so they rewrite the inline rows only; one that reaches back
 * into frozen rows rewrites them whole. Sealing a split reads its chunks
 * once and deletes them; the tail's chunks go when the tail moves past them.
 */
import type { Series } from './aggregation.js';
import type { MetricState, OpenSplit } from './metric-state.js';
import {
  copyRawColumn,
  cutRawSplit,
  decodeRawSplits,
  encodeRawSplit,
  mergeIntoRawSplit,
  mergeSplits,
  POINTS_PER_SPLIT,
  rawFirstTimestamp,
  rawRowCount,
  type SplitColumns,
} from './split.js';
import { directWrites, type RecordWriter } from './record-writes.js';
import { freshFloat64, type Float64Alloc } from './scratch.js';
import type { StateChunkKey, Storage } from './storage.js';

/** Inline rows at which they are frozen: bounds an update's rewrite to ~CHUNK_ROWS x (methods + 1) x 8 bytes. */
export const CHUNK_ROWS = 256;

const TAIL = 0;

interface Range {
  start: StateChunkKey;
  end: StateChunkKey;
}

function openSplitRange(metricId: string, granularity: number, key: number): Range {
  return { start: [metricId, granularity, key], end: [metricId, granularity, key + granularity * POINTS_PER_SPLIT] };
}

function tailRange(metricId: string): Range {
  return { start: [metricId, TAIL, -Number.MAX_VALUE], end: [metricId, TAIL, Number.MAX_VALUE] };
}

function chunksOf(storage: Storage, range: Range): Buffer[] {
  return [...storage.stateChunks.getRange(range)].map(({ value }) => value);
}

function dropChunks(storage: Storage, w: RecordWriter, range: Range): void {
  for (const key of storage.stateChunks.getKeys(range)) w.remove(storage.stateChunks, key);
}

/** Every chunk of a metric; inside a write transaction. */
export function dropStateChunks(storage: Storage, metricId: string): void {
  dropChunks(storage, directWrites, { start: [metricId, -1, 0], end: [metricId, Number.MAX_SAFE_INTEGER, 0] });
}

/**
 * Freezes the rows of `raw` but the last into a chunk once there are
 * CHUNK_ROWS of them; the rows left inline, and whether a chunk was written.
 */
function freeze(storage: Storage, w: RecordWriter, metricId: string, slot: number, raw: Uint8Array): { raw: Uint8Array; froze: boolean } {
  const n = rawRowCount(raw);
  if (n < CHUNK_ROWS) return { raw, froze: false };
  const [older, last] = cutRawSplit(raw, n - 1);
  putChunk(storage, w, metricId, slot, older);
  return { raw: last, froze: true };
}

function putChunk(storage: Storage, w: RecordWriter, metricId: string, slot: number, raw: Buffer): void {
  w.put(storage.stateChunks, [metricId, slot, rawFirstTimestamp(raw)], raw);
}

/** Every row of an open split (only column `only`, when given), frozen chunks first. */
export function readOpenSplit(storage: Storage, metricId: string, granularity: number, open: OpenSplit, only?: number): SplitColumns {
  const raws: Uint8Array[] = open.frozen > 0 ? chunksOf(storage, openSplitRange(metricId, granularity, open.key)) : [];
  raws.push(open.raw);
  return decodeRawSplits(raws, only);
}

/** Deletes an open split's chunks (once it is sealed). */
export function dropOpenSplitChunks(storage: Storage, w: RecordWriter, metricId: string, granularity: number, open: OpenSplit): void {
  if (open.frozen > 0) dropChunks(storage, w, openSplitRange(metricId, granularity, open.key));
}

function storeOpen(storage: Storage, w: RecordWriter, metricId: string, granularity: number, key: number, raw: Uint8Array, frozen: number): OpenSplit {
  const kept = freeze(storage, w, metricId, granularity, raw);
  return { key, raw: kept.raw, frozen: frozen + (kept.froze ? 1 : 0) };
}

/** A new open split holding `rows`. */
export function startOpenSplit(storage: Storage, w: RecordWriter, metricId: string, granularity: number, key: number, rows: SplitColumns): OpenSplit {
  return storeOpen(storage, w, metricId, granularity, key, encodeRawSplit(rows), 0);
}

/**
 * The open split with `rows` merged in (new values win). Reads the chunks
 * stored before `w`'s writes: call it once per split and update.
 */
export function extendOpenSplit(storage: Storage, w: RecordWriter, metricId: string, granularity: number, open: OpenSplit, rows: SplitColumns): OpenSplit {
  if (open.frozen === 0 || rows.timestamps.length === 0 || rows.timestamps[0]! >= rawFirstTimestamp(open.raw)) {
    return storeOpen(storage, w, metricId, granularity, open.key, mergeIntoRawSplit(open.raw, rows), open.frozen);
  }
  const whole = mergeSplits(readOpenSplit(storage, metricId, granularity, open), rows);
  dropOpenSplitChunks(storage, w, metricId, granularity, open);
  return startOpenSplit(storage, w, metricId, granularity, open.key, whole);
}

/** A metric's whole tail, and how many of its first points sit in chunks. */
export interface FullTail {
  tail: Series;
  frozenPoints: number;
}

/** The tail: its chunks' points, then the inline ones, copied once into one series. */
export function readTail(storage: Storage, metricId: string, state: MetricState, alloc: Float64Alloc = freshFloat64): FullTail {
  if (state.tailFrozen === 0) return { tail: state.tail, frozenPoints: 0 };
  const chunks = chunksOf(storage, tailRange(metricId));
  const inline = state.tail;
  let frozenPoints = 0;
  for (const chunk of chunks) frozenPoints += rawRowCount(chunk);
  const timestamps = alloc(frozenPoints + inline.timestamps.length);
  const values = alloc(timestamps.length);
  let at = 0;
  for (const chunk of chunks) {
    copyRawColumn(chunk, -1, timestamps, at);
    at += copyRawColumn(chunk, 0, values, at);
  }
  timestamps.set(inline.timestamps, at);
  values.set(inline.values, at);
  return { tail: { timestamps, values }, frozenPoints };
}

/**
 * Stores the tail `next` that replaces `old`, where nothing changed before
 * `firstChanged`; its inline points and chunk count, for the state. The
 * frozen points are kept when `next` still starts with them: it holds every
 * old point from its first on, so same first point, same point at the
 * frozen count and no change up to it mean the same frozen points.
 * Otherwise (the tail moved on, or a point arrived among or replaced one of
 * the frozen ones) the tail is stored afresh.
 */
export function storeTail(
  storage: Storage,
  w: RecordWriter,
  metricId: string,
  old: FullTail,
  oldChunks: number,
  next: Series,
  firstChanged: number,
): { tail: Series; tailFrozen: number } {
  const f = old.frozenPoints;
  const ts = next.timestamps;
  const keep =
    f > 0 && ts.length > f && ts[0] === old.tail.timestamps[0] && ts[f - 1] === old.tail.timestamps[f - 1] && firstChanged > ts[f - 1]!;
  if (oldChunks > 0 && !keep) dropChunks(storage, w, tailRange(metricId));
  const inline = keep ? { timestamps: ts.subarray(f), values: next.values.subarray(f) } : next;
  const chunks = keep ? oldChunks : 0;
  const last = inline.timestamps.length - 1;
  if (last + 1 < CHUNK_ROWS) return { tail: inline, tailFrozen: chunks };
  putChunk(storage, w, metricId, TAIL, encodeRawSplit({ timestamps: inline.timestamps.subarray(0, last), columns: [inline.values.subarray(0, last)], present: [null] }));
  return { tail: { timestamps: inline.timestamps.subarray(last), values: inline.values.subarray(last) }, tailFrozen: chunks + 1 };
}
