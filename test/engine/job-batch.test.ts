import { describe, expect, it } from 'vitest';
import type { ArchivePolicy } from '../../engine/archive-policy.js';
import { JobBatchBuilder } from '../../engine/job-batch.js';
import { unpackJobs } from './job-batches.js';

const policy = (name: string): ArchivePolicy =>
  ({ name, backWindow: 0, definition: [{ granularity: 1e6, points: 60, timespan: 60e6 }], aggregationMethods: ['mean'] }) as ArchivePolicy;

describe('JobBatchBuilder', () => {
  it('lays each job\'s refs where its ref count put them, and sizes every column to the jobs added', () => {
    const [a, b] = [policy('a'), policy('b')];
    // Room for 8 jobs, as the processor reserves for a batch some of whose metrics it forgets.
    const builder = new JobBatchBuilder(8);
    builder.add('m1', a, 2);
    builder.add('m2', b, 0);
    builder.add('m3', a, 1);
    const filled: [number, string, number, number][] = [];
    const batch = builder.build((job, metricId, count, refs, at) => {
      filled.push([job, metricId, count, at]);
      for (let r = 0; r < count; r++) refs.set([10 * job + r, 100 * job + r, job + 1], at + 3 * r);
    });
    expect(filled).toEqual([[0, 'm1', 2, 0], [1, 'm2', 0, 6], [2, 'm3', 1, 6]]);
    expect(unpackJobs(batch)).toEqual([
      { metricId: 'm1', policy: a, refs: [{ seq: 0, offset: 0, count: 1 }, { seq: 1, offset: 1, count: 1 }] },
      { metricId: 'm2', policy: b, refs: [] },
      { metricId: 'm3', policy: a, refs: [{ seq: 20, offset: 200, count: 3 }] },
    ]);
    // What is posted to a worker is cloned with its buffers: none may carry the unused room.
    expect([batch.policyIndexes.buffer.byteLength, batch.refStarts.buffer.byteLength, batch.refs.buffer.byteLength]).toEqual([3 * 4, 4 * 4, 9 * 8]);
    expect(batch.policies).toEqual([a, b]);
  });

  it('gives every job of a settling batch its least rows and no refs', () => {
    const builder = new JobBatchBuilder(2, 5);
    builder.add('m1', policy('a'), 0);
    expect(unpackJobs(builder.build(() => undefined))).toEqual([{ metricId: 'm1', policy: policy('a'), refs: [], settle: 5 }]);
  });
});
