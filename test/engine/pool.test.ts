import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { ArchivePolicy } from '../../engine/archive-policy.js';
import { createWorkerRunner, fromTask, packResults, toTask, unpackResults } from '../../engine/pool.js';
import { tempDirs } from '../temp-dirs.js';

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
