// The engine answers repeated reads from its read cache (Engine.readJson)
// only while nothing may have changed what a fresh read gives: these pin the
// moments the HTTP tests cannot reach, when a batch's commit or a policy
// change is visible to this thread but has not been reported yet.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Engine } from '../../engine/engine.js';
import { encodeIncomingBatch } from '../../engine/incoming-batch.js';
import { Index, type MetricRecord } from '../../engine/index.js';
import { packedResults, setResult, type PackedResults } from '../../engine/job-batch.js';
import { Processor, type JobRunner } from '../../engine/processor.js';
import type { ReadOptions } from '../../engine/read-measures.js';

const S = 1e6;
const T0 = Date.UTC(2015, 2, 6, 14, 33) * 1000;
const READ: ReadOptions = { method: 'mean', granularities: [S] };

let engine: Engine;
let dataDir: string;
let metric: MetricRecord;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-cached-reads-'));
  engine = await Engine.open({
    dataDir,
    defaultArchivePolicies: false,
    defaultAggregationMethods: ['mean'],
    workers: 0,
    processingIntervalMs: 1e9,
    readCacheSize: 1024 ** 2,
  });
  // Only the tests' refreshes process.
  await engine.processor.stop();
  await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: S, points: 60, timespan: 60 * S }], aggregationMethods: ['mean'] });
  metric = await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null });
});

afterEach(async () => {
  await engine.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Pushes `values` one second apart from T0 + `from` seconds. */
async function push(from: number, values: number[]): Promise<void> {
  const timestamps = Float64Array.from(values, (_, i) => T0 + (from + i) * S);
  await engine.addMeasures(new Map([[metric.id, { timestamps, values: Float64Array.from(values) }]]));
}

/** The values of an answer, in its order. */
async function read(): Promise<number[]> {
  return (JSON.parse((await engine.readJson(metric, READ)).toString()) as [string, number, number][]).map(([, , v]) => v);
}

describe('Engine.readJson', () => {
  it('keeps an answer from the second time a read is asked, and answers it from the cache after', async () => {
    await push(0, [1, 2]);
    await engine.refresh([metric.id]);
    const reads = vi.spyOn(engine, 'readSeries');
    const first = await engine.readJson(metric, READ);
    for (let i = 0; i < 3; i++) expect(await engine.readJson(metric, READ)).toEqual(first);
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it('reads afresh while a batch holding the metric is being processed, its commit already visible', async () => {
    await push(0, [1, 2]);
    await engine.refresh([metric.id]);
    expect(await read()).toEqual([1, 2]);
    await push(2, [3]);
    // Read as soon as the batch's commit is done: the processor hears of it
    // only once the runner's promise settles.
    const { series } = engine.drivers;
    const commit = series.commit.bind(series);
    let processing: boolean | undefined;
    let during: number[] | undefined;
    vi.spyOn(series, 'commit').mockImplementation(async (lease, batch) => {
      await commit(lease, batch);
      processing = engine.processor.isProcessing(metric.id);
      during = await read();
    });
    await engine.refresh([metric.id]);
    expect(processing).toBe(true);
    expect(during).toEqual([1, 2, 3]);
    expect(await read()).toEqual([1, 2, 3]);
  });

  it('reads afresh while a policy change is being committed, and forgets every answer after it', async () => {
    await push(0, [1, 2, 3]);
    await engine.refresh([metric.id]);
    await read();
    const reads = vi.spyOn(engine, 'readSeries');
    const change = engine.index.updatePolicy('p', (p) => ({ ...p, definition: [{ granularity: S, points: 2, timespan: 2 * S }] }));
    expect(await engine.index.policiesChanging()).toBe(true);
    await read();
    expect(reads).toHaveBeenCalledTimes(1);
    await change;
    expect(engine.readCache.size).toBe(0);
    expect(await read()).toEqual([2, 3]);
  });
});

describe('the processor', () => {
  const results = ({ metricIds }: Parameters<JobRunner>[0]): PackedResults => {
    const packed = packedResults(metricIds.length);
    for (let job = 0; job < metricIds.length; job++) setResult(packed, job, 1, 1, 0);
    return packed;
  };

  it.each([
    ['commits', (jobs) => Promise.resolve(results(jobs))],
    ['fails (it may have committed first)', () => Promise.reject(new Error('worker died'))],
  ] as [string, JobRunner][])('reports the metrics of a batch that %s, while they count as being processed until then', async (_what, run) => {
    // Reads bypass the cache until the report, which drops what they cached before.
    const processingWhenReported: boolean[] = [];
    const onCommitted = vi.fn(() => processingWhenReported.push(processor.isProcessing(metric.id)));
    const processor = new Processor({ drivers: engine.drivers, index: engine.index, runner: run, parallelism: 1, intervalMs: 1e9, batchSize: 8, onCommitted });
    await processor.open();
    processor.noteIncoming(0, 1, encodeIncomingBatch(new Map([[metric.id, { timestamps: Float64Array.of(T0), values: Float64Array.of(1) }]])).entries);
    const refreshed = processor.refresh([metric.id]);
    expect(processor.isProcessing(metric.id)).toBe(true);
    await refreshed.catch(() => {});
    await processor.close();
    expect(onCommitted).toHaveBeenCalledWith([metric.id]);
    expect(processor.isProcessing(metric.id)).toBe(false);
    expect(processingWhenReported).toEqual([true]);
  });
});

describe('the index', () => {
  it('reports a policy write, committed or failed, while it still counts as changing policies', async () => {
    const changingWhenReported: boolean[] = [];
    const index: Index = new Index(engine.storage, () => changingWhenReported.push(index.policiesChanging()));
    await index.updatePolicy('p', (p) => ({ ...p, backWindow: 1 }));
    await expect(index.updatePolicy('missing', (p) => p)).rejects.toThrow();
    expect(changingWhenReported).toEqual([true, true]);
    expect(index.policiesChanging()).toBe(false);
  });
});
