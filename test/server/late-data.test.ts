// Pushes that overtake each other: within --reorder-window they are
// aggregated together whatever their arrival order, so no acknowledged point
// falls out of the back window; past it, Gnocchi's rule for late points holds.
// Windows here are longer than the default so that a stalled test machine
// cannot make the timing-free assertions flaky.
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../server/config.js';
import { createPolicy, json, startTestApp, type TestApp } from './helpers.js';

let t: TestApp;
afterEach(async () => {
  await t.close();
});

const T0 = Date.UTC(2024, 0, 1) / 1000;

async function start(overrides: Partial<Config>, metrics: number): Promise<string[]> {
  t = await startTestApp(overrides);
  await createPolicy(t.app, { name: 'p', back_window: 0, aggregation_methods: ['count', 'sum'], definition: [{ granularity: '1 second', points: 100000 }] });
  const ids: string[] = [];
  for (let m = 0; m < metrics; m++) ids.push((await json(t.app, 'POST', '/v1/metric', { archive_policy_name: 'p' })).body.id);
  return ids;
}

/** One push of every metric's point at second `s`, answered 202. */
async function pushRound(ids: string[], s: number): Promise<void> {
  const body = Object.fromEntries(ids.map((id) => [id, [{ timestamp: T0 + s, value: s }]]));
  expect((await json(t.app, 'POST', '/v1/batch/metrics/measures', body)).status).toBe(202);
}

async function counts(id: string): Promise<number> {
  const res = await json(t.app, 'GET', `/v1/metric/${id}/measures?aggregation=count`);
  expect(res.status).toBe(200);
  return (res.body as [string, number, number][]).reduce((n, row) => n + row[2], 0);
}

describe('--reorder-window', () => {
  it.each([
    ['keeps every point', 1000, true],
    ['without a window, loses points', 0, false],
  ])('%s of time-major rounds arriving newest first, a few ms apart, 8 at a time', async (_name, reorderWindowMs, keepsAll) => {
    const ids = await start({ reorderWindowMs, workers: 1 }, 20);
    const rounds = 40;
    const pushes: Promise<void>[] = [];
    for (let first = 0; first < rounds; first += 8) {
      for (let s = first + 7; s >= first; s--) {
        pushes.push(pushRound(ids, s));
        await new Promise((r) => setTimeout(r, 3));
      }
    }
    await Promise.all(pushes);
    await t.engine.processor.drained();
    const kept = await Promise.all(ids.map((id) => counts(id)));
    if (keepsAll) expect(kept).toEqual(ids.map(() => rounds));
    else expect(kept.some((n) => n < rounds)).toBe(true);
  });

  it.each([
    ['an older point pushed right after a newer one is kept', 60_000, false, 2],
    ['without a window, an older point pushed after a newer one was processed is dropped (back window 0)', 0, true, 1],
    ['past the window, an older point pushed after a newer one was processed is dropped (back window 0)', 300, true, 1],
  ])('%s', async (_name, reorderWindowMs, processInBetween, kept) => {
    const [id] = await start({ reorderWindowMs }, 1);
    await pushRound([id!], 10);
    if (processInBetween) await t.engine.processor.drained();
    await pushRound([id!], 5);
    // refresh=true takes every pending measure at once, window or not.
    const res = await json(t.app, 'GET', `/v1/metric/${id}/measures?aggregation=count&refresh=true`);
    expect((res.body as unknown[]).length).toBe(kept);
  });

  it('holds a push for the window before background processing takes it', async () => {
    const [id] = await start({ reorderWindowMs: 60_000, processingIntervalMs: 10 }, 1);
    await pushRound([id!], 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(t.engine.processor.pendingMeasureCount()).toBe(1);
    expect(await counts(id!)).toBe(0);
  });

  it('processes a push once the window has passed, without a read asking', async () => {
    const [id] = await start({ reorderWindowMs: 100, processingIntervalMs: 60_000 }, 1);
    await pushRound([id!], 1);
    await t.engine.processor.drained();
    expect(await counts(id!)).toBe(1);
  });
});
