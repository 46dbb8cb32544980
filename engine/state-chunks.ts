/**
 * A metric's state is rewritten on every update, so what it holds inline
 * must not grow with the data: the raw tail (up to a block of points, 3,600
 * at 1 s for a 1 h block) and each open split (up to 3,600 rows of every
 * method: ~200 KB for 6 methods) would make every update rewrite that much.
 * So only their newest rows stay inline; once there are CHUNK_ROWS of them
 * (TAIL_CHUNK_POINTS for the tail), all but the last are frozen into a
 * chunk record keyed [metric, granularity, first timestamp] (granularity 0:
 * the tail).
 *
 * An open split's chunks hold its rows encoded by the split codec's compact
 * form (raw, as the inline rows, they took 8 bytes per value and most of
 * the data directory); freezing more rows re-encodes the newest chunk with
 * them until it holds MAX_CHUNK_ROWS. A metric that stops receiving points
 * is settled: its loose inline rows are frozen too, so that what a quiet
 * metric keeps raw is one row per granularity. The tail's points are not on
 * a grid and stay raw.
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
  concatRows,
  copyRawColumn,
  decodeRawSplits,
  decodeStoredSplit,
  encodeFrozenRows,
  encodeRawRow,
  encodeRawSplit,
  frozenRowCount,
  growFrozenRows,
  isRawSplit,
  mergeIntoRawSplit,
  mergeSplits,
  POINTS_PER_SPLIT,
  rawColumnCount,
  rawFirstTimestamp,
  rawRowCount,
  sliceSplit,
  type SplitColumns,
} from './split.js';
import type { RecordWriter, SeriesRange, SeriesSnapshot, StateChunkKey } from './drivers/types.js';
import { freshFloat64, type Float64Alloc } from './scratch.js';

/**
 * Inline rows of an open split at which they are frozen: bounds an update's
 * rewrite to ~CHUNK_ROWS x (methods + 1) x 8 bytes, and what a state takes
 * in its B-tree page. LMDB splits a page when a state put in place outgrows
 * it and never merges the halves back unless they fall under a quarter
 * full: states of metrics fed in step (time-major rounds) grow together, so
 * the pages their largest size called for stay, and the file keeps its
 * high-water mark. At 256 rows (1 method: 4 KB states, each on overflow
 * pages) bench:footprint p60 peaked at 6,745 pages (metric_state 2,390) and
 * kept metric_state at 1,207 pages for 11,000 93-byte states; at 16, 5,378
 * and 721. Freezing more often costs a re-encode of the newest chunk per
 * CHUNK_ROWS - 1 rows (up to CHUNK_BYTES of it).
 */
export const CHUNK_ROWS = 16;

/**
 * Raw tail points at which all but the last are frozen. The tail's chunks
 * stay raw (its points are not on a grid), 16 bytes a point, so small ones
 * would cost their key and page slot for little.
 */
export const TAIL_CHUNK_POINTS = 256;

/**
 * An open split's chunk grows (each freeze re-encoding it, at ~0.1 µs a
 * row) until it holds this many bytes, an eighth of an LMDB page (a quarter
 * in a directory made with 4 KB pages): well under the half page past which
 * a value takes pages of its own. The ~40 bytes of key and header a chunk
 * costs are then small beside it.
 */
export const CHUNK_BYTES = 1024;

/** Rows of one chunk at most, whatever their size: bounds a freeze's work. */
export const MAX_CHUNK_ROWS = 1024;

/**
 * An open split's only chunk is kept in its state up to this size: a quiet
 * metric's settled rows (~70 bytes for 30 rows of one method) cost less
 * there than the key, node and page slot of a record, and an update
 * rewrites at most this many more bytes.
 */
export const INLINE_CHUNK_BYTES = 256;

const TAIL = 0;

function openSplitRange(metricId: string, granularity: number, key: number): SeriesRange {
  return { metricId, granularity, start: key, end: key + granularity * POINTS_PER_SPLIT };
}

function tailRange(metricId: string): SeriesRange {
  return { metricId, granularity: TAIL, start: -Number.MAX_VALUE, end: Number.MAX_VALUE };
}

function dropChunks(snapshot: SeriesSnapshot, w: RecordWriter, range: SeriesRange): void {
  for (const key of snapshot.chunkKeys(range)) w.remove('chunk', key);
}

/** An open split's chunk as rows: encoded, or raw as written before chunks were encoded. */
export function decodeChunk(chunk: Uint8Array, key: StateChunkKey, ncols: number, only?: number): SplitColumns {
  return decodeStoredSplit(chunk, key[2], key[1], ncols, only);
}

/** An open split's chunks, oldest first, with their keys: the inline one as a record would hold it. */
export function openSplitChunks(snapshot: SeriesSnapshot, metricId: string, granularity: number, open: OpenSplit): { key: StateChunkKey; value: Uint8Array }[] {
  const records = open.frozen > 0 ? snapshot.chunks(openSplitRange(metricId, granularity, open.key)) : [];
  return open.inline === undefined ? records : [{ key: [metricId, granularity, open.inline.first], value: open.inline.bytes }, ...records];
}

/** Whether an open split has rows in chunks (records or inline). */
const hasChunks = (open: OpenSplit): boolean => open.frozen > 0 || open.inline !== undefined;

/** Every row of an open split (only column `only`, when given), frozen chunks first. */
export function readOpenSplit(snapshot: SeriesSnapshot, metricId: string, granularity: number, open: OpenSplit, only?: number): SplitColumns {
  const ncols = rawColumnCount(open.raw);
  const parts = openSplitChunks(snapshot, metricId, granularity, open).map(({ key, value }) => decodeChunk(value, key, ncols, only));
  parts.push(decodeRawSplits([open.raw], only));
  return concatRows(parts);
}

/** Deletes an open split's chunks (once it is sealed). */
export function dropOpenSplitChunks(snapshot: SeriesSnapshot, w: RecordWriter, metricId: string, granularity: number, open: OpenSplit): void {
  if (open.frozen > 0) dropChunks(snapshot, w, openSplitRange(metricId, granularity, open.key));
}

/**
 * The chunk `key` with as many of `rows` (which follow its rows) as it has
 * room for, and how many. Appended to its stored bytes where the codec can,
 * else decoded and encoded whole again.
 */
function growChunk(chunk: Uint8Array, key: StateChunkKey, granularity: number, rows: SplitColumns, alloc: Float64Alloc): { value: Uint8Array; rows: number } {
  const held = frozenRowCount(chunk);
  if (held !== null) {
    const taken = Math.min(rows.timestamps.length, MAX_CHUNK_ROWS - held);
    const grown = taken > 0 ? growFrozenRows(chunk, key[2], granularity, sliceSplit(rows, 0, taken)) : chunk;
    if (grown !== null) return { value: grown, rows: taken };
  }
  const newest = decodeChunk(chunk, key, rows.columns.length);
  const taken = Math.min(rows.timestamps.length, MAX_CHUNK_ROWS - newest.timestamps.length);
  const value = taken > 0 ? encodeFrozenRows(key[2], granularity, concatRows([newest, sliceSplit(rows, 0, taken)], alloc), chunk) : chunk;
  return { value, rows: taken };
}

/** What a freeze leaves of an open split besides its raw rows. */
type Frozen = Pick<OpenSplit, 'frozen' | 'newest' | 'inline'>;

/**
 * Freezes `rows` (which follow every frozen row): into the newest chunk
 * while it is small, else into new ones; the new chunk count, newest chunk
 * key and inline chunk. Reads the chunks as stored before `w`'s writes:
 * once per split and update.
 */
function freezeRows(
  snapshot: SeriesSnapshot,
  w: RecordWriter,
  metricId: string,
  granularity: number,
  open: Omit<OpenSplit, 'raw'>,
  rows: SplitColumns,
  alloc: Float64Alloc,
): Frozen {
  let frozen = open.frozen;
  let from = 0;
  let newestKey: StateChunkKey | undefined;
  let value: Uint8Array | undefined;
  if (open.inline !== undefined) {
    newestKey = [metricId, granularity, open.inline.first];
    value = open.inline.bytes;
  } else if (frozen > 0 && open.newest !== undefined) {
    newestKey = [metricId, granularity, open.newest];
    value = snapshot.chunk(newestKey);
  } else if (frozen > 0) {
    // A state written before its newest chunk's key was kept. Not the split's chunk keys in turn: with 15-30 chunks a split (bench: 1000 metrics x 150 rounds of 15 rows) that walk was 30% of freezing.
    ({ key: newestKey, value } = snapshot.lastChunk(openSplitRange(metricId, granularity, open.key)) ?? {});
  }
  if (newestKey !== undefined && value !== undefined && !isRawSplit(value) && value.length < CHUNK_BYTES) {
    ({ value, rows: from } = growChunk(value, newestKey, granularity, rows, alloc));
  }
  let newest = newestKey?.[2];
  if (open.inline !== undefined) {
    if (from === rows.timestamps.length && value!.length <= INLINE_CHUNK_BYTES) return { frozen, newest: undefined, inline: { first: newestKey![2], bytes: value! } };
    // Grown past the inline size, or followed by another chunk: a record like the others.
    w.put('chunk', newestKey!, value!);
    frozen++;
  } else if (from > 0) {
    w.put('chunk', newestKey!, value!);
  }
  // Each new chunk's plan starts from the chunk before it (of the same series): saves costing its layouts.
  let before = value;
  for (; from < rows.timestamps.length; from += MAX_CHUNK_ROWS, frozen++) {
    const first = rows.timestamps[from]!;
    const to = Math.min(rows.timestamps.length, from + MAX_CHUNK_ROWS);
    const bytes = encodeFrozenRows(first, granularity, sliceSplit(rows, from, to), before);
    before = bytes;
    if (frozen === 0 && to === rows.timestamps.length && bytes.length <= INLINE_CHUNK_BYTES) return { frozen, newest: undefined, inline: { first, bytes } };
    w.put('chunk', [metricId, granularity, first], bytes);
    newest = first;
  }
  return { frozen, newest: frozen > 0 ? newest : undefined, inline: undefined };
}

/**
 * The open split with its inline rows but the last frozen, when at least
 * `least` of them would be: the last period can still change, and an
 * update that starts from it rewrites the inline rows only.
 */
function freeze(snapshot: SeriesSnapshot, w: RecordWriter, metricId: string, granularity: number, open: OpenSplit, least: number, alloc: Float64Alloc): OpenSplit {
  const n = rawRowCount(open.raw);
  if (n - 1 < Math.max(1, least)) return open;
  return freezeInline(snapshot, w, metricId, granularity, open, decodeRawSplits([open.raw], undefined, alloc), alloc);
}

/** The open split whose inline rows are `rows` (its own raw rows are not read), all but the last frozen. */
function freezeInline(
  snapshot: SeriesSnapshot,
  w: RecordWriter,
  metricId: string,
  granularity: number,
  open: Omit<OpenSplit, 'raw'>,
  rows: SplitColumns,
  alloc: Float64Alloc,
): OpenSplit {
  const n = rows.timestamps.length;
  const { frozen, newest, inline } = freezeRows(snapshot, w, metricId, granularity, open, sliceSplit(rows, 0, n - 1), alloc);
  return { key: open.key, raw: encodeRawRow(rows, n - 1), frozen, newest, inline };
}

function storeOpen(snapshot: SeriesSnapshot, w: RecordWriter, metricId: string, granularity: number, open: OpenSplit, alloc: Float64Alloc): OpenSplit {
  return freeze(snapshot, w, metricId, granularity, open, CHUNK_ROWS - 1, alloc);
}

/** A new open split holding `rows`. `alloc`: where rows decoded to be frozen are taken from (none outlives the call). */
export function startOpenSplit(
  snapshot: SeriesSnapshot,
  w: RecordWriter,
  metricId: string,
  granularity: number,
  key: number,
  rows: SplitColumns,
  alloc: Float64Alloc = freshFloat64,
): OpenSplit {
  // Frozen from the rows given, not stored raw only to be decoded back: a time-major run's first freeze of each series.
  if (rows.timestamps.length < CHUNK_ROWS) return { key, raw: encodeRawSplit(rows), frozen: 0 };
  return freezeInline(snapshot, w, metricId, granularity, { key, frozen: 0 }, rows, alloc);
}

/**
 * The open split with `rows` merged in (new values win). Reads the chunks
 * stored before `w`'s writes: call it once per split and update. `alloc`:
 * as startOpenSplit's.
 */
export function extendOpenSplit(
  snapshot: SeriesSnapshot,
  w: RecordWriter,
  metricId: string,
  granularity: number,
  open: OpenSplit,
  rows: SplitColumns,
  alloc: Float64Alloc = freshFloat64,
): OpenSplit {
  if (!hasChunks(open) || rows.timestamps.length === 0 || rows.timestamps[0]! >= rawFirstTimestamp(open.raw)) {
    return storeOpen(snapshot, w, metricId, granularity, { ...open, raw: mergeIntoRawSplit(open.raw, rows) }, alloc);
  }
  const whole = mergeSplits(readOpenSplit(snapshot, metricId, granularity, open), rows);
  dropOpenSplitChunks(snapshot, w, metricId, granularity, open);
  return startOpenSplit(snapshot, w, metricId, granularity, open.key, whole, alloc);
}

/** Inline rows of an open split that settling would freeze. */
export function looseRows(open: OpenSplit): number {
  return Math.max(0, rawRowCount(open.raw) - 1);
}

/** The open split settled: its inline rows but the last frozen, when there are at least `least` to freeze (`alloc`: as startOpenSplit's). */
export function settleOpenSplit(
  snapshot: SeriesSnapshot,
  w: RecordWriter,
  metricId: string,
  granularity: number,
  open: OpenSplit,
  least: number,
  alloc: Float64Alloc = freshFloat64,
): OpenSplit {
  return freeze(snapshot, w, metricId, granularity, open, least, alloc);
}

/** A metric's whole tail, and how many of its first points sit in chunks. */
export interface FullTail {
  tail: Series;
  frozenPoints: number;
}

/** The tail: its chunks' points, then the inline ones, copied once into one series. */
export function readTail(snapshot: SeriesSnapshot, metricId: string, state: MetricState, alloc: Float64Alloc = freshFloat64): FullTail {
  if (state.tailFrozen === 0) return { tail: state.tail, frozenPoints: 0 };
  const chunks = snapshot.chunks(tailRange(metricId)).map(({ value }) => value);
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
  snapshot: SeriesSnapshot,
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
  if (oldChunks > 0 && !keep) dropChunks(snapshot, w, tailRange(metricId));
  const inline = keep ? { timestamps: ts.subarray(f), values: next.values.subarray(f) } : next;
  const chunks = keep ? oldChunks : 0;
  const last = inline.timestamps.length - 1;
  if (last + 1 < TAIL_CHUNK_POINTS) return { tail: inline, tailFrozen: chunks };
  w.put('chunk', [metricId, TAIL, inline.timestamps[0]!], encodeRawSplit({ timestamps: inline.timestamps.subarray(0, last), columns: [inline.values.subarray(0, last)], present: [null] }));
  return { tail: { timestamps: inline.timestamps.subarray(last), values: inline.values.subarray(last) }, tailFrozen: chunks + 1 };
}
