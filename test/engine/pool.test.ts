import { describe, expect, it } from 'vitest';
import type { ArchivePolicy } from '../../engine/archive-policy.js';
import { fromTask, packResults, toTask, unpackResults } from '../../engine/pool.js';

const policy = (name: string): ArchivePolicy =>
  ({ name, backWindow: 0, definition: [{ granularity: 1e6, points: 60, timespan: 60e6 }], aggregationMethods: ['mean'] }) as ArchivePolicy;

describe('worker tasks', () => {
  it('carry each policy once and give every job its policy back, with the batch\'s lease', () => {
    const [a, b] = [policy('a'), policy('b')];
    const refs = [{ seq: 7, offset: 45, count: 2 }];
    const jobs = [{ metricId: 'm1', policy: a, refs }, { metricId: 'm2', policy: b, refs: [] }, { metricId: 'm3', policy: a, refs }];
    const lease = { shard: 3, fence: 12 };
    const task = toTask({ kind: 'lmdb', dataDir: '/data' }, jobs, lease);
    expect(task.policies.map((p) => p.name)).toEqual(['a', 'b']);
    expect(fromTask(structuredClone(task))).toEqual({ jobs, lease });
  });

  it.each([
    ['no result', []],
    ['results in batch order, seqs past 32 bits kept', [
      { metricId: 'm2', consumed: 10_000, lastSeq: 2 ** 40 + 1, looseRows: 0 },
      { metricId: 'm1', consumed: 0, lastSeq: 3, looseRows: 15 },
    ]],
  ])('carry %s back as they were', (_name, results) => {
    expect(unpackResults(structuredClone(packResults(results)))).toEqual(results);
  });
});
