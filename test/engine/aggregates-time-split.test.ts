// A cross-metric query cut in two time ranges at a split boundary (the
// variant bench/aggregates-split.bench.ts measures) gives, once joined, exactly the result
// of the whole query: same timestamps, same bits, same retention cut.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Fill } from '../../engine/aggregates/align.js';
import { cutInTime, joinResults, rowLocal } from '../../bench/aggregates-time-split.js';
import { runAggregatesTask, type AggregatesTask, type SeriesRef } from '../../engine/aggregates/task.js';
import type { SeriesSnapshot } from '../../engine/drivers/types.js';
import { parseOperations, parsePrefix } from '../../formats/operations.js';
import { createMetric, createPolicy, json, startTestApp, type TestApp } from '../server/helpers.js';

const S = 1_000_000;
// 3 splits of 3,600 points and an open one; the policy keeps 9,000 of the 11,000 points.
const POINTS = 11_000;
const ORIGIN = 1_420_070_400; // 2015-01-01, a split boundary at 1 s

let t: TestApp;
const refs: SeriesRef[] = [];

beforeAll(async () => {
  t = await startTestApp();
  await createPolicy(t.app, { name: 'secs', aggregation_methods: ['mean', 'max'], definition: [{ granularity: '1 second', points: 9_000 }] });
  const body: Record<string, { timestamp: number; value: number }[]> = {};
  for (let m = 0; m < 3; m++) {
    const id = await createMetric(t.app, { archive_policy_name: 'secs' });
    // Every third metric skips some seconds, so the halves merge different grids.
    body[id] = Array.from({ length: POINTS }, (_, i) => ({ timestamp: ORIGIN + i, value: Math.sin(i * (m + 1)) * 1e3 + i / 7 }))
      .filter((_, i) => m !== 2 || i % 5 !== 0);
  }
  expect((await json(t.app, 'POST', '/v1/batch/metrics/measures', body)).status).toBe(202);
  const ids = Object.keys(body);
  await t.engine.processor.refresh(ids);
  const policy = await t.engine.policyOf((await t.engine.index.getMetric(ids[0]!))!);
  for (const id of ids) refs.push({ metricId: id, policy, aggregation: 'mean', key: [id, 'mean'], name: id });
});

afterAll(async () => {
  await t.close();
});

/** A snapshot of the metrics' series, released when the test ends. */
async function snapshot(): Promise<SeriesSnapshot> {
  const loaded = await t.engine.loadSeries(refs.map((r) => r.metricId));
  onTestFinished(() => loaded.release());
  return loaded;
}

function task(operations: string, fill: Fill | undefined, window: { start?: number; stop?: number } = {}): AggregatesTask {
  return {
    refs,
    granularities: [S],
    operations: parseOperations(parsePrefix(operations.replace('ALL', `(metric ${refs.map((r) => `(${r.metricId} mean)`).join(' ')})`))),
    neededOverlap: 100,
    ...(fill === undefined ? {} : { fill }),
    ...window,
  };
}

describe('cutInTime', () => {
  it.each<[string, string, Fill, { start?: number; stop?: number }]>([
    ['mean across series', '(aggregate mean ALL)', 'dropna', {}],
    ['bare series', 'ALL', 'null', {}],
    ['arithmetic and clip', '(clip_min (* (aggregate max ALL) -2.5) 3)', 0, {}],
    ['median, filled with a number', '(aggregate median ALL)', 1.5, {}],
    ['within a window', '(aggregate sum ALL)', 'dropna', { start: (ORIGIN + 2_500) * S, stop: (ORIGIN + 10_900) * S }],
  ])('%s: the joined halves equal the whole', async (_name, ops, fill, window) => {
    const s = await snapshot();
    const whole = task(ops, fill, window);
    const halves = cutInTime(s, whole);
    expect(halves).toBeDefined();
    const [a, b] = halves!;
    const joined = joinResults(runAggregatesTask(s, a), runAggregatesTask(s, b));
    const expected = runAggregatesTask(s, whole);
    expect(expected.samplings[0]!.timestamps.length).toBeGreaterThan(1000);
    // Retention: the oldest 2,000 points are out of both.
    expect(joined.samplings[0]!.timestamps[0]).toBe(expected.samplings[0]!.timestamps[0]);
    expect(joined.aggregated).toBe(expected.aggregated);
    expect(joined.samplings.length).toBe(1);
    expect(Buffer.from(joined.samplings[0]!.timestamps.buffer)).toEqual(Buffer.from(expected.samplings[0]!.timestamps.slice().buffer));
    expect(joined.samplings[0]!.columns.map((c) => Buffer.from(c.slice().buffer))).toEqual(
      expected.samplings[0]!.columns.map((c) => Buffer.from(c.slice().buffer)),
    );
  });

  it('cuts retention from the newest point of the whole read', async () => {
    // A shorter retention applies at read time to splits written under the longer one.
    const res = await json(t.app, 'PATCH', '/v1/archive_policy/secs', { definition: [{ granularity: '1 second', points: 5_000 }] });
    expect(res.status).toBe(200);
    const policy = await t.engine.policyOf((await t.engine.index.getMetric(refs[0]!.metricId))!);
    const whole = { ...task('(aggregate mean ALL)', 'dropna'), refs: refs.map((r) => ({ ...r, policy })) };
    const s = await snapshot();
    const [a, b] = cutInTime(s, whole)!;
    const joined = joinResults(runAggregatesTask(s, a), runAggregatesTask(s, b));
    const expected = runAggregatesTask(s, whole);
    expect(expected.samplings[0]!.timestamps[0]).toBe((ORIGIN + POINTS - 5_000) * S);
    expect([...joined.samplings[0]!.timestamps]).toEqual([...expected.samplings[0]!.timestamps]);
    expect([...joined.samplings[0]!.columns[0]!]).toEqual([...expected.samplings[0]!.columns[0]!]);
  });

  it.each<[string, string, Fill | undefined]>([
    ['rolling', '(aggregate mean (rolling mean 3 ALL))', 'dropna'],
    ['resample', '(aggregate mean (resample mean 60 ALL))', 'dropna'],
    ['rate', '(aggregate rate:mean ALL)', 'dropna'],
    ['rateofchange', '(rateofchange (aggregate mean ALL))', 'dropna'],
    ['the overlap check', '(aggregate mean ALL)', undefined],
    ['forward fill', '(aggregate mean ALL)', 'ffill'],
  ])('does not cut a query with %s', async (_name, ops, fill) => {
    expect(cutInTime(await snapshot(), task(ops, fill))).toBeUndefined();
  });

  it.each<[string, number, number]>([
    ['inside one split', 100, 200],
    // The newest point such a read sees is in a sealed split: finding it would mean decoding it.
    ['ending before the open split', 100, 10_000],
  ])('does not cut a window %s', async (_name, from, to) => {
    expect(cutInTime(await snapshot(), task('(aggregate mean ALL)', 'dropna', { start: (ORIGIN + from) * S, stop: (ORIGIN + to) * S }))).toBeUndefined();
  });
});

describe('rowLocal', () => {
  it.each<[string, boolean]>([
    ['(metric a mean)', true],
    ['(+ (metric a mean) 4)', true],
    ['(abs (aggregate max (metric a mean)))', true],
    ['(clip (metric a mean) 1 (rolling max 2 (metric a mean)))', false],
    ['(- (metric a mean) (resample mean 60 (metric a mean)))', false],
    ['(aggregate rate:max (metric a mean))', false],
  ])('%s: %s', (ops, expected) => {
    expect(rowLocal(parseOperations(parsePrefix(ops)))).toBe(expected);
  });
});
