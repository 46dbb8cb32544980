// A read bounded by start and stop answers exactly the points of the whole
// series within [start, stop), whichever way its splits are found (a few
// split keys looked up one by one, or a cursor over a wider key range),
// across a split with no points, the open split, and a method that has no
// value on some rows (std of a single point). Asked twice, the second answer
// (from the decoded split cache) is the first.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../engine/engine.js';
import type { MetricRecord } from '../../engine/index.js';
import { POINTS_PER_SPLIT } from '../../engine/split.js';

const S = 1_000_000;
const MINUTE = 60 * S;
const SPLIT = POINTS_PER_SPLIT * MINUTE;
const T0 = Date.UTC(2024, 0, 1) * 1000;
const METHODS = ['mean', 'std'];

let dataDir: string;
let engine: Engine;
let metric: MetricRecord;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-read-measures-'));
  engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: METHODS, workers: 0, processingIntervalMs: 1e9, splitCacheSize: 1024 ** 2 });
  await engine.processor.stop();
  await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: MINUTE, points: 100_000, timespan: 100_000 * MINUTE }], aggregationMethods: METHODS });
  metric = await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null });
  // Splits 0, 1 and 3 sealed, 2 without points, 4 open; every third minute has one point (no std), the others two.
  const minutes: number[] = [];
  for (let m = 0; m < 4 * POINTS_PER_SPLIT + 500; m++) if (Math.floor(m / POINTS_PER_SPLIT) !== 2) minutes.push(m);
  const points = minutes.flatMap((m) => (m % 3 === 0 ? [[m, 0]] : [[m, 0], [m, 30]]).map(([at, offset]) => [T0 + at! * MINUTE + offset! * S, Math.sin(at! + offset!)] as const));
  await engine.addMeasures(new Map([[metric.id, { timestamps: Float64Array.from(points, ([t]) => t), values: Float64Array.from(points, ([, v]) => v) }]]));
  await engine.refresh([metric.id]);
});

afterAll(async () => {
  await engine.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function read(method: string, start?: number, stop?: number): Promise<[number[], number[]]> {
  const [series] = await engine.getMeasures(metric, { method, granularity: MINUTE, ...(start === undefined ? {} : { start }), ...(stop === undefined ? {} : { stop }) });
  return [[...series!.timestamps], [...series!.values]];
}

describe('bounded reads', () => {
  it.each<[string, number, number]>([
    ['within one sealed split', 100, 1100],
    ['across two sealed splits', POINTS_PER_SPLIT - 50, POINTS_PER_SPLIT + 50],
    ['over the split without points', 2 * POINTS_PER_SPLIT - 10, 3 * POINTS_PER_SPLIT + 10],
    ['into the open split', 4 * POINTS_PER_SPLIT - 10, 4 * POINTS_PER_SPLIT + 10],
    ['from a split start to a split start', POINTS_PER_SPLIT, 3 * POINTS_PER_SPLIT],
    ['over every split', 0, 5 * POINTS_PER_SPLIT],
    ['wider than the direct lookups, mostly past the data', 10, 40 * POINTS_PER_SPLIT],
    ['past the data', 6 * POINTS_PER_SPLIT, 7 * POINTS_PER_SPLIT],
  ])('%s: the whole series cut to [start, stop)', async (_what, fromMinute, toMinute) => {
    const start = T0 + fromMinute * MINUTE;
    const stop = T0 + toMinute * MINUTE;
    for (const method of METHODS) {
      const [allT, allV] = await read(method);
      const inside = allT.map((t, i) => [t, allV[i]!] as const).filter(([t]) => t >= start && t < stop);
      const expected: [number[], number[]] = [inside.map(([t]) => t), inside.map(([, v]) => v)];
      expect(await read(method, start, stop), method).toEqual(expected);
      expect(await read(method, start, stop), `${method}, asked again`).toEqual(expected);
    }
  });

  it('leaves out the rows a method has no value for', async () => {
    const [stdT] = await read('std', T0, T0 + SPLIT);
    const [meanT] = await read('mean', T0, T0 + SPLIT);
    expect(meanT).toHaveLength(POINTS_PER_SPLIT);
    expect(stdT).toHaveLength((2 * POINTS_PER_SPLIT) / 3);
    expect(stdT.every((t) => ((t - T0) / MINUTE) % 3 !== 0)).toBe(true);
  });
});
