import type { CollectorBatch } from '../../engine/collector.js';

/** A collector batch as what a write stores: each metric (resource key and name) with its points, in order. */
export function grouped(batch: CollectorBatch): [string, string, number[], number[]][] {
  const { start, count, timestamps, values } = batch.series();
  return batch.metrics.map((m, i) => [
    m.resource.key,
    m.name,
    [...timestamps.subarray(start[i]!, start[i]! + count[i]!)],
    [...values.subarray(start[i]!, start[i]! + count[i]!)],
  ]);
}
