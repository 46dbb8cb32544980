// The processor's reorder window (engine/reorder-window.ts holds the rule):
// background processing takes a push once it has waited the window, and
// not while an earlier push is still being handled; a refresh takes
// everything at once; the measures waiting count as pending meanwhile. The
// waits asserted are far shorter than the windows, so that a slow machine
// cannot make them pass or fail.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../engine/engine.js';
import type { MetricRecord } from '../../engine/index.js';

const S = 1_000_000;
const T0 = Date.UTC(2024, 0, 1) * 1000;

let dataDir: string;
let engine: Engine;
afterEach(async () => {
  await engine.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(reorderWindowMs: number): Promise<MetricRecord> {
  dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-processor-'));
  engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['count'], workers: 0, processingIntervalMs: 10, reorderWindowMs });
  await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: S, points: 3600, timespan: 3600 * S }], aggregationMethods: ['count'] });
  return engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null });
}

const push = (metric: MetricRecord, second: number) =>
  engine.addMeasures(new Map([[metric.id, { timestamps: Float64Array.of(T0 + second * S), values: Float64Array.of(1) }]]));

/** Points aggregated, without processing anything. */
const counted = async (metric: MetricRecord) =>
  (await engine.getMeasures(metric, { method: 'count' })).flatMap((s) => [...s.values]).reduce((a, b) => a + b, 0);

const moment = () => new Promise((resolve) => setTimeout(resolve, 200));

describe('the reorder window', () => {
  it('holds a push younger than the window, counted as pending', async () => {
    const metric = await start(60_000);
    await push(metric, 1);
    await moment();
    expect(engine.processor.backlog()).toEqual({ metrics: 1, measures: 1, perMetric: { [metric.id]: 1 } });
    expect(await counted(metric)).toBe(0);
  });

  it('takes a push once it has waited the window, with the older points that arrived after it', async () => {
    const metric = await start(1_000);
    await push(metric, 2);
    await push(metric, 1);
    await engine.processor.drained();
    expect(await counted(metric)).toBe(2);
  });

  it('updates a metric pushed to every few ms once per several pushes, not once per push', async () => {
    // Pushes ~10 ms apart against a 300 ms window: the patience covers them however slow the machine, up to 30 ms a push.
    const metric = await start(300);
    let updates = 0;
    engine.activity.onBatch(({ metrics }) => (updates += metrics));
    for (let second = 1; second <= 20; second++) {
      await push(metric, second);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await engine.processor.drained();
    expect(await counted(metric)).toBe(20);
    // Eager rounds (every 10 ms here) took about one push each once the first had waited the window.
    expect(updates).toBeLessThanOrEqual(5);
  });

  it('is bypassed by a refresh', async () => {
    const metric = await start(60_000);
    await push(metric, 1);
    await engine.refresh([metric.id]);
    expect(await counted(metric)).toBe(1);
  });

  it('holds the pushes noted after one still being handled, until it is', async () => {
    const metric = await start(50);
    const release = engine.processor.receiving();
    await push(metric, 2);
    await moment();
    expect(engine.processor.pendingMeasureCount(), 'held by the push being handled').toBe(1);
    await push(metric, 1);
    release();
    await engine.processor.drained();
    expect(await counted(metric)).toBe(2);
  });

  it('is off at 0: a push is processed at once, whatever is being handled', async () => {
    const metric = await start(0);
    engine.processor.receiving();
    await push(metric, 2);
    await engine.processor.drained();
    await push(metric, 1);
    await engine.processor.drained();
    expect(await counted(metric), 'the older point arrived after the newer one was processed').toBe(1);
  });
});
