/**
 * Synthetic input of the aggregates benchmark: `series` gauges of `points`
 * values at one granularity, all sharing their timestamps, deterministic so
 * that the main thread and workers build the same data.
 */
import type { SamplingInput } from '../engine/aggregates/align.js';
import { parseOperations, type OperationNode } from '../formats/operations.js';

export const GRANULARITY = 60_000_000;
const ORIGIN = 1_704_067_200_000_000;

export function makeInput(series: number, points: number, from = 0, to = points): SamplingInput {
  const n = to - from;
  const timestamps = new Float64Array(n);
  for (let i = 0; i < n; i++) timestamps[i] = ORIGIN + (from + i) * GRANULARITY;
  const input: SamplingInput = { granularity: GRANULARITY, series: [] };
  for (let s = 0; s < series; s++) {
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) values[i] = 50 + 40 * Math.sin((from + i) / 97 + s) + ((from + i) * 31 + s * 7) % 13;
    input.series.push({ key: [`m${s}`, 'mean'], timestamps, values });
  }
  return input;
}

/** `(aggregate mean <inner (metric (m0 mean) ...)>)`, `inner` wrapping the metric node. */
export function makeOperations(series: number, wrap: (metric: unknown[]) => unknown[] = (m) => m): OperationNode {
  const metric = ['metric', ...Array.from({ length: series }, (_, s) => [`m${s}`, 'mean'])];
  return parseOperations(['aggregate', 'mean', wrap(metric)]);
}
