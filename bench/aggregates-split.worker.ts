/**
 * Benchmark worker: evaluates `(aggregate mean (metric ...))` over a time
 * range of the synthetic input, which it builds once and keeps (standing in
 * for the splits a real worker reads from LMDB), and returns the one column.
 */
import { alignAndEvaluate, type SamplingInput } from '../engine/aggregates/align.js';
import { makeInput, makeOperations } from './aggregates-data.js';

export interface SplitTask {
  series: number;
  points: number;
  from: number;
  to: number;
}

const inputs = new Map<string, SamplingInput>();

export default function evaluateRange({ series, points, from, to }: SplitTask): Float64Array {
  const key = `${series}/${points}/${from}/${to}`;
  let input = inputs.get(key);
  if (input === undefined) {
    input = makeInput(series, points, from, to);
    inputs.set(key, input);
  }
  const result = alignAndEvaluate([input], makeOperations(series), { neededOverlap: 100, fill: 'dropna' });
  return result.samplings[0]!.columns[0]!;
}
