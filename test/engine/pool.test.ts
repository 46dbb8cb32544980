import { describe, expect, it } from 'vitest';
import type { ArchivePolicy } from '../../engine/archive-policy.js';
import { fromTask, toTask } from '../../engine/pool.js';

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
});
