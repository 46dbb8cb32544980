// How many batches the processor hands its runner at once: `parallelism`
// running, plus `queued` waiting for a worker (read and packed while the
// worker runs the one before) while no push is being received, and every
// batch still runs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Engine } from '../../engine/engine.js';
import { encodeIncomingBatch } from '../../engine/incoming-batch.js';
import type { MetricRecord } from '../../engine/index.js';
import type { ProcessResult } from '../../engine/process-metrics.js';
import { Processor, type JobRunner } from '../../engine/processor.js';

const S = 1e6;
const T0 = Date.UTC(2024, 0, 1) * 1000;
const METRICS = 4;

let engine: Engine;
let dataDir: string;
let metrics: MetricRecord[];

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-processor-queue-'));
  engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });
  await engine.processor.stop();
  await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: S, points: 60, timespan: 60 * S }], aggregationMethods: ['mean'] });
  metrics = [];
  for (let i = 0; i < METRICS; i++) {
    metrics.push(await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null }));
  }
});

afterEach(async () => {
  await engine.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

/** A runner that holds every batch until the test lets it go, counting those handed over and not answered. */
function heldRunner() {
  const held = { waiting: [] as (() => void)[], processed: [] as string[], outstanding: 0, peak: 0 };
  const run: JobRunner = (jobs) => {
    held.peak = Math.max(held.peak, ++held.outstanding);
    return new Promise<ProcessResult[]>((resolve) =>
      held.waiting.push(() => {
        held.outstanding--;
        held.processed.push(...jobs.map((j) => j.metricId));
        resolve(jobs.map((j) => ({ metricId: j.metricId, consumed: 1, lastSeq: j.refs.at(-1)!.seq, looseRows: 0 })));
      }),
    );
  };
  return { held, run };
}

function noteEach(processor: Processor): void {
  metrics.forEach((m, i) => {
    const { entries } = encodeIncomingBatch(new Map([[m.id, { timestamps: Float64Array.of(T0), values: Float64Array.of(1) }]]));
    processor.noteIncoming(engine.drivers.incoming.shardOf(m.id), i + 1, entries);
  });
}

/** Lets every batch go, one at a time, until all metrics were processed. */
async function drain(processor: Processor, held: ReturnType<typeof heldRunner>['held']): Promise<void> {
  while (held.processed.length < METRICS) {
    await vi.waitFor(() => expect(held.waiting.length).toBeGreaterThan(0));
    held.waiting.shift()!();
  }
  await processor.drained();
  expect(held.processed.sort()).toEqual(metrics.map((m) => m.id).sort());
}

describe('batches handed to the runner', () => {
  it.each([
    [0, 1],
    [1, 2],
    [2, 3],
  ])('with %i queued beside one worker: %i at once, and every metric processed', async (queued, most) => {
    const { held, run } = heldRunner();
    const processor = new Processor({ drivers: engine.drivers, index: engine.index, runner: run, parallelism: 1, queued, intervalMs: 1e9, batchSize: 1 });
    await processor.open();
    processor.start();
    noteEach(processor);
    await vi.waitFor(() => expect(held.outstanding).toBe(most));
    // Whatever more it would hand over, it has by now.
    await settle();
    expect(held.peak).toBe(most);
    await drain(processor, held);
    await processor.close();
  });

  it('queues none while a push is being received, and one once it is answered', async () => {
    const { held, run } = heldRunner();
    const processor = new Processor({ drivers: engine.drivers, index: engine.index, runner: run, parallelism: 1, queued: 1, intervalMs: 10, reorderWindowMs: 10, batchSize: 1 });
    await processor.open();
    noteEach(processor);
    // Received once the pushes have waited the window: it holds none of them back.
    await settle();
    const answered = processor.receiving();
    processor.start();
    await vi.waitFor(() => expect(held.outstanding).toBe(1));
    await settle();
    expect(held.peak).toBe(1);
    answered();
    await vi.waitFor(() => expect(held.outstanding).toBe(2));
    await drain(processor, held);
    await processor.close();
  });
});
