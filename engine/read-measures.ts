/**
 * Reading a metric's aggregates: map [start, stop) to split keys, decode only
 * those sealed splits (plus the open one kept in the metric's state) and
 * take the requested method's column, then apply retention,
 * resampling and bounds as Gnocchi's `get_aggregated_measures` does. It
 * reads from a series snapshot, synchronously: the caller loads one for the
 * read (or for all the metrics of a query) first.
 */
import type { ArchivePolicy } from './archive-policy.js';
import {
  calendarGroupStart,
  isCalendarGroup,
  lowerBound,
  parseMethod,
  resample as resampleSeries,
  roundTimestamp,
  type Grouping,
  type Series,
} from './aggregation.js';
import type { DecodedSplitCache } from './decoded-splits.js';
import type { SeriesRange, SeriesSnapshot } from './drivers/types.js';
import { openSplitOf } from './metric-state.js';
import { decodeChunk, openSplitChunks } from './state-chunks.js';
import { decodeRawSplits, decodeStoredSplit, POINTS_PER_SPLIT, splitKeyOf, type SplitColumns } from './split.js';

export interface ReadOptions {
  method: string;
  /** Granularities to return, microseconds; coarsest first in the answer. */
  granularities: number[];
  start?: number;
  stop?: number;
  resample?: Grouping;
  /**
   * The newest timestamp of the read this one is a time slice of: retention
   * counts from it instead of from the newest point this read sees.
   */
  newest?: number;
}

export interface AggregatedSeries extends Series {
  /** Microseconds, or the calendar letter of a calendar resample. */
  granularity: number | string;
}

/** The points of `data` that have a `column` value (decoded with only that column and those it derives from). */
function columnOf(data: SplitColumns, column: number): Series {
  const present = data.present[column];
  const values = data.columns[column]!;
  if (present === null || present === undefined) return { timestamps: data.timestamps, values };
  let n = 0;
  for (let i = 0; i < values.length; i++) n += present[i]!;
  const t = new Float64Array(n);
  const v = new Float64Array(n);
  for (let i = 0, k = 0; i < values.length; i++) {
    if (present[i] === 1) {
      t[k] = data.timestamps[i]!;
      v[k++] = values[i]!;
    }
  }
  return { timestamps: t, values: v };
}

/**
 * Split keys a bounded read looks up one by one rather than through a
 * cursor over the key range (its set-up is a visible part of a small read);
 * wider ranges, mostly of absent keys, take the cursor.
 */
const MAX_DIRECT_KEYS = 8;

/** The stored split keys of one series within [startKey, endKey). */
function splitKeys(snapshot: SeriesSnapshot, metricId: string, granularity: number, startKey: number, endKey: number): Iterable<number> {
  const span = granularity * POINTS_PER_SPLIT;
  if (startKey >= 0 && (endKey - startKey) / span <= MAX_DIRECT_KEYS) {
    const keys: number[] = [];
    for (let k = startKey; k < endKey; k += span) keys.push(k);
    return keys;
  }
  return [...snapshot.splitKeys({ metricId, granularity, start: startKey, end: endKey })].map((key) => key[2]);
}

/** The split-key range of a read at one granularity: [startKey, endKey). */
function keyRange(granularity: number, start: number | undefined, stop: number | undefined): [number, number] {
  return [start === undefined ? -1 : splitKeyOf(start, granularity), stop === undefined ? Number.MAX_SAFE_INTEGER : splitKeyOf(stop, granularity) + 1];
}

/** The sealed splits a read of `metricId` looks at: what to load for it (SeriesStore.load). */
export function readRanges(metricId: string, granularities: readonly number[], start: number | undefined, stop: number | undefined): SeriesRange[] {
  return granularities.map((granularity) => {
    const [startKey, endKey] = keyRange(granularity, start, stop);
    return { metricId, granularity, start: startKey, end: endKey };
  });
}

function readColumn(
  snapshot: SeriesSnapshot,
  metricId: string,
  policy: ArchivePolicy,
  granularity: number,
  column: number,
  start: number | undefined,
  stop: number | undefined,
  decoded: DecodedSplitCache | undefined,
): Series {
  const ncols = policy.aggregationMethods.length;
  const [startKey, endKey] = keyRange(granularity, start, stop);
  const parts: Series[] = [];
  /** The column of encoded split bytes, decoded once for as long as the same bytes are stored under `id`. */
  const decodedColumn = (id: string, encoded: Uint8Array, decode: () => SplitColumns): Series => {
    let points = decoded?.get(id, encoded);
    if (points === undefined) {
      points = columnOf(decode(), column);
      decoded?.set(id, encoded, points);
    }
    return points;
  };
  for (const key of splitKeys(snapshot, metricId, granularity, startKey, endKey)) {
    // Valid until the next read: compared or decoded (into new arrays) at once.
    const encoded = snapshot.split([metricId, granularity, key]);
    if (encoded === undefined) continue;
    parts.push(decodedColumn(`${metricId} ${granularity} ${key} ${column}`, encoded, () => decodeStoredSplit(encoded, key, granularity, ncols, column)));
  }
  // The state is looked at in place rather than copied whole on every read;
  // its open split's rows are copied out before the next read (of its
  // chunks) may reuse the buffer.
  const state = snapshot.state(metricId);
  const open = state === undefined ? null : openSplitOf(state, granularity);
  if (open !== null && open.key >= startKey && open.key < endKey) {
    const inline = decodeRawSplits([open.raw], column);
    for (const { key, value } of openSplitChunks(snapshot, metricId, granularity, open)) {
      parts.push(decodedColumn(`${metricId} ${granularity} chunk ${key[2]} ${column}`, value, () => decodeChunk(value, key, ncols, column)));
    }
    parts.push(columnOf(inline, column));
  }
  // A window within one split (the usual read) is that split's arrays as they are.
  if (parts.length === 1) return parts[0]!;
  let total = 0;
  for (const p of parts) total += p.timestamps.length;
  const timestamps = new Float64Array(total);
  const values = new Float64Array(total);
  let o = 0;
  for (const p of parts) {
    timestamps.set(p.timestamps, o);
    values.set(p.values, o);
    o += p.timestamps.length;
  }
  return { timestamps, values };
}

function slice(s: Series, from: number, to: number): Series {
  return { timestamps: s.timestamps.subarray(from, to), values: s.values.subarray(from, to) };
}

/**
 * `decoded`: where sealed splits decoded by earlier reads are kept (the
 * engine's, on the main thread). The arrays answered may be views of the
 * ones kept there: callers must not modify them.
 */
export function readMeasures(
  snapshot: SeriesSnapshot,
  metricId: string,
  policy: ArchivePolicy,
  options: ReadOptions,
  decoded?: DecodedSplitCache,
): AggregatedSeries[] {
  const column = policy.aggregationMethods.indexOf(options.method);
  const method = parseMethod(options.method);
  if (column < 0 || method === null) throw new Error(`Method ${options.method} not in policy`);
  const granularities = [...options.granularities].sort((a, b) => b - a);
  return granularities.map((granularity) => {
    const item = policy.definition.find((d) => d.granularity === granularity);
    let series = readColumn(snapshot, metricId, policy, granularity, column, options.start, options.stop, decoded);
    const n = series.timestamps.length;
    if (item?.timespan != null && n > 0) {
      const oldest = (options.newest ?? series.timestamps[n - 1]!) - item.timespan;
      let from = lowerBound(series.timestamps, oldest);
      while (from < n && series.timestamps[from]! <= oldest) from++;
      series = slice(series, from, n);
    }
    let outGranularity: number | string = granularity;
    if (options.resample !== undefined) {
      series = resampleSeries(series, options.resample, method);
      outGranularity = options.resample;
    }
    let from = 0;
    let to = series.timestamps.length;
    if (options.start !== undefined) {
      const g = outGranularity;
      const rounded = typeof g === 'string' && isCalendarGroup(g) ? calendarGroupStart(options.start, g) : roundTimestamp(options.start, g as number);
      from = lowerBound(series.timestamps, rounded);
    }
    if (options.stop !== undefined) to = lowerBound(series.timestamps, options.stop);
    return { ...slice(series, from, Math.max(from, to)), granularity: outGranularity };
  });
}
