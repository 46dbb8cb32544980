// Incoming records (one per push, shared by its metrics) and the recovery of
// pending points from them: after a restart, points a metric's state already
// holds are not counted again and the others are not lost; a format 1 data
// directory's per-metric entries are moved into records when it is opened.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Engine } from '../../engine/engine.js';
import { packedResults, setResult } from '../../engine/job-batch.js';
import { Processor, SETTLE_LEAST_ROWS } from '../../engine/processor.js';
import { encodeIncomingBatch, encodeIncomingPoints, incomingEntries, type IncomingPoints } from '../../engine/incoming-batch.js';
import { RecordPoints } from '../../engine/packed-record.js';
import type { MetricRecord } from '../../engine/index.js';
import { FORMAT_VERSION } from '../../engine/storage.js';
import { incomingDir, segmentFiles } from '../../engine/drivers/lmdb/segment-log.js';
import { unpackJobs } from './job-batches.js';

const S = 1_000_000;
const T0 = Date.UTC(2024, 0, 1) * 1000;
const series = (points: [number, number][]) => ({
  timestamps: Float64Array.from(points, ([t]) => T0 + t * S),
  values: Float64Array.from(points, ([, v]) => v),
});

describe('incoming records', () => {
  it('give back each metric\'s points by offset', () => {
    const { bytes, entries } = encodeIncomingBatch(new Map([['a', series([[0, 1], [1, 2]])], ['bb', series([])], ['c', series([[5, -0.5]])]]));
    expect(incomingEntries(bytes)).toEqual(entries);
    expect(entries.metricIds).toEqual(['a', 'bb', 'c']);
    expect([...entries.counts]).toEqual([2, 0, 1]);
    expect([...entries.oldest]).toEqual([T0, Infinity, T0 + 5 * S]);
    expect([...entries.newest]).toEqual([T0 + S, -Infinity, T0 + 5 * S]);
    const into = series([[0, 0], [0, 0], [0, 0], [0, 0]]);
    const record = new RecordPoints().of(bytes, false);
    expect(record.copy(entries.offsets[2]!, entries.counts[2]!, into, 0)).toBe(1);
    expect(record.copy(entries.offsets[0]!, entries.counts[0]!, into, 1)).toBe(3);
    expect([...into.timestamps]).toEqual([T0 + 5 * S, T0, T0 + S, T0]);
    expect([...into.values]).toEqual([-0.5, 1, 2, 0]);
  });
});

/** The record layout as documented, written field by field: what encodeIncomingPoints must give whatever it encoded before. */
function referenceRecord(metrics: [id: string, points: [number, number][]][]): Buffer {
  const parts: Buffer[] = [Buffer.alloc(4)];
  parts[0]!.writeUInt32LE(metrics.length);
  for (const [id, points] of metrics) {
    const head = Buffer.alloc(1 + id.length + 4);
    head[0] = id.length;
    head.write(id, 1, 'latin1');
    head.writeUInt32LE(points.length, 1 + id.length);
    const body = Buffer.alloc(16 * points.length);
    points.forEach(([t, v], k) => {
      body.writeDoubleLE(t, 8 * k);
      body.writeDoubleLE(v, 8 * (points.length + k));
    });
    parts.push(head, body);
  }
  return Buffer.concat(parts);
}

/** A collector's push: every metric's points in one pair of columns. */
function columns(metrics: [id: string, points: [number, number][]][]): IncomingPoints {
  const all = metrics.flatMap(([, points]) => points);
  const count = Uint32Array.from(metrics, ([, points]) => points.length);
  const start = new Uint32Array(metrics.length);
  for (let i = 1; i < metrics.length; i++) start[i] = start[i - 1]! + count[i - 1]!;
  return { metricIds: metrics.map(([id]) => id), start, count, timestamps: Float64Array.from(all, ([t]) => t), values: Float64Array.from(all, ([, v]) => v) };
}

describe('records of successive pushes', () => {
  const id = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`;
  // Each push after the first starts from the bytes of the record before when its ids and counts match.
  it.each<[string, [string, [number, number][]][][]]>([
    ['the same metrics and counts', [[[id(1), [[1, 1]]], [id(2), [[1, 2]]]], [[id(1), [[2, 3]]], [id(2), [[2, 4]]]], [[id(1), [[3, 5]]], [id(2), [[3, 6]]]]]],
    ['a metric replaced by one of the same length', [[[id(1), [[1, 1]]], [id(2), [[1, 2]]]], [[id(1), [[2, 3]]], [id(3), [[2, 4]]]]]],
    ['a count changed', [[[id(1), [[1, 1]]], [id(2), [[1, 2]]]], [[id(1), [[2, 3], [3, 3]]], [id(2), [[2, 4]]]]]],
    ['the same metrics in another order', [[[id(1), [[1, 1]]], [id(2), [[1, 2]]]], [[id(2), [[2, 3]]], [id(1), [[2, 4]]]]]],
    ['one metric more, then fewer', [[[id(1), [[1, 1]]]], [[id(1), [[2, 3]]], [id(2), [[2, 4]]]], [[id(2), [[3, 5]]]]]],
  ])('are the layout\'s bytes whatever came before: %s', (_case, pushes) => {
    for (const metrics of pushes) {
      const { bytes, entries } = encodeIncomingPoints(columns(metrics));
      expect(bytes.equals(referenceRecord(metrics))).toBe(true);
      expect(incomingEntries(bytes)).toEqual(entries);
    }
  });

  it('are the layout\'s bytes for a subset of a push (another shard\'s metrics left out)', () => {
    const metrics: [string, [number, number][]][] = [[id(1), [[1, 1]]], [id(2), [[1, 2]]], [id(3), [[1, 3]]]];
    encodeIncomingPoints(columns(metrics));
    expect(encodeIncomingPoints(columns(metrics), [0, 2]).bytes.equals(referenceRecord([metrics[0]!, metrics[2]!]))).toBe(true);
  });
});

describe('pending points across restarts', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  async function open(dataDir: string): Promise<Engine> {
    const engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });
    await engine.processor.stop();
    return engine;
  }

  async function setUp(): Promise<{ dataDir: string; engine: Engine; a: MetricRecord; b: MetricRecord }> {
    const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-incoming-'));
    dirs.push(dataDir);
    const engine = await open(dataDir);
    await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: S, points: 3600, timespan: 3600 * S }], aggregationMethods: ['count', 'sum'] });
    const metric = () => engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null });
    return { dataDir, engine, a: await metric(), b: await metric() };
  }

  const sum = async (engine: Engine, m: MetricRecord) =>
    (await engine.getMeasures(m, { method: 'sum', refresh: true })).flatMap((s) => [...s.values]).reduce((x, y) => x + y, 0);

  it('resumes a record one metric consumed and the other did not, counting nothing twice', async () => {
    const { dataDir, engine, a, b } = await setUp();
    await engine.addMeasures(new Map([[a.id, series([[0, 1], [1, 2]])], [b.id, series([[0, 10]])]]));
    await engine.processor.refresh([a.id]);
    expect(engine.processor.backlog().measures).toBe(1);
    await engine.close();

    const reopened = await open(dataDir);
    expect(reopened.processor.backlog()).toMatchObject({ metrics: 1, measures: 1 });
    expect(await sum(reopened, a)).toBe(3);
    expect(await sum(reopened, b)).toBe(10);
    // Records are dropped in the background once processed.
    await vi.waitFor(() => expect(segmentFiles(incomingDir(dataDir)), 'a record nothing needs is deleted, and its segment').toEqual([]));
    await reopened.close();
  });

  it('drops the points of a metric deleted before the restart and keeps the others', async () => {
    const { dataDir, engine, a, b } = await setUp();
    await engine.addMeasures(new Map([[a.id, series([[0, 1]])], [b.id, series([[0, 10]])]]));
    await engine.deleteMetric(a.id);
    await engine.close();
    const reopened = await open(dataDir);
    expect(reopened.processor.backlog()).toMatchObject({ metrics: 1, measures: 1 });
    expect(await sum(reopened, b)).toBe(10);
    await reopened.close();
  });

  it('continues record keys above those used before, even once all were deleted', async () => {
    const { dataDir, engine, a } = await setUp();
    await engine.addMeasures(new Map([[a.id, series([[0, 1]])]]));
    await engine.processor.refresh([a.id]);
    await engine.close();
    const reopened = await open(dataDir);
    await reopened.addMeasures(new Map([[a.id, series([[1, 2]])]]));
    await reopened.close();
    const again = await open(dataDir);
    expect(await sum(again, a)).toBe(3);
    await again.close();
  });

  it('moves a format 1 directory\'s per-metric entries into records', async () => {
    const { dataDir, engine, a } = await setUp();
    const old = series([[0, 4], [1, 5]]);
    const bytes = Buffer.concat([Buffer.from(old.timestamps.buffer), Buffer.from(old.values.buffer)]);
    engine.storage.incoming.putSync([a.id, 42], bytes);
    engine.storage.meta.putSync('format', 1);
    await engine.close();

    const upgraded = await open(dataDir);
    expect(upgraded.storage.meta.get('format')).toBe(FORMAT_VERSION);
    expect([...upgraded.storage.incoming.getKeys()]).toEqual([]);
    expect(await sum(upgraded, a)).toBe(9);
    await upgraded.close();
  });
});

describe('the processor', () => {
  it('starts the next batch when one finishes, not when the idle interval runs out', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-processor-'));
    const engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 3_600_000 });
    try {
      await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: S, points: 60, timespan: 60 * S }], aggregationMethods: ['count'] });
      // More metrics than one batch holds (256), so a second batch is needed.
      const ids: string[] = [];
      for (let i = 0; i < 300; i++) {
        ids.push((await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null })).id);
      }
      await engine.addMeasures(new Map(ids.map((id) => [id, series([[0, 1]])])));
      await engine.processor.drained();
      expect(engine.processor.backlog(false)).toMatchObject({ metrics: 0, measures: 0 });
    } finally {
      await engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 20_000);

  it('drains with settling off, however many loose rows its batches leave', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-processor-'));
    const engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 3_600_000 });
    try {
      await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: S, points: 3600, timespan: 3600 * S }], aggregationMethods: ['count'] });
      const m = await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null });
      await engine.addMeasures(new Map([[m.id, series(Array.from({ length: 2 * SETTLE_LEAST_ROWS }, (_, i) => [i, 1] as [number, number]))]]));
      await engine.processor.drained();
      expect(engine.processor.backlog(false)).toMatchObject({ metrics: 0, measures: 0 });
    } finally {
      await engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('retries a failed batch after the interval, not in a tight loop', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-processor-'));
    const engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 3_600_000 });
    let calls = 0;
    const processor = new Processor({
      drivers: engine.drivers,
      index: engine.index,
      runner: async () => {
        calls++;
        throw new Error('Input/output error');
      },
      parallelism: 1,
      intervalMs: 3_600_000,
      batchSize: 10,
    });
    try {
      await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: S, points: 60, timespan: 60 * S }], aggregationMethods: ['count'] });
      const m = await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null });
      await processor.open();
      processor.start();
      processor.noteIncoming(0, 1, encodeIncomingBatch(new Map([[m.id, series([[0, 1]])]])).entries);
      await new Promise((r) => setTimeout(r, 300));
      expect(calls).toBe(1);
    } finally {
      await processor.close();
      await engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('never puts a metric twice in one batch, when a new sweep meets the ids the previous one took', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-processor-'));
    const engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 3_600_000 });
    const batches: string[][] = [];
    const held: (() => void)[] = [];
    const processor = new Processor({
      drivers: engine.drivers,
      index: engine.index,
      // Batches stay in flight until released; each consumes every ref it was given.
      runner: (batch) => {
        batches.push(batch.metricIds);
        const results = packedResults(batch.metricIds.length);
        unpackJobs(batch).forEach((job, i) => setResult(results, i, 1, Math.max(...job.refs.map((r) => r.seq)), 0));
        return new Promise((resolve) => held.push(() => resolve(results)));
      },
      parallelism: 2,
      intervalMs: 3_600_000,
      batchSize: 256,
    });
    const settle = () => new Promise((r) => setTimeout(r, 20));
    try {
      await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: S, points: 60, timespan: 60 * S }], aggregationMethods: ['count'] });
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push((await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null })).id);
      const push = (seq: number) => processor.noteIncoming(0, seq, encodeIncomingBatch(new Map(ids.map((metricId) => [metricId, series([[0, 1]])]))).entries);
      await processor.open();
      processor.start();
      push(1);
      await settle();
      expect(batches.map((b) => b.length)).toEqual([5, 5]);
      // One batch finishes while the other is in flight, and every metric has new points:
      // the next batch (up to 10) starts a new sweep twice over the same 5 free metrics.
      push(2);
      held.shift()!();
      await settle();
      expect(batches).toHaveLength(3);
      expect(new Set(batches[2]).size).toBe(batches[2]!.length);
      expect(batches[2]).toHaveLength(5);
    } finally {
      for (const release of held) release();
      await processor.close();
      await engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
