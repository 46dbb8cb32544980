// A refresh on one node of a metric whose shard another node holds does not
// wait for that holder's reorder window: it asks the holder to hurry. The
// window here (60 s) is far past the 30 s test timeout and the refresh's own
// deadline (twice the lease: 4 s, then 503), so a refresh that waited for
// it would fail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardOfMetric } from '../../engine/drivers/shard-hash.js';
import { call, sleep } from '../reliability/harness.js';
import { engineMissing, startPostgres, startRedis, type Engine } from './engines.js';
import { startCluster, stopCluster, type ClusterNode } from './nodes.js';

const SHARDS = 4;
const missing = engineMissing('postgresql') ?? engineMissing('redis');

let pg: Engine | undefined;
let redis: Engine | undefined;
let nodes: ClusterNode[] = [];

/** Shard → holder's node id, once every shard has one and every node holds some. */
async function holders(node: ClusterNode): Promise<Record<string, string>> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = await call(node.url, 'GET', '/v1/status?details=false');
    const held = status.body.cluster.shard_holders as Record<string, string>;
    if (Object.keys(held).length === SHARDS && nodes.every((n) => Object.values(held).includes(n.name))) return held;
    if (Date.now() > deadline) throw new Error(`shards not spread over the nodes after 60 s: ${JSON.stringify(held)}`);
    await sleep(100);
  }
}

describe.skipIf(missing !== undefined)(missing ?? 'the reorder window in a cluster (2 nodes)', () => {
  beforeAll(async () => {
    pg = await startPostgres();
    redis = await startRedis();
    nodes = await startCluster(2, { index: pg.url, redis: redis.url, shards: SHARDS, leaseMs: 2000, args: ['--reorder-window', '60000', '--workers', '1'] });
  }, 120_000);

  afterAll(() => stopCluster(nodes, [pg, redis]), 120_000);

  it('a refresh through a node that does not hold the metric\'s shard has the holder process it now', { timeout: 90_000 }, async () => {
    const [reader, holder] = nodes as [ClusterNode, ClusterNode];
    const policy = { name: 'p', back_window: 0, aggregation_methods: ['count'], definition: [{ granularity: '1 second', points: 3600 }] };
    expect((await call(reader.url, 'POST', '/v1/archive_policy', policy)).status).toBe(201);
    const held = await holders(reader);
    // Metrics until one lands in a shard the other node holds.
    let id: string | undefined;
    while (id === undefined) {
      const created = await call(reader.url, 'POST', '/v1/metric', { archive_policy_name: 'p' });
      expect(created.status).toBe(201);
      if (held[String(shardOfMetric(created.body.id, SHARDS))] === holder.name) id = created.body.id;
    }
    const pushed = await call(reader.url, 'POST', `/v1/metric/${id}/measures`, [
      { timestamp: '2024-01-01T00:00:02', value: 1 },
      { timestamp: '2024-01-01T00:00:01', value: 1 },
    ]);
    expect(pushed.status).toBe(202);
    const read = await call(reader.url, 'GET', `/v1/metric/${id}/measures?aggregation=count&refresh=true`);
    expect(read.status, read.text).toBe(200);
    expect(read.body.map((row: [string, number, number]) => row[2])).toEqual([1, 1]);
  });
});
