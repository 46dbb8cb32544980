// A query large enough to leave the main thread runs on the worker pool
// (workers read the series from their own LMDB handle, keeping decoded
// splits) and answers the same, also after a split it decoded was rewritten.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetric, createPolicy, json, pushMeasures, startTestApp, type TestApp } from './helpers.js';

let t: TestApp;
const ids: string[] = [];

beforeAll(async () => {
  t = await startTestApp({ workers: 1 });
  await createPolicy(t.app, { name: 'p', definition: [{ granularity: '1 second' }, { granularity: '60 second' }] });
  for (let i = 1; i <= 5; i++) {
    const id = await createMetric(t.app, { archive_policy_name: 'p' });
    ids.push(id);
    await pushMeasures(t.app, id, [
      { timestamp: '2015-03-06T14:33:57', value: i },
      { timestamp: '2015-03-06T14:34:12', value: 2 * i },
    ]);
  }
});

afterAll(async () => {
  await t.close();
});

describe('aggregates on the worker pool', () => {
  it('aggregates 5 metrics x 2 granularities', async () => {
    const ops = `(aggregate mean (metric ${ids.map((id) => `(${id} mean)`).join(' ')}))`;
    const res = await json(t.app, 'POST', '/v1/aggregates?refresh=true', { operations: ops });
    expect(res.status).toBe(200);
    expect(res.body.measures.aggregated).toEqual([
      ['2015-03-06T14:33:00+00:00', 60, 3],
      ['2015-03-06T14:34:00+00:00', 60, 6],
      ['2015-03-06T14:33:57+00:00', 1, 3],
      ['2015-03-06T14:34:12+00:00', 1, 6],
    ]);
  });

  it('leaves no LMDB snapshot held by an idle worker', async () => {
    // A worker holding its read transaction between tasks pins every page
    // freed after it: LMDB cannot reuse them and the data file grows (the
    // soak test saw 30-90 MB/s under dashboard reads).
    const ops = `(aggregate mean (metric ${ids.map((id) => `(${id} mean)`).join(' ')}))`;
    expect((await json(t.app, 'POST', '/v1/aggregates?refresh=true', { operations: ops })).status).toBe(200);
    t.engine.storage.root.resetReadTxn();
    const slots = t.engine.storage.root.readerList().trim().split('\n').slice(1);
    expect(slots.length).toBeGreaterThan(1);
    expect(slots.filter((line) => !line.trim().endsWith('-')), t.engine.storage.root.readerList()).toEqual([]);
  });

  it('sees a late point merged into sealed splits a worker decoded before', async () => {
    // Back window of one 1 h block: points an hour late are merged into sealed 1 s splits.
    await createPolicy(t.app, { name: 'late', back_window: 1, definition: [{ granularity: '1 second', points: 100000 }, { granularity: '1 hour', points: 10 }] });
    const at = (s: number) => new Date(Date.UTC(2024, 0, 1) + s * 1000).toISOString();
    // More series than the main thread takes, no time range: the query goes to the worker.
    const late: string[] = [];
    for (let m = 0; m < 9; m++) {
      const id = await createMetric(t.app, { archive_policy_name: 'late' });
      late.push(id);
      await pushMeasures(t.app, id, Array.from({ length: 1900 }, (_, i) => ({ timestamp: at(2 * i), value: m })));
    }
    const ops = `(aggregate mean (metric ${late.map((id) => `(${id} mean)`).join(' ')}))`;
    const query = async () => {
      const res = await json(t.app, 'POST', '/v1/aggregates?refresh=true&granularity=1', { operations: ops });
      expect(res.status).toBe(200);
      return res.body.measures.aggregated as [string, number, number][];
    };
    expect(await query()).toHaveLength(1900);
    expect(await query()).toHaveLength(1900);
    for (const id of late) await pushMeasures(t.app, id, [{ timestamp: at(101), value: 100 }]);
    const after = await query();
    expect(after).toHaveLength(1901);
    expect(after.find(([ts]) => ts === '2024-01-01T00:01:41+00:00')).toEqual(['2024-01-01T00:01:41+00:00', 1, 100]);
  });

  it('carries engine errors back as 400s', async () => {
    const ops = `(rolling mean 9 (metric ${ids.map((id) => `(${id} mean)`).join(' ')}))`;
    const res = await json(t.app, 'POST', '/v1/aggregates', { operations: ops });
    expect(res.status).toBe(400);
    expect(res.body.description.reason).toBe("Rolling window '9' is greater than serie length '2'");
  });
});
