import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { ArchivePolicy } from '../../engine/archive-policy.js';
import { packedResults, setResult } from '../../engine/job-batch.js';
import { createWorkerRunner, toTask } from '../../engine/pool.js';
import { tempDirs } from '../temp-dirs.js';
import { packJobs, resultsOf, unpackJobs } from './job-batches.js';

const policy = (name: string): ArchivePolicy =>
  ({ name, backWindow: 0, definition: [{ granularity: 1e6, points: 60, timespan: 60e6 }], aggregationMethods: ['mean'] }) as ArchivePolicy;

describe('worker tasks', () => {
  it('carry each policy once and give every job its policy and refs back, with the batch\'s lease', () => {
    const [a, b] = [policy('a'), policy('b')];
    const refs = [{ seq: 7, offset: 45, count: 2 }, { seq: 2 ** 40 + 1, offset: 4, count: 1 }];
    const jobs = [{ metricId: 'm1', policy: a, refs }, { metricId: 'm2', policy: b, refs: [] }, { metricId: 'm3', policy: a, refs: refs.slice(1) }];
    const task = structuredClone(toTask({ kind: 'lmdb', dataDir: '/data' }, packJobs(jobs), { shard: 3, fence: 12 }));
    expect(task.policies.map((p) => p.name)).toEqual(['a', 'b']);
    expect({ shard: task.shard, fence: task.fence, settle: task.settle }).toEqual({ shard: 3, fence: 12, settle: undefined });
    expect(unpackJobs(task)).toEqual(jobs);
  });

  it('carry a settling batch\'s least rows', () => {
    const task = toTask({ kind: 'lmdb', dataDir: '/data' }, packJobs([{ metricId: 'm1', policy: policy('a'), refs: [], settle: 5 }]), { shard: 0, fence: 0 });
    expect(structuredClone(task).settle).toBe(5);
  });

  it.each([
    ['no result', []],
    ['results in batch order, seqs past 32 bits kept', [
      { metricId: 'm2', consumed: 10_000, lastSeq: 2 ** 40 + 1, looseRows: 0 },
      { metricId: 'm1', consumed: 0, lastSeq: 3, looseRows: 15 },
    ]],
  ])('carry %s back as they were, without the ids', (_name, results) => {
    const packed = packedResults(results.length);
    results.forEach(({ consumed, lastSeq, looseRows }, i) => setResult(packed, i, consumed, lastSeq, looseRows));
    expect(resultsOf(results.map((r) => r.metricId), structuredClone(packed))).toEqual(results);
  });
});

describe('worker runner', () => {
  const tempDir = tempDirs('gnocchi-pool-');

  it('asks every idle worker thread once to let go of its record caches', async () => {
    const runner = createWorkerRunner({ kind: 'lmdb', dataDir: tempDir() }, 3);
    const distinct = async () => new Set(await runner.release()).size;
    try {
      // Until every thread is up, one that is may take two tasks: the engine asks at the end of a burst.
      for (let wait = 0; wait < 100 && (await distinct()) < 3; wait++) await sleep(100);
      for (let round = 0; round < 3; round++) expect(await distinct()).toBe(3);
    } finally {
      await runner.destroy();
    }
  });
});
