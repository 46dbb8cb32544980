// A query large enough to leave the main thread runs on the worker pool
// (workers read the series from their own LMDB handle) and answers the same.
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

  it('carries engine errors back as 400s', async () => {
    const ops = `(rolling mean 9 (metric ${ids.map((id) => `(${id} mean)`).join(' ')}))`;
    const res = await json(t.app, 'POST', '/v1/aggregates', { operations: ops });
    expect(res.status).toBe(400);
    expect(res.body.description.reason).toBe("Rolling window '9' is greater than serie length '2'");
  });
});
