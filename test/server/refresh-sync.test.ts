// A read with `refresh=true` must include every index write acknowledged
// before it on any node: before its handler runs, the server waits for the
// index to be in sync (engine/drivers/postgres/cache.ts' sync(), a no-op on
// LMDB). Reads without refresh, or with a value the route refuses, do not wait.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, createMetric, createPolicy, json, startTestApp, type TestApp } from './helpers.js';

const RESOURCE = '5b7ebe90-4ad2-4c83-ad2c-f6d3d8a2d4c1';

describe('refresh waits for the index to be in sync', () => {
  let t: TestApp;
  let syncs = 0;
  let metricId: string;

  beforeAll(async () => {
    t = await startTestApp();
    const sync = t.engine.index.sync.bind(t.engine.index);
    t.engine.index.sync = async () => {
      syncs++;
      await sync();
    };
    await createPolicy(t.app, { name: 'low', definition: [{ granularity: '1 minute', points: 10 }] });
    metricId = await createMetric(t.app, { archive_policy_name: 'low' });
    const resource = await json(t.app, 'POST', '/v1/resource/generic', { id: RESOURCE, metrics: { cpu: { archive_policy_name: 'low' } } }, ADMIN);
    expect(resource.status, resource.text).toBe(201);
  });
  afterAll(() => t.close());

  it.each<[string, (id: string) => [method: 'GET' | 'POST', url: string, body?: unknown], number, number]>([
    ['measures with refresh', (id) => ['GET', `/v1/metric/${id}/measures?refresh=true`], 200, 1],
    ['measures with refresh=yes', (id) => ['GET', `/v1/metric/${id}/measures?refresh=yes`], 200, 1],
    ['measures without refresh', (id) => ['GET', `/v1/metric/${id}/measures`], 200, 0],
    ['measures with refresh=false', (id) => ['GET', `/v1/metric/${id}/measures?refresh=false`], 200, 0],
    ['measures with an invalid refresh', (id) => ['GET', `/v1/metric/${id}/measures?refresh=maybe`], 400, 0],
    ['aggregates of a resource search with refresh', () => ['POST', '/v1/aggregates?refresh=true&groupby=id', { resource_type: 'generic', operations: '(metric cpu mean)', search: `id = "${RESOURCE}"` }], 200, 1],
  ])('%s', async (_case, request, status, expectedSyncs) => {
    const before = syncs;
    const [method, url, body] = request(metricId);
    const res = await json(t.app, method, url, body, ADMIN);
    expect(res.status, res.text).toBe(status);
    expect(syncs - before).toBe(expectedSyncs);
  });
});
