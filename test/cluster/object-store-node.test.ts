/**
 * A cluster node with --splits s3:// on Ceph RGW, through its HTTP API: measures pushed and processed
 * until splits seal read back as an embedded node reads the same pushes, the sealed splits are objects in
 * the bucket (and none in Redis), and deleting the metric deletes its objects; killed between a batch's
 * uploads and its commit (fault point process.uploaded), it leaves no object behind and loses nothing.
 */
import { rmSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { s3SplitObjects, type S3SplitObjects } from '../../engine/drivers/s3/s3-objects.js';
import { BASE_SECONDS, call, isoSeconds, kill, sleep, startServer, tempDir, type Server } from '../reliability/harness.js';
import { engineMissing, startObjectStore, startPostgres, startRedis, type Engine } from './engines.js';
import { ClusterNode } from './nodes.js';

const missing = engineMissing('postgresql') ?? engineMissing('redis') ?? engineMissing('ceph');
if (missing !== undefined) console.warn(missing);

/** 1 s rows seal every hour (3,600 rows a split), so a few hours of points seal a few splits. */
const POLICY = {
  name: 'seals-fast',
  back_window: 2,
  aggregation_methods: ['mean', 'count', 'max'],
  definition: [
    { granularity: '1 second', points: 100_000 },
    { granularity: '1 minute', points: 10_000 },
  ],
};

/**
 * In push order: 2.5 hours of 1 s points, then up to 30 s past the fourth hour (sealing hours 0 to 3), then
 * late points into the fourth hour's sealed split, within the back window (2 minutes): merged into it.
 */
const PUSHES: number[][] = [
  Array.from({ length: 9000 }, (_, i) => i),
  Array.from({ length: 4 * 3600 + 30 - 9000 }, (_, i) => 9000 + i),
  [4 * 3600 - 20.5, 4 * 3600 - 10.5],
];

const measures = (seconds: number[]) => seconds.map((s) => ({ timestamp: new Date(Date.parse(isoSeconds(Math.floor(s))) + (s % 1) * 1000).toISOString(), value: (s % 13) - 4 }));

let pg: Engine | undefined;
let redis: Engine | undefined;
let ceph: Engine | undefined;
let node: ClusterNode | undefined;
let embedded: Server | undefined;
let embeddedDir: string;
let bucket: S3SplitObjects;

async function ok(base: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const r = await call(base, method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r.body as Record<string, unknown>;
}

/** Pushes every batch to a new metric on `base`, processing each before the next; answers the metric's id. */
async function pushAll(base: string): Promise<string> {
  const metric = await ok(base, 'POST', '/v1/metric', { archive_policy_name: POLICY.name });
  const id = metric.id as string;
  for (const seconds of PUSHES) {
    await ok(base, 'POST', `/v1/metric/${id}/measures`, measures(seconds));
    await ok(base, 'GET', `/v1/metric/${id}/measures?refresh=true&start=2100-01-01T00:00:00`);
  }
  return id;
}

/** The split keys ("granularity:key") the objects of a metric hold, as `objectsOf` lists them. */
const splitKeysOf = (metricId: string, names: string[]) =>
  names.map((n) => n.slice(n.indexOf(`/${metricId}/`) + metricId.length + 2, n.lastIndexOf(':'))).sort();
/** 1 s rows: the first four hours' splits sealed, one object each. */
const SEALED_KEYS = [0, 1, 2, 3].map((h) => `1000000:${(BASE_SECONDS + h * 3600) * 1e6}`).sort();
const READS = ['granularity=1', 'granularity=60', 'granularity=60&aggregation=max', `granularity=1&start=${encodeURIComponent(isoSeconds(4 * 3600 - 60))}&stop=${encodeURIComponent(isoSeconds(4 * 3600 + 60))}`];

/** Every read of READS answers the same on both metrics, and something. */
async function expectSameReads(clusterId: string, embeddedId: string): Promise<void> {
  for (const query of READS) {
    const theirs = await ok(node!.url, 'GET', `/v1/metric/${clusterId}/measures?${query}`);
    const ours = await ok(embedded!.url, 'GET', `/v1/metric/${embeddedId}/measures?${query}`);
    expect(theirs, query).toEqual(ours);
    expect((ours as unknown as unknown[]).length, query).toBeGreaterThan(0);
  }
}

async function objectsOf(metricId: string): Promise<string[]> {
  const names: string[] = [];
  await bucket.list('', async (page) => void names.push(...page.filter((name) => name.includes(`/${metricId}/`))));
  return names;
}

describe.skipIf(missing !== undefined)(missing ?? 'a cluster node with sealed splits in Ceph RGW', () => {
  beforeAll(async () => {
    [pg, redis, ceph] = await Promise.all([startPostgres(), startRedis(), startObjectStore('ceph')]);
    node = await ClusterNode.start('s3', {
      index: pg.url,
      redis: redis.url,
      shards: 4,
      leaseMs: 3000,
      args: ['--splits', ceph.url, '--processing-interval', '20'],
    });
    embeddedDir = tempDir('embedded');
    embedded = await startServer(embeddedDir);
    for (const base of [node.url, embedded.url]) await ok(base, 'POST', '/v1/archive_policy', POLICY);
    bucket = s3SplitObjects(ceph.url);
  }, 240_000);

  afterAll(async () => {
    bucket?.close();
    if (embedded !== undefined) await kill(embedded);
    rmSync(embeddedDir, { recursive: true, force: true });
    await node?.stop();
    await Promise.all([pg?.stop(), redis?.stop(), ceph?.stop()]);
  }, 120_000);

  it('reads back what an embedded node reads, keeps sealed splits as objects, and deletes them with the metric', async () => {
    const [clusterId, embeddedId] = [await pushAll(node!.url), await pushAll(embedded!.url)];
    await expectSameReads(clusterId, embeddedId);
    // An aggregates query over the 1 s rows (100,000 points kept) runs in a worker thread, which reads the objects with its own client.
    const aggregate = (id: string) => ({ operations: ['aggregate', 'max', ['metric', id, 'mean']] });
    expect(await ok(node!.url, 'POST', '/v1/aggregates?granularity=1', aggregate(clusterId))).toEqual(
      await ok(embedded!.url, 'POST', '/v1/aggregates?granularity=1', aggregate(embeddedId)),
    );
    // The late points were merged into the sealed split: their seconds counted twice.
    const [from, to] = [4 * 3600 - 21, 4 * 3600 - 19].map((second) => encodeURIComponent(isoSeconds(second)));
    const counts = await ok(node!.url, 'GET', `/v1/metric/${clusterId}/measures?granularity=1&aggregation=count&start=${from}&stop=${to}`);
    expect(counts).toEqual([['2024-01-01T03:59:39+00:00', 1, 2], ['2024-01-01T03:59:40+00:00', 1, 1]]);

    // 1 s rows: the first four hours' splits sealed, one object each (the late points' merge superseded the
    // fourth's first object, deleted since); the fifth hour's split is open, in Redis. 1 min rows: all open.
    expect(splitKeysOf(clusterId, await objectsOf(clusterId))).toEqual(SEALED_KEYS);
    const client = new Redis(redis!.url);
    try {
      expect(await client.keys('*:sp:*')).toEqual([]);
    } finally {
      client.disconnect();
    }

    const status = await ok(node!.url, 'GET', '/v1/status?details=false');
    expect((status.cluster as Record<string, unknown>).janitor_deleted_objects).toEqual(expect.any(Number));

    expect((await call(node!.url, 'DELETE', `/v1/metric/${clusterId}`)).status).toBe(204);
    expect(await objectsOf(clusterId)).toEqual([]);
    // The AWS SDK's notice that its later releases need Node 22 is silenced: the version is pinned for Node 20.
    expect(node!.output()).not.toMatch(/NodeVersionSupportWarning/);
  }, 240_000);

  it('killed between a batch\'s uploads and its commit: the janitor deletes the objects no revision names, the batch is processed again', async () => {
    await node!.restartArmed('process.uploaded:kill@1');
    const clusterId = (await ok(node!.url, 'POST', '/v1/metric', { archive_policy_name: POLICY.name })).id as string;
    // Processed in the background once answered: the first commit with sealed splits (hours 0 and 1) dies after its uploads.
    await ok(node!.url, 'POST', `/v1/metric/${clusterId}/measures`, measures(PUSHES[0]!));
    const died = await Promise.race([node!.exited(), sleep(60_000).then(() => 'alive after 60 s')]);
    expect(died, node!.output().slice(-3000)).toEqual({ code: null, signal: 'SIGKILL' });
    expect(node!.output()).toContain('failpoint process.uploaded reached (kill, hit 1,');
    const orphans = await objectsOf(clusterId);
    expect(splitKeysOf(clusterId, orphans), 'the dead batch\'s uploads').toEqual(SEALED_KEYS.slice(0, 2));

    await node!.restart();
    await ok(node!.url, 'GET', `/v1/metric/${clusterId}/measures?refresh=true&start=2100-01-01T00:00:00`);
    for (const seconds of PUSHES.slice(1)) {
      await ok(node!.url, 'POST', `/v1/metric/${clusterId}/measures`, measures(seconds));
      await ok(node!.url, 'GET', `/v1/metric/${clusterId}/measures?refresh=true&start=2100-01-01T00:00:00`);
    }
    await expectSameReads(clusterId, await pushAll(embedded!.url));
    // Taking the shards back, the node's janitor deletes what the dead batch uploaded (its fence is below the epoch).
    await vi.waitFor(async () => expect(splitKeysOf(clusterId, await objectsOf(clusterId))).toEqual(SEALED_KEYS), { timeout: 30_000, interval: 250 });
    const names = await objectsOf(clusterId);
    for (const orphan of orphans) expect(names).not.toContain(orphan);
    const status = await ok(node!.url, 'GET', '/v1/status?details=false');
    expect((status.cluster as Record<string, number>).janitor_deleted_objects).toBeGreaterThanOrEqual(orphans.length);
  }, 240_000);
});
