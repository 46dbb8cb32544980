// One processing batch takes each of its metrics' points out of the records
// they share: every metric gets its own points, each push kept apart, so a
// later push replaces a raw value of an earlier one whatever the metric's
// place in the batch and in the records; and the batch's stored states are
// read right however many bytes they take together, and metrics fed alike
// (the same number of points and pushes, which reuse the views and arrays
// of the metric planned before them) each keep to their own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../engine/engine.js';
import { encodeIncomingBatch } from '../../engine/incoming-batch.js';
import type { MetricRecord } from '../../engine/index.js';
import { processJobs, type IncomingRef } from './job-batches.js';

const S = 1_000_000;
const T0 = Date.UTC(2024, 0, 1) * 1000;

type Points = [second: number, value: number][];

const series = (points: Points) => ({
  timestamps: Float64Array.from(points, ([t]) => T0 + t * S),
  values: Float64Array.from(points, ([, v]) => v),
});

/** Three pushes of metrics a, b and c, in this order; a metric may sit out a push. */
const PUSHES: Record<string, Points>[] = [
  { a: [[0, 1], [1, 2]], b: [[0, 10]], c: [[5, 100]] },
  { c: [[5, 200], [6, 300]], a: [[1, 3]] },
  { b: [[0, 20], [2, 30]], a: [[0, 7]] },
];

const cases: [metric: string, expected: Points][] = [
  ['a', [[0, 7], [1, 3]]],
  ['b', [[0, 20], [2, 30]]],
  ['c', [[5, 200], [6, 300]]],
];

describe('a processing batch over shared records', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it.each(cases)('gives metric %s the values of its latest push per timestamp', async (name, expected) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-process-metrics-'));
    dirs.push(dataDir);
    const engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });
    try {
      await engine.processor.stop();
      await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: S, points: 3600, timespan: 3600 * S }], aggregationMethods: ['count', 'sum'] });
      const records = new Map<string, MetricRecord>();
      for (const metric of ['a', 'b', 'c']) {
        records.set(metric, await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null }));
      }
      const ids = new Map([...records].map(([metric, record]) => [metric, record.id]));
      for (const push of PUSHES) await engine.addMeasures(new Map(Object.entries(push).map(([metric, points]) => [ids.get(metric)!, series(points)])));
      // All three in one batch.
      await engine.processor.refresh([...ids.values()]);
      const metric = records.get(name)!;
      const sums = await engine.getMeasures(metric, { method: 'sum' });
      const counts = await engine.getMeasures(metric, { method: 'count' });
      expect(sums.flatMap((s) => [...s.timestamps].map((t, i): [number, number] => [(t - T0) / S, s.values[i]!]))).toEqual(expected);
      expect(counts.flatMap((s) => [...s.values])).toEqual(expected.map(() => 1));
    } finally {
      await engine.close();
    }
  });

  it('updates every metric of a batch whose states together pass the first 64 KB the batch copies them into', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-process-metrics-'));
    dirs.push(dataDir);
    const engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });
    try {
      await engine.processor.stop();
      // A 1 h block: each state keeps its tail of 200 raw points inline, ~3.2 KB.
      await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: 3600 * S, points: 24, timespan: 24 * 3600 * S }], aggregationMethods: ['count', 'sum'] });
      const metrics: MetricRecord[] = [];
      for (let m = 0; m < 30; m++) metrics.push(await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null }));
      const seconds = Array.from({ length: 200 }, (_, i) => i);
      await engine.addMeasures(new Map(metrics.map((m, k) => [m.id, series(seconds.map((t): [number, number] => [t, k]))])));
      await engine.processor.refresh(metrics.map((m) => m.id));
      await engine.addMeasures(new Map(metrics.map((m, k) => [m.id, series([[200, 1000 * k]])])));
      await engine.processor.refresh(metrics.map((m) => m.id));
      const answers = [];
      for (const m of metrics) answers.push([(await engine.getMeasures(m, { method: 'count' }))[0]!.values[0], (await engine.getMeasures(m, { method: 'sum' }))[0]!.values[0]]);
      expect(answers).toEqual(metrics.map((_, k) => [201, 200 * k + 1000 * k]));
    } finally {
      await engine.close();
    }
  });

  it.each([
    ['one push', 1],
    ['pushes of a point each, a backlog', 3],
  ])('aggregates each of many metrics fed alike from its own points and its own tail (%s)', async (_name, pushes) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-process-metrics-'));
    dirs.push(dataDir);
    const engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });
    try {
      await engine.processor.stop();
      // Points 60 s apart in 300 s periods: the tail carries the period's earlier points from one round to the next.
      await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: 300 * S, points: 100, timespan: 100 * 300 * S }], aggregationMethods: ['count', 'sum', 'max'] });
      const metrics: MetricRecord[] = [];
      for (let m = 0; m < 20; m++) metrics.push(await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null }));
      const value = (k: number, minute: number) => 1000 * k + minute;
      let minute = 0;
      for (let round = 0; round < 3; round++) {
        for (let p = 0; p < pushes; p++, minute++) {
          await engine.addMeasures(new Map(metrics.map((m, k) => [m.id, series([[60 * minute, value(k, minute)]])])));
        }
        await engine.processor.refresh(metrics.map((m) => m.id));
      }
      const periods = Math.ceil(minute / 5);
      const expected = (k: number) =>
        Array.from({ length: periods }, (_, period) => {
          const minutes = Array.from({ length: Math.min(5, minute - 5 * period) }, (_, i) => 5 * period + i);
          return [minutes.length, minutes.reduce((sum, t) => sum + value(k, t), 0), Math.max(...minutes.map((t) => value(k, t)))];
        });
      const answers = [];
      for (const m of metrics) {
        const [counts, sums, maxes] = await Promise.all(['count', 'sum', 'max'].map(async (method) => (await engine.getMeasures(m, { method })).flatMap((s) => [...s.values])));
        answers.push(counts!.map((c, i) => [c, sums![i], maxes![i]]));
      }
      expect(answers).toEqual(metrics.map((_, k) => expected(k)));
    } finally {
      await engine.close();
    }
  });

  // Pushes of 2, 1 and 4 points; a retry after a crash hands a metric refs its state already holds.
  const COUNTS = [2, 1, 4];
  it.each<[string, first: number[], then: number[], consumed: number, newest: number]>([
    ['every ref new: all their points, the newest seq', [], [0, 1, 2], 7, 2],
    ['a retry with the first push already held: the others\' points only', [0], [0, 1, 2], 5, 2],
    ['a retry with every push held: nothing, the state\'s seq kept', [0, 1, 2], [0, 1], 0, 2],
    ['refs older than the state\'s, then a newer one', [0, 1], [0, 1, 2], 4, 2],
  ])('counts the measures past its state and moves its lastSeq to the newest seq: %s', async (_name, first, then, consumed, newest) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-process-metrics-'));
    dirs.push(dataDir);
    const engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });
    try {
      await engine.processor.stop();
      const policy = await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: S, points: 3600, timespan: 3600 * S }], aggregationMethods: ['count', 'sum'] });
      const metric = await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null });
      const { incoming } = engine.drivers;
      const shard = incoming.shardOf(metric.id);
      const refs: IncomingRef[] = [];
      for (const [p, count] of COUNTS.entries()) {
        const { bytes, entries } = encodeIncomingBatch(new Map([[metric.id, series(Array.from({ length: count }, (_, k): [number, number] => [10 * p + k, 1]))]]));
        const seq = (await incoming.append(new Map([[shard, bytes]]))).get(shard)!;
        refs.push({ seq, offset: entries.offsets[0]!, count: entries.counts[0]! });
      }
      const lease = { shard, fence: 0 };
      const process = (which: number[]) => processJobs(engine.drivers, [{ metricId: metric.id, policy, refs: which.map((p) => refs[p]!) }], lease);
      if (first.length > 0) await process(first);
      expect(await process(then)).toEqual([expect.objectContaining({ consumed, lastSeq: refs[newest]!.seq })]);
      expect((await engine.getMeasures(metric, { method: 'count' })).flatMap((s) => [...s.values])).toEqual(COUNTS.flatMap((c) => Array<number>(c).fill(1)));
    } finally {
      await engine.close();
    }
  });
});
