// How many points a cross-metric task may read (engine/aggregates/task.ts),
// from which the route decides between running it inline and on a worker.
import { describe, expect, it } from 'vitest';
import type { ArchivePolicy } from '../../engine/archive-policy.js';
import { estimatedPoints, type SeriesRef } from '../../engine/aggregates/task.js';

const S = 1_000_000;
const policy = (points: number | null): ArchivePolicy => ({
  name: 'p',
  backWindow: 0,
  aggregationMethods: ['mean'],
  definition: [
    { granularity: 60 * S, points, timespan: points === null ? null : points * 60 * S },
    { granularity: 3600 * S, points: 24, timespan: 86_400 * S },
  ],
});
const ref = (p: ArchivePolicy): SeriesRef => ({ metricId: 'm', policy: p, aggregation: 'mean', key: ['m', 'mean'], name: 'm' });

describe('estimatedPoints', () => {
  it.each<[string, SeriesRef[], number[], number | undefined, number | undefined, number]>([
    ['the policy points of each series', [ref(policy(1000)), ref(policy(500))], [60 * S], undefined, undefined, 1500],
    ['summed over granularities', [ref(policy(1000))], [60 * S, 3600 * S], undefined, undefined, 1024],
    ['a closed window bounds each series', [ref(policy(1000)), ref(policy(1000))], [60 * S], 0, 600 * S, 22],
    ['a window larger than the retention', [ref(policy(10))], [60 * S], 0, 6000 * S, 10],
    ['an open window keeps the policy bound', [ref(policy(100))], [60 * S], 0, undefined, 100],
    ['unbounded policy, open window', [ref(policy(null))], [60 * S], undefined, undefined, Infinity],
    ['unbounded policy, closed window', [ref(policy(null))], [60 * S], 0, 120 * S, 3],
    ['no reference', [], [60 * S], undefined, undefined, 0],
  ])('%s', (_name, refs, granularities, start, stop, expected) => {
    expect(estimatedPoints({ refs, granularities, ...(start === undefined ? {} : { start }), ...(stop === undefined ? {} : { stop }) })).toBe(expected);
  });
});
