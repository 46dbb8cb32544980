// Each node caches index records and resource search answers
// (engine/drivers/postgres/cache.ts). Through the HTTP servers of two nodes:
// node B's cached answer to an aggregates search must follow every index
// write made on node A, as a client with `refresh=true` (the gnocchi CLI's
// `aggregates --refresh`, Grafana's datasource) reads it. A write that did
// not drop B's cached search would leave B answering the old groups for good.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../reliability/harness.js';
import { engineMissing, startPostgres, startRedis, type Engine } from './engines.js';
import { startCluster, stopCluster, type ClusterNode } from './nodes.js';

const missing = engineMissing('postgresql') ?? engineMissing('redis');
const ID = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

let pg: Engine | undefined;
let redis: Engine | undefined;
let nodes: ClusterNode[] = [];

/** The resources of type `box` on host h1 not ended (with their measures' sum), as `node` answers with refresh. */
async function onH1(node: ClusterNode): Promise<string[]> {
  const search = { resource_type: 'box', search: { and: [{ '=': { host: 'h1' } }, { '=': { ended_at: null } }] }, operations: '(aggregate sum (metric cpu sum))' };
  const res = await call(node.url, 'POST', '/v1/aggregates?refresh=true&groupby=id', search);
  expect(res.status, res.text).toBe(200);
  return (res.body as { group: { id: string } }[]).map((g) => g.group.id).sort();
}

describe.skipIf(missing !== undefined)(missing ?? 'index caches across nodes (2 nodes)', () => {
  beforeAll(async () => {
    pg = await startPostgres();
    redis = await startRedis();
    nodes = await startCluster(2, { index: pg.url, redis: redis.url, shards: 2, leaseMs: 2000, args: ['--workers', '1'] });
    const [a] = nodes as [ClusterNode];
    expect((await call(a.url, 'POST', '/v1/archive_policy', { name: 'p', aggregation_methods: ['sum'], definition: [{ granularity: '1 second', points: 60 }] })).status).toBe(201);
    expect((await call(a.url, 'POST', '/v1/resource_type', { name: 'box', attributes: { host: { type: 'string', required: false } } })).status).toBe(201);
    // 9 stays on h1 throughout: an aggregates search matching nothing is a 400.
    for (const n of [1, 2, 9]) {
      const created = await call(a.url, 'POST', '/v1/resource/box', { id: ID(n), host: 'h1', metrics: { cpu: { archive_policy_name: 'p' } } });
      expect(created.status, created.text).toBe(201);
    }
  }, 120_000);

  afterAll(() => stopCluster(nodes, [pg, redis]), 120_000);

  it.each<[string, (a: ClusterNode) => Promise<number>, string[]]>([
    ['a resource created on A', async (a) => (await call(a.url, 'POST', '/v1/resource/box', { id: ID(3), host: 'h1', metrics: { cpu: { archive_policy_name: 'p' } } })).status, [ID(1), ID(2), ID(3), ID(9)]],
    ['an attribute changed on A', async (a) => (await call(a.url, 'PATCH', `/v1/resource/box/${ID(1)}`, { host: 'h2' })).status, [ID(2), ID(3), ID(9)]],
    ['a resource deleted on A', async (a) => (await call(a.url, 'DELETE', `/v1/resource/box/${ID(2)}`)).status, [ID(3), ID(9)]],
    ['a resource ended through generic on A', async (a) => (await call(a.url, 'PATCH', `/v1/resource/generic/${ID(3)}`, { ended_at: '2030-01-01T00:00:00' })).status, [ID(9)]],
  ])('B follows %s', { timeout: 30_000 }, async (_case, write, expected) => {
    const [a, b] = nodes as [ClusterNode, ClusterNode];
    // B answers (and keeps) the search first, then A writes.
    await onH1(b);
    expect(await write(a)).toBeLessThan(300);
    expect(await onH1(b)).toEqual(expected);
    expect(await onH1(a)).toEqual(expected);
  });
});
