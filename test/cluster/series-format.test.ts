// The series Redis carries the format of the series records its nodes
// write (engine/drivers/redis/series-format.ts). Through the compiled
// server: a node raises the stamp when it joins, and a node of a release
// older than the stamp exits at start-up, saying why, rather than fail on
// every metric newer nodes processed.
import { rmSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis } from '../../engine/drivers/redis/connection.js';
import { SERIES_FORMAT_KEY } from '../../engine/drivers/redis/keys.js';
import { SERIES_FORMAT } from '../../engine/drivers/redis/series-format.js';
import { spawnServer, tempDir } from '../reliability/harness.js';
import { engineMissing, startPostgres, startRedis, type Engine } from './engines.js';
import { ClusterNode, stopCluster } from './nodes.js';

const missing = engineMissing('postgresql') ?? engineMissing('redis');

describe.skipIf(missing !== undefined)(missing ?? 'series format stamp', { timeout: 60_000 }, () => {
  let pg: Engine | undefined;
  let redis: Engine | undefined;
  let client: Redis;
  const cluster = () => ({ index: pg!.url, redis: redis!.url, shards: 2, leaseMs: 2000, args: ['--workers', '1'] });

  beforeAll(async () => {
    pg = await startPostgres();
    redis = await startRedis();
    client = await connectRedis(redis.url);
  }, 120_000);

  afterAll(async () => {
    client?.disconnect();
    await stopCluster([], [pg, redis]);
  }, 120_000);

  it.each<[string, number | undefined]>([
    ['absent (a fresh Redis, or one of a release before the stamp)', undefined],
    ['of an older release', SERIES_FORMAT - 1],
    ['of this release', SERIES_FORMAT],
  ])('a node joins and leaves the stamp at its format when it was %s', async (_case, stamp) => {
    await client.flushall();
    if (stamp !== undefined) await client.set(SERIES_FORMAT_KEY, String(stamp));
    const node = await ClusterNode.start('n1', cluster());
    try {
      expect(Number(await client.get(SERIES_FORMAT_KEY))).toBe(SERIES_FORMAT);
    } finally {
      await node.stop();
    }
  });

  it('a node older than the stamp exits 2 at start-up, naming both formats, and leaves the stamp as it was', async () => {
    await client.flushall();
    await client.set(SERIES_FORMAT_KEY, String(SERIES_FORMAT + 1));
    const { index, redis: url } = cluster();
    const dir = tempDir('older-node');
    try {
      const server = await spawnServer(dir, ['--index', index, '--incoming', url, '--series', url, '--coordination', url, '--shards', '2']);
      const exit = await server.exited;
      expect(exit.code, server.stderr()).toBe(2);
      expect(server.stderr()).toContain(
        `holds series records of format ${SERIES_FORMAT + 1}, written by a newer release; this release reads format ${SERIES_FORMAT} and older; refusing to start`,
      );
      expect(await client.get(SERIES_FORMAT_KEY)).toBe(String(SERIES_FORMAT + 1));
      expect(await client.keys('{g:m}:*'), 'it never joined').toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
