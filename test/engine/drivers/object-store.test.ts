// What only the Redis drivers with sealed splits in an object store have to
// get right, on each store (Ceph RGW, Swift's s3api): a refused commit leaves
// no object behind, superseded objects and a deleted metric's objects go,
// the janitor deletes only what no commit can reference, a name the index
// lists that the store lost is a typed error (a name superseded while being
// read is read again), a name read twice is fetched once, and a store that
// is down or silent fails calls as unavailable within seconds, the same
// client working again once it is back.
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SplitJanitor } from '../../../engine/drivers/s3/janitor.js';
import { splitObjectName, type SplitObjects } from '../../../engine/drivers/s3/objects.js';
import { s3SplitObjects, type S3SplitObjects } from '../../../engine/drivers/s3/s3-objects.js';
import { RedisSeriesStore } from '../../../engine/drivers/redis/series.js';
import { seriesField, shardKeys } from '../../../engine/drivers/redis/keys.js';
import type { IncomingLog, Lease, SeriesRange, Shard } from '../../../engine/drivers/types.js';
import { EngineUnavailable, FencedCommit, SplitObjectMissing } from '../../../engine/errors.js';
import { WriteQueue } from '../../../engine/record-writes.js';
import { engineMissing, isRunning, startRedis, type Engine, type ObjectStoreKind } from '../../cluster/engines.js';
import { freshBucket, REDIS_SHARDS, RedisSubject, sharedObjectStore } from './subjects.js';
import { until } from './until.js';

const G = 60_000_000;
const SPAN = G * 3600;
const bytes = (text: string) => Buffer.from(text);
const text = (value: Uint8Array | undefined) => (value === undefined ? undefined : Buffer.from(value).toString());
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function idInShard(incoming: IncomingLog, shard: Shard): string {
  for (;;) {
    const id = randomUUID();
    if (incoming.shardOf(id) === shard) return id;
  }
}

/** A metric's writes: its state, and these sealed splits (key multiple of SPAN → text, or null to remove). */
function writesOf(id: string, splits: Record<number, string | null>) {
  const writes = new WriteQueue();
  writes.put('state', id, bytes(`state of ${id}`));
  for (const [k, value] of Object.entries(splits)) {
    if (value === null) writes.remove('split', [id, G, Number(k) * SPAN]);
    else writes.put('split', [id, G, Number(k) * SPAN], bytes(value));
  }
  return { metricId: id, writes };
}

const everything = (metricId: string): SeriesRange => ({ metricId, granularity: G, start: 0, end: 100 * SPAN });

/** Every object name in the subject's bucket under `prefix`, sorted. */
async function names(objects: SplitObjects, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  await objects.list(prefix, async (page) => void out.push(...page));
  return out.sort();
}

async function splitsOf(store: RedisSeriesStore, id: string): Promise<Record<number, string | undefined>> {
  const snapshot = await store.load([id], [everything(id)]);
  return Object.fromEntries([...snapshot.splitKeys(everything(id))].map((key) => [key[2] / SPAN, text(snapshot.split(key))]));
}

/** The store's URL (bucket `gnocchi`) naming the bucket of `objects` instead. */
function sameBucket(url: string, objects: SplitObjects): string {
  return url.replace(/\/gnocchi$/, `/${(objects as S3SplitObjects).bucket}`);
}

/**
 * `restarts`: whether the outage case runs. Swift's s3api, after a restart
 * under load, answers writes 503 or NoSuchBucket for minutes (three CI runs:
 * once past 120 s): a flaky case. Ceph RGW is the target store.
 */
const KINDS: { kind: ObjectStoreKind; label: string; restarts: boolean }[] = [
  { kind: 'ceph', label: 'Ceph RGW', restarts: true },
  { kind: 'swift', label: 'Swift s3api', restarts: false },
];

for (const { kind, label, restarts } of KINDS) {
  const missing = engineMissing('redis') ?? engineMissing(kind);
  describe.skipIf(missing !== undefined)(missing ?? `Redis drivers with splits in ${label}`, { timeout: 120_000 }, () => {
    const store = sharedObjectStore(kind);
    let redis: Engine;
    let s: RedisSubject;
    let objects: SplitObjects;

    beforeAll(async () => {
      redis = await startRedis();
      await store.get();
    }, 180_000);
    afterAll(async () => {
      await redis?.stop();
      await store.stop();
    }, 60_000);
    beforeEach(async () => {
      s = await RedisSubject.open(redis, 'node-a', freshBucket((await store.get()).url));
      await s.drivers.client.flushall();
      objects = s.drivers.objects!;
      // Its first sweeps (an empty bucket) done, the janitor sweeps again only when a test asks or takes a lease.
      await s.drivers.janitor!.idle();
    });
    afterEach(async () => {
      await s.drivers.close();
    });

    /** Takes a lease, once the sweep that taking it starts is done. */
    const lease = async (shard: Shard, ttlMs = 60_000): Promise<Lease> => {
      const fence = await s.drivers.coordinator.lock(shard, ttlMs);
      if (fence === null) throw new Error(`shard ${shard} is held`);
      await s.drivers.janitor!.idle();
      return { shard, fence };
    };

    it('puts each new split under a name of its shard, metric, granularity, key and revision, and nothing in Redis', async () => {
      const id = idInShard(s.incoming, 1);
      await s.series.commit(await lease(1), [writesOf(id, { 1: 'one', 2: 'two' })]);
      const stored = await names(objects);
      expect(stored).toHaveLength(2);
      for (const [i, name] of stored.entries()) expect(name).toMatch(new RegExp(`^s1/${id}/${G}:${(i + 1) * SPAN}:1-[0-9a-f]{16}$`));
      expect(await s.drivers.client.keys('*:sp:*')).toEqual([]);
      expect(await splitsOf(s.series, id)).toEqual({ 1: 'one', 2: 'two' });
    });

    it('deletes what a refused commit put: under a lost lease, and from states changed since its load', async () => {
      const [id, other] = [idInShard(s.incoming, 0), idInShard(s.incoming, 0)];
      const old = await lease(0, 200);
      await sleep(300);
      const current = await lease(0);
      await expect(s.series.commit(old, [writesOf(id, { 1: 'late' })])).rejects.toBeInstanceOf(FencedCommit);
      expect(await names(objects)).toEqual([]);

      const rival = new RedisSeriesStore(s.drivers.client, REDIS_SHARDS, { objects });
      await s.series.load([other]);
      await rival.load([other]);
      await rival.commit(current, [writesOf(other, { 1: 'first' })]);
      const first = await names(objects);
      await expect(s.series.commit(current, [writesOf(other, { 1: 'from the old state', 2: 'too' })])).rejects.toThrow(/changed since it was loaded/);
      expect(await names(objects)).toEqual(first);
      expect(await splitsOf(s.series, other)).toEqual({ 1: 'first' });
    });

    it('deletes the objects a commit superseded or removed, and keeps the others', async () => {
      const id = idInShard(s.incoming, 2);
      const held = await lease(2);
      await s.series.commit(held, [writesOf(id, { 1: 'one', 2: 'two', 3: 'three' })]);
      const [one, two, three] = await names(objects);
      await s.series.commit(held, [writesOf(id, { 1: 'one merged', 2: null })]);
      const after = await names(objects);
      expect(after).toHaveLength(2);
      expect(after).toContain(three);
      expect(after).not.toContain(one);
      expect(after).not.toContain(two);
      expect(await splitsOf(s.series, id)).toEqual({ 1: 'one merged', 3: 'three' });
    });

    it("deletes a deleted metric's objects, and the uploads of a commit computed before the deletion", async () => {
      const [gone, kept] = [idInShard(s.incoming, 3), idInShard(s.incoming, 3)];
      const held = await lease(3);
      await s.series.commit(held, [writesOf(gone, { 1: 'a', 2: 'b' }), writesOf(kept, { 1: 'kept' })]);
      await s.series.markDeleted(gone);
      expect(await names(objects, `s3/${gone}/`)).toEqual([]);
      await s.series.commit(held, [writesOf(gone, { 3: 'late' }), writesOf(kept, { 2: 'kept too' })]);
      expect(await names(objects, `s3/${gone}/`)).toEqual([]);
      expect(await splitsOf(s.series, kept)).toEqual({ 1: 'kept', 2: 'kept too' });
    });

    it("sweeps objects of an older fence and of deleted metrics, never a referenced one nor the current fence's", async () => {
      const [id, deleted] = [idInShard(s.incoming, 1), idInShard(s.incoming, 1)];
      const first = await lease(1, 200);
      await s.series.commit(first, [writesOf(id, { 1: 'referenced' }), writesOf(deleted, { 1: 'of a deleted metric' })]);
      const referenced = await names(objects, `s1/${id}/`);
      await sleep(300);
      const second = await lease(1);
      const field = seriesField(G, 2 * SPAN);
      const orphans = {
        older: splitObjectName(1, id, field, `${first.fence}-00000000000000aa`),
        current: splitObjectName(1, id, field, `${second.fence}-00000000000000bb`),
        foreign: `s1/${id}/not a split name`,
        otherShard: splitObjectName(2, id, field, `${first.fence}-00000000000000cc`),
      };
      await objects.put(new Map(Object.values(orphans).map((name) => [name, bytes('orphan')])));
      await s.series.markDeleted(deleted);
      // The deletion's own clean-up missed it (as if the node had died first).
      const missed = splitObjectName(1, deleted, field, `${second.fence}-00000000000000dd`);
      await objects.put(new Map([[missed, bytes('missed')]]));

      const janitor = new SplitJanitor({ client: s.drivers.client, objects, coordinator: s.drivers.coordinator, intervalMs: 3_600_000 });
      expect(await janitor.sweep(1)).toBe(2);
      expect(janitor.deleted).toBe(2);
      expect(await names(objects)).toEqual([...referenced, orphans.current, orphans.foreign, orphans.otherShard].sort());
      expect(await splitsOf(s.series, id)).toEqual({ 1: 'referenced' });
      expect(await janitor.sweep(1)).toBe(0);
    });

    it("runs a node's janitor on the shards it holds as soon as it joins", async () => {
      const id = idInShard(s.incoming, 0);
      await s.drivers.client.set(shardKeys.epoch(0), '5');
      await objects.put(new Map([[splitObjectName(0, id, seriesField(G, SPAN), '4-00000000000000ee'), bytes('orphan')]]));
      // The only member: it holds every shard.
      await s.drivers.coordinator.close();
      const node = await RedisSubject.open(redis, 'node-b', sameBucket((await store.get()).url, objects));
      try {
        await until(() => node.drivers.janitor!.deleted === 1, 20_000);
        expect(await names(objects)).toEqual([]);
      } finally {
        await node.drivers.close();
      }
    });

    it('throws SplitObjectMissing for a split the index lists and the store lost', async () => {
      const id = idInShard(s.incoming, 2);
      await s.series.commit(await lease(2), [writesOf(id, { 1: 'one', 2: 'two' })]);
      const [lost] = await names(objects);
      await objects.delete([lost!]);
      await expect(s.series.load([id], [everything(id)])).rejects.toThrow(SplitObjectMissing);
      await expect(s.series.load([id], [everything(id)])).rejects.toThrow(lost!);
      // Out of the ranges asked, nothing is fetched and nothing is missed.
      const snapshot = await s.series.load([id]);
      expect([...snapshot.splitKeys(everything(id))]).toHaveLength(2);
    });

    it('reads a split superseded between its index and its object again', async () => {
      const id = idInShard(s.incoming, 0);
      const held = await lease(0);
      await s.series.commit(held, [writesOf(id, { 1: 'old' })]);
      const writer = new RedisSeriesStore(s.drivers.client, REDIS_SHARDS, { objects });
      await writer.load([id]);
      let raced = false;
      const racing: SplitObjects = {
        put: (o) => objects.put(o),
        delete: (n) => objects.delete(n),
        list: (p, v) => objects.list(p, v),
        async get(wanted) {
          if (!raced) {
            raced = true;
            await writer.commit(held, [writesOf(id, { 1: 'new' })]);
          }
          return objects.get(wanted);
        },
      };
      const reader = new RedisSeriesStore(s.drivers.client, REDIS_SHARDS, { objects: racing });
      expect(await splitsOf(reader, id)).toEqual({ 1: 'new' });
      expect(raced).toBe(true);
    });

    it('fetches a name read twice once', async () => {
      const id = idInShard(s.incoming, 1);
      await s.series.commit(await lease(1), [writesOf(id, { 1: 'one', 2: 'two' })]);
      const counters = s.drivers.objects!.counters;
      const gets = counters.gets;
      await splitsOf(s.series, id);
      expect(counters.gets - gets).toBe(2);
      const hits = counters.cacheHits;
      expect(await splitsOf(s.series, id)).toEqual({ 1: 'one', 2: 'two' });
      expect(counters.gets - gets).toBe(2);
      expect(counters.cacheHits - hits).toBe(2);
    });

    it.runIf(restarts)('fails every object call as unavailable within seconds while the store is down, and works again on the same client', async () => {
      const id = idInShard(s.incoming, 3);
      const held = await lease(3);
      await s.series.commit(held, [writesOf(id, { 1: 'before' })]);
      const engine = await store.get();
      // No cache: its loads go to the store.
      const cold = new RedisSeriesStore(s.drivers.client, REDIS_SHARDS, { objects: s3SplitObjects(`${sameBucket(engine.url, objects)}?cache=0`, { connectTimeoutMs: 500, requestTimeoutMs: 2000 }) });
      let running = true;
      const failures: unknown[] = [];
      let served = 0;
      const traffic = (async () => {
        for (let v = 0; running; v++) {
          try {
            await s.series.commit(held, [writesOf(id, { 2: `v${v}` })]);
            served++;
          } catch (err) {
            failures.push(err);
            await sleep(50);
          }
        }
      })();
      await until(() => served > 0, 10_000);
      await engine.down();
      const calls: [string, () => Promise<unknown>][] = [
        ['load', () => cold.load([id], [everything(id)])],
        ['commit', () => s.series.commit(held, [writesOf(id, { 3: 'refused' })])],
        ['delete', () => objects.delete(['s3/none'])],
        ['list', () => names(objects)],
      ];
      for (const [name, call] of calls) {
        const started = Date.now();
        await expect(call(), name).rejects.toBeInstanceOf(EngineUnavailable);
        expect(Date.now() - started, name).toBeLessThan(10_000);
      }
      await engine.start();
      await until(async () => {
        try {
          await cold.load([id], [everything(id)]);
          return true;
        } catch {
          return false;
        }
      }, 120_000);
      // Swift's s3api answers 503 "reduce your request rate" to writes for a while after its reads are back.
      const recovered = served;
      await until(() => served > recovered, 120_000);
      running = false;
      await traffic;
      expect(failures.length).toBeGreaterThan(0);
      for (const err of failures) expect(err).toBeInstanceOf(EngineUnavailable);
      const after = await splitsOf(s.series, id);
      expect(after[1]).toBe('before');
      expect(after[2]).toMatch(/^v\d+$/);
    }, 420_000);

    // Last: the store is the file's, stopped here rather than after all.
    it('stops every process of the store, and nothing else', async () => {
      const engine = await store.get();
      const pids = engine.pids();
      expect(pids.length).toBeGreaterThanOrEqual(kind === 'ceph' ? 3 : 4);
      await store.stop();
      expect(pids.filter(isRunning)).toEqual([]);
      expect(isRunning(redis.pid!)).toBe(true);
    }, 60_000);
  });
}

describe('an object store that accepts connections and never answers', () => {
  let server: Server;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it.each([
    ['put', (o: SplitObjects) => o.put(new Map([['s0/m/1:2:3-ab', bytes('x')]]))],
    ['get', (o: SplitObjects) => o.get(['s0/m/1:2:3-ab'])],
    ['delete', (o: SplitObjects) => o.delete(['s0/m/1:2:3-ab'])],
    ['list', (o: SplitObjects) => o.list('s0/', async () => {})],
  ])('fails %s as unavailable after its timeouts, not a hang', async (_name, call) => {
    const { port } = server.address() as { port: number };
    const objects = s3SplitObjects(`s3://key:secret@127.0.0.1:${port}/bucket`, { connectTimeoutMs: 300, requestTimeoutMs: 500 });
    const started = Date.now();
    try {
      await expect(call(objects)).rejects.toBeInstanceOf(EngineUnavailable);
      // Two attempts of 500 ms and a retry's back-off.
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      objects.close();
    }
  });
});
