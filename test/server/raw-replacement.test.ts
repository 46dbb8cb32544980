// A later push replaces a raw value still in the metric's raw tail, and every
// aggregate over it is recomputed, as Gnocchi 4.4 does (carbonara combines
// new measures over the stored ones); within one push the first value of a
// timestamp is kept. The answer does not depend on whether the pushes were
// processed apart or together, nor on a restart in between; a point older
// than the back window is still dropped.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMetric, createPolicy, pushMeasures, readMeasures, startTestApp, type TestApp } from './helpers.js';

const METHODS = ['sum', 'count', 'mean', 'first', 'last', 'std', 'min', 'max', 'rate:mean', '90pct'];
const BASE = Date.UTC(2024, 2, 1, 12, 0, 0);
type Point = [seconds: number, value: number];

const measures = (points: Point[]) => points.map(([s, value]) => ({ timestamp: new Date(BASE + s * 1000).toISOString(), value }));

const FIRST: Point[] = [[0, 1], [20, 4], [40, 10], [70, 2], [130, 5]];
const SECOND: Point[] = [[20, 7], [70, -3]];
/** The raw values after both pushes: the second push's values win. */
const REPLACED: Point[] = [[0, 1], [20, 7], [40, 10], [70, -3], [130, 5]];

const dirs: string[] = [];
const apps: TestApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function open(dataDir: string): Promise<TestApp> {
  const t = await startTestApp({ dataDir });
  apps.push(t);
  return t;
}

async function setUp(backWindow: number): Promise<{ t: TestApp; dataDir: string; policy: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-ts-replace-'));
  dirs.push(dataDir);
  const t = await open(dataDir);
  const policy = `replace-${backWindow}`;
  await createPolicy(t.app, {
    name: policy,
    back_window: backWindow,
    aggregation_methods: METHODS,
    definition: [
      { granularity: 60, points: 60 },
      { granularity: 300, points: 12 },
    ],
  });
  return { t, dataDir, policy };
}

/** Every method's answer at every granularity. */
async function answers(t: TestApp, metric: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const method of METHODS) {
    const res = await readMeasures(t.app, metric, `aggregation=${method}`);
    expect(res.status, `${method}: ${res.text}`).toBe(200);
    out[method] = res.body;
  }
  return out;
}

/** What a metric of `policy` answers when `points` are its only push. */
async function oracle(t: TestApp, policy: string, points: Point[]): Promise<Record<string, unknown>> {
  const metric = await createMetric(t.app, { archive_policy_name: policy });
  await pushMeasures(t.app, metric, measures(points));
  return answers(t, metric);
}

const sums = (answer: unknown) => (answer as [string, number, number][]).filter(([, g]) => g === 60).map(([, , v]) => v);

type Schedule = (t: TestApp, dataDir: string, metric: string) => Promise<TestApp>;

const schedules: [string, Schedule][] = [
  [
    'processed apart',
    async (t, _dir, metric) => {
      await pushMeasures(t.app, metric, measures(FIRST));
      await readMeasures(t.app, metric);
      await pushMeasures(t.app, metric, measures(SECOND));
      return t;
    },
  ],
  [
    'processed together',
    async (t, _dir, metric) => {
      await t.engine.processor.stop();
      await pushMeasures(t.app, metric, measures(FIRST));
      await pushMeasures(t.app, metric, measures(SECOND));
      expect(t.engine.processor.backlog().measures).toBe(FIRST.length + SECOND.length);
      return t;
    },
  ],
  [
    'across a restart',
    async (t, dataDir, metric) => {
      await pushMeasures(t.app, metric, measures(FIRST));
      await readMeasures(t.app, metric);
      await t.close();
      const reopened = await open(dataDir);
      await pushMeasures(reopened.app, metric, measures(SECOND));
      return reopened;
    },
  ],
];

describe('a later push replaces a raw value', () => {
  describe.each([0, 2])('back_window %i', (backWindow) => {
    it.each(schedules)('and every method follows, %s', async (_name, schedule) => {
      const { t, dataDir, policy } = await setUp(backWindow);
      const metric = await createMetric(t.app, { archive_policy_name: policy });
      const now = await schedule(t, dataDir, metric);
      const got = await answers(now, metric);
      expect(sums(got.sum)).toEqual([18, -3, 5]);
      expect(sums(got.count)).toEqual([3, 1, 1]);
      expect(got).toEqual(await oracle(now, policy, REPLACED));
    });
  });

  it('keeps the first value of a timestamp given twice in one push', async () => {
    const { t, policy } = await setUp(0);
    const metric = await createMetric(t.app, { archive_policy_name: policy });
    await pushMeasures(t.app, metric, measures([[20, 7], [0, 1], [20, 9]]));
    expect(await answers(t, metric)).toEqual(await oracle(t, policy, [[0, 1], [20, 7]]));
  });

  it.each([
    // rate:mean keeps one more block of raw points: back_window 0 reaches back one 5-minute block, not two.
    ['drops a replacement older than the back window', 0, [...FIRST, [600, 8]] as Point[]],
    ['replaces a value two blocks back within back_window 2', 2, [[0, 1], [20, 7], [40, 10], [70, 2], [130, 5], [600, 8]] as Point[]],
  ])('%s', async (_name, backWindow, expected) => {
    const { t, policy } = await setUp(backWindow);
    const metric = await createMetric(t.app, { archive_policy_name: policy });
    // One push: a rate over a gap longer than the granularity is only seen by the batch holding both ends (as in Gnocchi).
    await pushMeasures(t.app, metric, measures([...FIRST, [600, 8]]));
    await readMeasures(t.app, metric);
    await pushMeasures(t.app, metric, measures([[20, 7]]));
    expect(await answers(t, metric)).toEqual(await oracle(t, policy, expected));
  });
});
