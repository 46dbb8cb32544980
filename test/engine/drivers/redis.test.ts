// What only the Redis drivers have to get right: leases that can be lost and
// the fence that refuses a late commit, the assignment of shards to live
// nodes, commits that cannot be applied twice or over a newer state, sealed
// splits loaded by range, and Redis going away (killed, restarted) under
// appends without an acknowledged record lost, an uncaught exception, or a
// client to re-create.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connectRedis, runScript } from '../../../engine/drivers/redis/connection.js';
import { RedisCoordinator } from '../../../engine/drivers/redis/coordinator.js';
import { shardKeys } from '../../../engine/drivers/redis/keys.js';
import { ownerOf, shardsOf } from '../../../engine/drivers/redis/rendezvous.js';
import { COMMIT } from '../../../engine/drivers/redis/scripts.js';
import { RedisSeriesStore } from '../../../engine/drivers/redis/series.js';
import type { IncomingLog, Shard } from '../../../engine/drivers/types.js';
import { EngineUnavailable, FencedCommit, SnapshotMiss } from '../../../engine/errors.js';
import { WriteQueue } from '../../../engine/record-writes.js';
import { engineMissing, startRedis, type Engine } from '../../cluster/engines.js';
import { REDIS_SHARDS, RedisSubject } from './subjects.js';
import { until } from './until.js';

const G = 60_000_000;
const SPAN = G * 3600;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const bytes = (text: string) => Buffer.from(text);
const text = (value: Uint8Array | undefined) => (value === undefined ? undefined : Buffer.from(value).toString());

function idInShard(incoming: IncomingLog, shard: Shard): string {
  for (;;) {
    const id = randomUUID();
    if (incoming.shardOf(id) === shard) return id;
  }
}

function stateWrite(id: string, value: string) {
  const writes = new WriteQueue();
  writes.put('state', id, bytes(value));
  return { metricId: id, writes };
}

async function stateOf(store: RedisSeriesStore, id: string): Promise<string | undefined> {
  const snapshot = await store.load([id]);
  return text(snapshot.state(id));
}

describe('rendezvous assignment', () => {
  const SHARDS = 64;
  const nodes = ['node-a', 'node-b', 'node-c', 'node-d', 'node-e'];

  it.each([1, 2, 3, 4])('gives every shard to exactly one of %i members', (n) => {
    const members = nodes.slice(0, n);
    const held = members.flatMap((node) => shardsOf(node, members, SHARDS));
    expect(held.sort((a, b) => a - b)).toEqual(Array.from({ length: SHARDS }, (_, i) => i));
  });

  it.each([1, 2, 3, 4])('moves only the shards the joining member takes, about 1/%i+1 of them', (n) => {
    const before = nodes.slice(0, n);
    const after = nodes.slice(0, n + 1);
    const moved = Array.from({ length: SHARDS }, (_, shard) => shard).filter((shard) => ownerOf(shard, before) !== ownerOf(shard, after));
    for (const shard of moved) expect(ownerOf(shard, after)).toBe(nodes[n]);
    expect(moved.length).toBeLessThanOrEqual((2 * SHARDS) / (n + 1));
  });
});

const missing = engineMissing('redis');

describe.skipIf(missing !== undefined)(missing ?? 'Redis drivers', { timeout: 60_000 }, () => {
  let engine: Engine;
  let subjects: RedisSubject[];

  const subject = async (nodeId = 'node-a') => {
    const s = await RedisSubject.open(engine, nodeId);
    subjects.push(s);
    return s;
  };

  beforeAll(async () => {
    engine = await startRedis();
  });
  afterAll(async () => {
    await engine.stop();
  });
  beforeEach(async () => {
    subjects = [];
    const s = await subject();
    await s.drivers.client.flushall();
  });
  afterEach(async () => {
    for (const s of subjects) await s.drivers.close().catch(() => {});
  });

  it('refuses a commit under a lease another node took after it expired, and applies the new holder\'s', async () => {
    const [a, b] = [subjects[0]!, await subject('node-b')];
    const id = idInShard(a.incoming, 0);
    const old = (await a.drivers.coordinator.lock(0, 200))!;
    expect(await b.drivers.coordinator.lock(0, 60_000)).toBeNull();
    await sleep(300);
    const fence = (await b.drivers.coordinator.lock(0, 60_000))!;
    expect(fence).toBeGreaterThan(old);
    expect(await a.drivers.coordinator.renew(0, old, 200)).toBe(false);
    await expect(a.series.commit({ shard: 0, fence: old }, [stateWrite(id, 'late')])).rejects.toBeInstanceOf(FencedCommit);
    await b.series.commit({ shard: 0, fence }, [stateWrite(id, 'new holder')]);
    expect(await stateOf(a.series, id)).toBe('new holder');
    // The old holder's release leaves the new lease alone.
    await a.drivers.coordinator.release(0, old);
    expect(await a.drivers.coordinator.lock(0, 60_000)).toBeNull();
    expect(await b.drivers.coordinator.renew(0, fence, 60_000)).toBe(true);
  });

  it('keeps a renewed lease, and frees a released one; any node sees the fence a shard is held under', async () => {
    const coordinator = subjects[0]!.drivers.coordinator;
    const other = (await subject('node-b')).drivers.coordinator;
    expect(await other.leaseOf(1)).toBeNull();
    const fence = (await coordinator.lock(1, 300))!;
    expect(await other.leaseOf(1)).toBe(fence);
    await sleep(200);
    expect(await coordinator.renew(1, fence, 300)).toBe(true);
    await sleep(200);
    expect(await coordinator.lock(1, 300)).toBeNull();
    expect(await other.leaseOf(1)).toBe(fence);
    await coordinator.release(1, fence);
    expect(await other.leaseOf(1)).toBeNull();
    expect(await coordinator.lock(1, 300)).toBe(fence + 1);
    await sleep(400);
    expect(await other.leaseOf(1), 'expired').toBeNull();
  });

  it('spreads the shards over the live nodes, and hands them over when one joins or leaves', async () => {
    const client = subjects[0]!.drivers.client;
    const coordinators = ['n1', 'n2', 'n3'].map((nodeId) => new RedisCoordinator(client, { nodeId, shards: 16, memberTtlMs: 300 }));
    const changes = coordinators.map(() => 0);
    coordinators.forEach((c, i) => c.onChange(() => changes[i]!++));
    for (const c of coordinators.slice(0, 2)) await c.start();
    await coordinators[0]!.heartbeat();
    const partition = (cs: RedisCoordinator[]) => cs.flatMap((c) => c.owned()).sort((x, y) => x - y);
    const all = Array.from({ length: 16 }, (_, i) => i);
    expect(partition(coordinators.slice(0, 2))).toEqual(all);
    await coordinators[2]!.start();
    await until(() => coordinators.every((c) => c.liveMembers().length === 3), 2000);
    expect(partition(coordinators)).toEqual(all);
    expect(changes[0]).toBeGreaterThanOrEqual(2);
    await coordinators[1]!.close();
    await until(() => [0, 2].every((i) => coordinators[i]!.liveMembers().length === 2), 2000);
    expect(partition([coordinators[0]!, coordinators[2]!])).toEqual(all);
    for (const c of [coordinators[0]!, coordinators[2]!]) await c.close();
  });

  it('forgets a node whose heartbeat expired', async () => {
    const client = subjects[0]!.drivers.client;
    const [stays, dies] = ['n1', 'n2'].map((nodeId) => new RedisCoordinator(client, { nodeId, shards: 8, memberTtlMs: 300 }));
    await dies!.heartbeat();
    await stays!.start();
    expect(stays!.liveMembers()).toEqual(['n1', 'n2']);
    await until(() => stays!.liveMembers().length === 1, 2000);
    expect(stays!.owned()).toEqual(Array.from({ length: 8 }, (_, i) => i));
    await stays!.close();
  });

  it("hands each live node's last report to any node, and none of a node that left", async () => {
    const client = subjects[0]!.drivers.client;
    let backlog = 5;
    const [a, b] = ['n1', 'n2'].map((nodeId) => new RedisCoordinator(client, { nodeId, shards: 4, memberTtlMs: 3000, report: () => ({ nodeId, backlog }) }));
    await a!.start();
    await b!.start();
    await a!.heartbeat();
    expect(await a!.reports()).toEqual(new Map([['n1', { nodeId: 'n1', backlog: 5 }], ['n2', { nodeId: 'n2', backlog: 5 }]]));
    backlog = 7;
    await b!.heartbeat();
    expect((await a!.reports()).get('n2')).toEqual({ nodeId: 'n2', backlog: 7 });
    await b!.close();
    await a!.heartbeat();
    expect([...(await a!.reports()).keys()]).toEqual(['n1']);
    await a!.close();
  });

  it('refuses a commit computed from states another commit changed since', async () => {
    const s = subjects[0]!;
    const other = new RedisSeriesStore(s.drivers.client, REDIS_SHARDS);
    const id = idInShard(s.incoming, 2);
    const lease = await s.lease(2);
    await s.series.load([id]);
    await other.load([id]);
    await other.commit(lease, [stateWrite(id, 'first')]);
    await expect(s.series.commit(lease, [stateWrite(id, 'from the old state')])).rejects.toThrow(/changed since it was loaded/);
    expect(await stateOf(s.series, id)).toBe('first');
    await s.series.commit(lease, [stateWrite(id, 'recomputed')]);
    expect(await stateOf(s.series, id)).toBe('recomputed');
  });

  it('applies a commit run twice once', async () => {
    const s = subjects[0]!;
    const id = idInShard(s.incoming, 0);
    const lease = await s.lease(0);
    const keys = [shardKeys.lock(0), shardKeys.deleted(0), shardKeys.states(0), shardKeys.revisions(0), shardKeys.chunks(0, id), shardKeys.splitIndex(0, id)];
    const run = (revision: string, value: string) =>
      runScript(s.drivers.client, COMMIT, keys, [String(lease.fence), '1', id, '*', revision, shardKeys.splitPrefix(0, id), '2', 'S', '', value, 'P', `${G}:${SPAN}`, value]);
    expect(await run('r1', 'once')).toEqual([0, [], 0, []]);
    expect(await run('r1', 'once')).toEqual([0, [], 1, []]);
    const splitNames = () => s.drivers.client.keys(`${shardKeys.splitPrefix(0, id)}*`);
    expect(await splitNames()).toEqual([`${shardKeys.splitPrefix(0, id)}${G}:${SPAN}:r1`]);
    expect(await run('r2', 'twice')).toEqual([0, [], 0, []]);
    // The split written by r1 is replaced by r2's, not kept beside it.
    expect(await splitNames()).toEqual([`${shardKeys.splitPrefix(0, id)}${G}:${SPAN}:r2`]);
    const snapshot = await s.series.load([id], [{ metricId: id, granularity: G, start: 0, end: 2 * SPAN }]);
    expect([text(snapshot.state(id)), text(snapshot.split([id, G, SPAN]))]).toEqual(['twice', 'twice']);
  });

  it('loads sealed splits only in the ranges asked, and says which one it missed', async () => {
    const s = subjects[0]!;
    const id = idInShard(s.incoming, 1);
    const writes = new WriteQueue();
    for (const k of [1, 2, 3]) writes.put('split', [id, G, k * SPAN], bytes(`split ${k}`));
    await s.series.commit(await s.lease(1), [{ metricId: id, writes }]);
    let snapshot = await s.series.load([id]);
    expect([...snapshot.splitKeys({ metricId: id, granularity: G, start: 0, end: 10 * SPAN })].map((k) => k[2])).toEqual([SPAN, 2 * SPAN, 3 * SPAN]);
    expect(snapshot.split([id, G, 5 * SPAN])).toBeUndefined();
    expect(() => snapshot.split([id, G, 2 * SPAN])).toThrow(SnapshotMiss);
    try {
      snapshot.split([id, G, 2 * SPAN]);
    } catch (err) {
      expect((err as SnapshotMiss).keys).toEqual([[id, G, 2 * SPAN]]);
    }
    snapshot = await s.series.load([id], [{ metricId: id, granularity: G, start: 2 * SPAN, end: 2 * SPAN + 1 }]);
    expect(text(snapshot.split([id, G, 2 * SPAN]))).toBe('split 2');
    expect(() => snapshot.split([id, G, 3 * SPAN])).toThrow(SnapshotMiss);
  });

  it('keeps every acknowledged append through a kill -9 and restart, the others failing as unavailable', async () => {
    const s = subjects[0]!;
    const acked: { shard: Shard; seq: number; payload: string }[] = [];
    const failures: unknown[] = [];
    let n = 0;
    let running = true;
    const appender = async () => {
      while (running) {
        const payload = `push ${n++} ${'x'.repeat(1000)}`;
        const shards = [n % REDIS_SHARDS, (n + 1) % REDIS_SHARDS];
        try {
          const seqs = await s.incoming.append(new Map(shards.map((shard) => [shard, bytes(`${shard} ${payload}`)])));
          for (const shard of shards) acked.push({ shard, seq: seqs.get(shard)!, payload: `${shard} ${payload}` });
        } catch (err) {
          failures.push(err);
          await sleep(20);
        }
      }
    };
    const appenders = [appender(), appender(), appender()];
    await sleep(300);
    const beforeKill = acked.length;
    await engine.kill9();
    await sleep(300);
    await engine.start();
    await until(() => s.drivers.client.status === 'ready', 10_000);
    const atRestart = acked.length;
    await sleep(300);
    running = false;
    await Promise.all(appenders);
    expect(beforeKill).toBeGreaterThan(0);
    expect(acked.length).toBeGreaterThan(atRestart);
    expect(failures.length).toBeGreaterThan(0);
    for (const err of failures) expect(err).toBeInstanceOf(EngineUnavailable);
    const stored = new Map<string, string>();
    for (let shard = 0; shard < REDIS_SHARDS; shard++) await s.incoming.scan(shard, (seq, value) => stored.set(`${shard} ${seq}`, text(value)!));
    for (const { shard, seq, payload } of acked) expect(stored.get(`${shard} ${seq}`)).toBe(payload);
  });

  it('fails every call as unavailable while Redis is down, without an uncaught error, and recovers on the same client', async () => {
    const errors: unknown[] = [];
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    process.on('unhandledRejection', onUncaught);
    const s = subjects[0]!;
    s.drivers.client.on('error', (err) => errors.push(err));
    try {
      const id = idInShard(s.incoming, 3);
      const lease = await s.lease(3);
      const before = (await s.incoming.append(new Map([[3, bytes('before')]]))).get(3)!;
      // A dropped connection first: the client comes back by itself and the numbering goes on.
      s.drivers.client.disconnect(true);
      await until(() => s.drivers.client.status !== 'ready', 5000);
      await until(() => s.drivers.client.status === 'ready', 5000);
      const afterReconnect = (await s.incoming.append(new Map([[3, bytes('after reconnect')]]))).get(3)!;
      expect(afterReconnect).toBeGreaterThan(before);

      await engine.down('SIGTERM');
      const calls: [string, () => Promise<unknown>][] = [
        ['append', () => s.incoming.append(new Map([[3, bytes('refused')]]))],
        ['scan', () => s.incoming.scan(3, () => {})],
        ['fetch', () => s.incoming.fetch(3, [before], () => {})],
        ['drop', () => s.incoming.drop(3, before)],
        ['load', () => s.series.load([id])],
        ['commit', () => s.series.commit(lease, [stateWrite(id, 'refused')])],
        ['markDeleted', () => s.series.markDeleted(id)],
        ['lock', () => s.drivers.coordinator.lock(0, 1000)],
        ['renew', () => s.drivers.coordinator.renew(3, lease.fence, 1000)],
        ['release', () => s.drivers.coordinator.release(3, lease.fence)],
        ['leaseOf', () => s.drivers.coordinator.leaseOf(3)],
        ['heartbeat', () => s.drivers.coordinator.heartbeat()],
        ['connect', () => connectRedis(engine.url, { connectTimeoutMs: 300 })],
      ];
      for (const [name, call] of calls) {
        const started = Date.now();
        await expect(call(), name).rejects.toBeInstanceOf(EngineUnavailable);
        expect(Date.now() - started, name).toBeLessThan(5000);
      }
      await sleep(500);
      await engine.start();
      await until(() => s.drivers.client.status === 'ready', 10_000);
      const afterRestart = (await s.incoming.append(new Map([[3, bytes('after restart')]]))).get(3)!;
      expect(afterRestart).toBeGreaterThan(afterReconnect);
      await s.series.commit(lease, [stateWrite(id, 'after restart')]);
      expect(await stateOf(s.series, id)).toBe('after restart');
      expect(await s.drivers.coordinator.renew(3, lease.fence, 1000)).toBe(true);
      expect(errors.length).toBeGreaterThan(0);
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
      process.off('unhandledRejection', onUncaught);
    }
  });
});
