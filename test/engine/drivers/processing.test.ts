// Processing and reading through each driver set give the same answers:
// pushes across several splits, each sealed as newer points come, then a
// late point merged into a sealed split (on Redis, its splits in Redis or in
// an object store, a split the first load did not bring: a second round),
// and a read of every granularity.
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { ArchivePolicy } from '../../../engine/archive-policy.js';
import type { Lease } from '../../../engine/drivers/types.js';
import { withSnapshot } from '../../../engine/drivers/snapshot-rounds.js';
import { encodeIncomingBatch } from '../../../engine/incoming-batch.js';
import { readMeasures, readRanges } from '../../../engine/read-measures.js';
import { IMPLEMENTATIONS, type Subject } from './subjects.js';
import { processJobs } from '../job-batches.js';

const S = 1e6;
const POLICY: ArchivePolicy = {
  name: 'p',
  backWindow: 3,
  aggregationMethods: ['count', 'sum'],
  definition: [
    { granularity: 60 * S, points: 100_000, timespan: 6_000_000 * S },
    { granularity: 3600 * S, points: 1000, timespan: 3_600_000 * S },
  ],
};

const series = (seconds: number[], value: (s: number) => number) => ({
  timestamps: Float64Array.from(seconds, (s) => s * S),
  values: Float64Array.from(seconds, value),
});

const range = (from: number, to: number, step: number) => Array.from({ length: Math.ceil((to - from) / step) }, (_, i) => from + i * step);

/** Pushes, in this order: three sealed 60 s splits' worth (3,600 points each), then late points inside the first split. */
const PUSHES = [
  range(0, 60 * 3600, 60),
  range(60 * 3600, 3 * 60 * 3600 + 600, 60),
  [60 * 3600 * 3 - 7200 + 30, 60 * 3600 * 3 - 7200 + 90],
];

async function pushAndProcess(subject: Subject, lease: Lease, metricId: string, seconds: number[]): Promise<void> {
  const { bytes, entries } = encodeIncomingBatch(new Map([[metricId, series(seconds, (s) => (s % 7) + 0.5)]]));
  const shard = subject.incoming.shardOf(metricId);
  const seq = (await subject.incoming.append(new Map([[shard, bytes]]))).get(shard)!;
  const refs = [{ seq, offset: entries.offsets[0]!, count: entries.counts[0]! }];
  await processJobs(subject, [{ metricId, policy: POLICY, refs }], lease);
}

async function readAll(subject: Subject, metricId: string) {
  const granularities = POLICY.definition.map((d) => d.granularity);
  return withSnapshot(subject.series, [metricId], readRanges(metricId, granularities, undefined, undefined), (snapshot) =>
    POLICY.aggregationMethods.map((method) =>
      readMeasures(snapshot, metricId, POLICY, { method, granularities }).map((s) => ({ ...s, timestamps: [...s.timestamps], values: [...s.values] })),
    ),
  );
}

const subjects: Subject[] = [];
afterEach(async () => {
  for (const s of subjects.splice(0)) await s.close();
});
afterAll(async () => {
  for (const implementation of IMPLEMENTATIONS) await implementation.shutdown?.();
});

describe('processing through the drivers', () => {
  const others = IMPLEMENTATIONS.slice(1).map((implementation) => [implementation.name, implementation] as const);
  it.for(others)('reads the same on %s as on LMDB after pushes, seals and a late point into a sealed split', { timeout: 240_000 }, async ([, other], ctx) => {
    const answers: unknown[] = [];
    for (const implementation of [IMPLEMENTATIONS[0]!, other]) {
      if (implementation.missing !== undefined) {
        ctx.skip(implementation.missing);
        return;
      }
      const subject = await implementation.open();
      subjects.push(subject);
      const metricId = '6f1c3b1e-5d8e-4d7a-9a54-0c1d2e3f4a5b';
      await subject.createMetric(metricId);
      const lease = await subject.lease(subject.incoming.shardOf(metricId));
      for (const seconds of PUSHES.slice(0, -1)) await pushAndProcess(subject, lease, metricId, seconds);
      const loads = vi.spyOn(subject.series, 'load');
      await pushAndProcess(subject, lease, metricId, PUSHES.at(-1)!);
      // LMDB reads in place; Redis loaded no sealed split at first, and the late points needed one.
      expect(loads).toHaveBeenCalledTimes(implementation.name === 'LMDB' ? 1 : 2);
      loads.mockRestore();
      answers.push(await readAll(subject, metricId));
    }
    const [lmdb, theirs] = answers as [number[][], unknown];
    // The late points count: 3 splits' worth plus 10 points plus 2 late ones in the hour rows.
    const hourCounts = (lmdb as unknown as { values: number[] }[][])[0]![1]!.values;
    expect(hourCounts.reduce((a, b) => a + b, 0)).toBe(PUSHES.flat().length);
    expect(theirs).toEqual(lmdb);
  });
});
