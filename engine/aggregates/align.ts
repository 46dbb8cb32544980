/**
 * Gnocchi's `processor.aggregated`: for each granularity, align the series on
 * the union of their timestamps, fill the holes, check the overlap, then
 * evaluate the operations. Pure: the series are already read.
 */
import { lowerBound, roundTimestamp, type Grouping } from '../aggregation.js';
import type { OperationNode } from '../../formats/operations-nodes.js';
import { unaggregable } from './errors.js';
import { evaluate, type LookupKey } from './evaluate.js';

export type FillMode = 'null' | 'dropna' | 'ffill' | 'bfill' | 'full_ffill' | 'full_bfill';
/** A number fills holes with that value; absent means no fill and an overlap check. */
export type Fill = number | FillMode;

export const FILL_MODES: readonly FillMode[] = ['null', 'dropna', 'ffill', 'bfill', 'full_ffill', 'full_bfill'];

export interface InputSeries {
  key: LookupKey;
  /** Sorted ascending, unique. */
  timestamps: Float64Array;
  values: Float64Array;
}

export interface SamplingInput {
  granularity: Grouping;
  /** In reference order. */
  series: InputSeries[];
}

export interface AlignOptions {
  start?: number;
  stop?: number;
  /** Percent, default 100. */
  neededOverlap: number;
  fill?: Fill;
}

export interface SamplingResult {
  granularity: Grouping;
  timestamps: Float64Array;
  /** Aggregated: one column. Otherwise one column per reference, in order. */
  columns: Float64Array[];
}

export interface AggregatesResult {
  aggregated: boolean;
  /** Coarsest granularity first. */
  samplings: SamplingResult[];
}

function bytesOf(a: Float64Array): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

/** Sorted union of sorted unique arrays, by successive linear merges. */
export function unionTimestamps(arrays: readonly Float64Array[]): Float64Array {
  let acc: Float64Array = new Float64Array(0);
  for (const next of arrays) {
    if (next.length === 0) continue;
    if (acc.length === 0 || next === acc) {
      acc = next;
      continue;
    }
    // Series sharing their timestamps (the common case) need no merge; timestamps
    // hold no NaN nor -0, so equal bytes are equal values (memcmp, not a loop).
    if (next.length === acc.length && next[0] === acc[0] && bytesOf(next).equals(bytesOf(acc))) continue;
    const out = new Float64Array(acc.length + next.length);
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < acc.length && j < next.length) {
      const a = acc[i]!;
      const b = next[j]!;
      if (a < b) {
        out[k++] = a;
        i++;
      } else if (b < a) {
        out[k++] = b;
        j++;
      } else {
        out[k++] = a;
        i++;
        j++;
      }
    }
    while (i < acc.length) out[k++] = acc[i++]!;
    while (j < next.length) out[k++] = next[j++]!;
    acc = out.subarray(0, k);
  }
  return acc;
}

/**
 * Places each series on the grid; holes hold `filler`. A series covering the
 * whole grid is its own column unless `copy` (the caller will fill in place).
 */
export function toGrid(times: Float64Array, series: readonly InputSeries[], filler: number, copy: boolean): Float64Array[] {
  return series.map((s) => {
    // The timestamps are a sorted unique subset of the grid: as many are all of it.
    if (s.timestamps.length === times.length) return copy ? s.values.slice() : s.values;
    const col = new Float64Array(times.length).fill(filler);
    let g = 0;
    for (let i = 0; i < s.timestamps.length; i++) {
      const t = s.timestamps[i]!;
      while (times[g]! < t) g++;
      col[g] = s.values[i]!;
    }
    return col;
  });
}

function forwardFill(col: Float64Array): void {
  let last = NaN;
  for (let i = 0; i < col.length; i++) {
    const x = col[i]!;
    if (x === x) last = x;
    else col[i] = last;
  }
}

function backwardFill(col: Float64Array): void {
  let next = NaN;
  for (let i = col.length - 1; i >= 0; i--) {
    const x = col[i]!;
    if (x === x) next = x;
    else col[i] = next;
  }
}

function applyFill(columns: Float64Array[], mode: FillMode): void {
  for (const col of columns) {
    if (mode === 'ffill' || mode === 'full_ffill') forwardFill(col);
    if (mode === 'bfill' || mode === 'full_bfill' || mode === 'full_ffill') backwardFill(col);
    if (mode === 'full_bfill') forwardFill(col);
  }
}

/** `%f` of Python. */
const pctF = (v: number): string => v.toFixed(6);

function sliceSeries(s: InputSeries, granularity: Grouping, start?: number, stop?: number): InputSeries {
  let from = 0;
  let to = s.timestamps.length;
  if (start !== undefined && typeof granularity === 'number') from = lowerBound(s.timestamps, roundTimestamp(start, granularity));
  if (stop !== undefined) to = lowerBound(s.timestamps, stop);
  if (from === 0 && to === s.timestamps.length) return s;
  to = Math.max(from, to);
  return { key: s.key, timestamps: s.timestamps.subarray(from, to), values: s.values.subarray(from, to) };
}

export function alignAndEvaluate(inputs: readonly SamplingInput[], operations: OperationNode, options: AlignOptions): AggregatesResult {
  const { start, stop, fill, neededOverlap } = options;
  const ordered = [...inputs].sort((a, b) => {
    const ga = typeof a.granularity === 'number' ? a.granularity : Infinity;
    const gb = typeof b.granularity === 'number' ? b.granularity : Infinity;
    return gb - ga;
  });
  let aggregated = false;
  const samplings: SamplingResult[] = [];
  for (const input of ordered) {
    const series = input.series.map((s) => sliceSeries(s, input.granularity, start, stop));
    const keys = series.map((s) => s.key);
    let times = unionTimestamps(series.map((s) => s.timestamps));
    const filler = typeof fill === 'number' ? fill : NaN;
    const fills = typeof fill === 'string' && fill !== 'null' && fill !== 'dropna';
    let columns = toGrid(times, series, filler, fills);
    if (fills) applyFill(columns, fill);

    if (fill === undefined) {
      const rows = times.length;
      let first = -1;
      let last = -1;
      let overlap = 0;
      for (let r = 0; r < rows; r++) {
        let complete = true;
        for (const col of columns) {
          const x = col[r]!;
          if (x !== x) {
            complete = false;
            break;
          }
        }
        if (complete) {
          overlap++;
          if (first === -1) first = r;
          last = r;
        }
      }
      if (overlap === 0 && neededOverlap > 0) throw unaggregable(keys, 'No overlap');
      if (rows > 0) {
        let from = 0;
        let to = rows;
        if (stop === undefined && overlap > 0) to = last + 1;
        if (start === undefined && overlap > 0) from = first;
        if (from !== 0 || to !== rows) {
          times = times.subarray(from, to);
          columns = columns.map((c) => c.subarray(from, to));
        }
        const percent = (overlap * 100) / times.length;
        if (percent < neededOverlap) {
          throw unaggregable(
            keys,
            `Less than ${pctF(neededOverlap)}% of datapoints overlap in this timespan (${percent.toFixed(2)}%)`,
          );
        }
      }
    }

    const result = evaluate(operations, { granularity: input.granularity, timestamps: times, columns, keys });
    aggregated = result.aggregated;
    if (typeof result.values === 'number') throw unaggregable(keys, 'Operations do not produce timeseries');
    samplings.push({
      granularity: result.granularity,
      timestamps: result.timestamps,
      columns: result.aggregated ? result.values.slice(0, 1) : result.values,
    });
  }
  return { aggregated, samplings };
}

/** Whether a point is left out of the answer under `fill`. */
export function dropsPoint(fill: Fill | undefined, value: number): boolean {
  if (fill === 'dropna') return value !== value || value === Infinity || value === -Infinity;
  if (fill === 'ffill' || fill === 'bfill' || fill === 'full_ffill' || fill === 'full_bfill') return value !== value;
  return false;
}
