// The processor keeps one batch more in flight than it has workers: a
// worker done with a batch starts the queued one at once rather than idling
// while the main thread hears of the result and plans the next. Never more,
// so that a backlog is not all handed out before newer pushes can join it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { Engine } from '../../engine/engine.js';
import { inlineRunner } from '../../engine/pool.js';
import { Processor } from '../../engine/processor.js';

const S = 1_000_000;
const T0 = Date.UTC(2024, 0, 1) * 1000;

let dataDir: string;
let engine: Engine;
let processor: Processor | undefined;

afterEach(async () => {
  await processor?.close();
  await engine.close();
  rmSync(dataDir, { recursive: true, force: true });
});

it.each([1, 2])('with %i worker(s), keeps one batch queued beyond them and no more', async (parallelism) => {
  dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-queue-'));
  engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });
  // Only the processor under test processes.
  await engine.processor.stop();
  await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: S, points: 60, timespan: 60 * S }], aggregationMethods: ['sum'] });
  const metrics = await Promise.all(
    Array.from({ length: 40 }, () => engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null })),
  );
  await engine.addMeasures(new Map(metrics.map((m) => [m.id, { timestamps: Float64Array.of(T0), values: Float64Array.of(1) }])));

  const run = inlineRunner(engine.drivers);
  let inFlight = 0;
  let most = 0;
  processor = new Processor({
    drivers: engine.drivers,
    index: engine.index,
    // Each batch is held, as a worker's would be, long enough for the next ones to pile up if allowed to.
    runner: async (jobs, lease) => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 50));
      inFlight--;
      return run(jobs, lease);
    },
    parallelism,
    intervalMs: 1e9,
    batchSize: 4,
  });
  await processor.open();
  processor.start();
  await processor.drained();
  expect(processor.pendingMeasureCount()).toBe(0);
  expect(most).toBe(parallelism + 1);
});
