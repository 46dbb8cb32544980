/**
 * What sealed splits in an object store cost, per store (Ceph RGW, Swift's
 * s3api), through the drivers' own client (engine/drivers/s3/): the store's
 * start-up time and memory, PUT, GET and DELETE of 16 KiB objects (one at a
 * time for the latency, 16 in flight for the throughput), GETs answered by
 * the object cache, and a processing commit of 20 metrics each sealing a
 * split, beside the same commit with the splits in Redis. CPU per operation
 * is this Node process's and the store's processes' (from /proc). Starts
 * each store and a Redis with scripts/cluster/ and stops them.
 *
 *   npm run bench:object-store -- [--stores ceph,swift] [--objects N]
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { redisDrivers, type RedisDrivers } from '../engine/drivers/redis/drivers.js';
import { s3SplitObjects } from '../engine/drivers/s3/s3-objects.js';
import type { MetricWrites } from '../engine/drivers/types.js';
import { WriteQueue } from '../engine/record-writes.js';
import { freePort } from './harness.js';
import { memoryKiB, processTree, treeCpuSeconds } from './processes.js';

const SCRIPTS = fileURLToPath(new URL('../../scripts/cluster/', import.meta.url));
const G = 1_000_000;
const SPAN = G * 3600;
const OBJECT_BYTES = 16 * 1024;

interface Started {
  url: string;
  dir: string;
  startSeconds: number;
  /** The processes of DIR/pid. */
  pids: number[];
}

function startScript(name: string, port: number): Started {
  const dir = mkdtempSync(join(tmpdir(), `gnocchi-bench-${name}-`));
  const t0 = performance.now();
  const url = execFileSync('bash', [join(SCRIPTS, `start-${name}.sh`), dir, String(port)]).toString().trim();
  const startSeconds = (performance.now() - t0) / 1000;
  return { url, dir, startSeconds, pids: readFileSync(join(dir, 'pid'), 'utf8').trim().split('\n').map(Number) };
}

function stop(started: Started): void {
  execFileSync('bash', [join(SCRIPTS, 'stop.sh'), started.dir]);
  rmSync(started.dir, { recursive: true, force: true });
}

/** A port whose next three are free too (Swift listens on PORT to PORT+3, Ceph's monitor on PORT+1). */
async function portRange(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 3 <= 65535) return port;
  }
}


function nodeCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

interface Row {
  store: string;
  case: string;
  ops: number;
  'ops/s': number;
  'ms/op': number;
  'node CPU ms/op': number;
  'store CPU ms/op': number;
}

/** Runs `work` (which does `ops` operations) and reports per operation; ms/op is wall time over ops, latency when one at a time. */
async function measure(store: string, name: string, pids: number[], ops: number, work: () => Promise<unknown>): Promise<Row> {
  const node0 = nodeCpuSeconds();
  const store0 = treeCpuSeconds(pids);
  const t0 = performance.now();
  await work();
  const ms = performance.now() - t0;
  const per = (seconds: number) => Math.round(((seconds * 1000) / ops) * 100) / 100;
  const row: Row = {
    store,
    case: name,
    ops,
    'ops/s': Math.round((ops / ms) * 1000),
    'ms/op': Math.round((ms / ops) * 100) / 100,
    'node CPU ms/op': per(nodeCpuSeconds() - node0),
    'store CPU ms/op': per(treeCpuSeconds(pids) - store0),
  };
  console.log(JSON.stringify(row));
  return row;
}

async function oneAtATime<T>(items: readonly T[], op: (item: T) => Promise<unknown>): Promise<void> {
  for (const item of items) await op(item);
}

/** A batch of 20 metrics of shard 0, each sealing one 16 KiB split (its key `round`) beside a 4 KiB state. */
function sealingBatch(ids: readonly string[], round: number): MetricWrites[] {
  return ids.map((id) => {
    const writes = new WriteQueue();
    writes.put('state', id, randomBytes(4096));
    writes.put('split', [id, G, round * SPAN], randomBytes(OBJECT_BYTES));
    return { metricId: id, writes };
  });
}

async function commits(store: string, drivers: RedisDrivers, pids: number[], rounds: number): Promise<Row> {
  const ids: string[] = [];
  while (ids.length < 20) {
    const id = randomUUID();
    if (drivers.incoming.shardOf(id) === 0) ids.push(id);
  }
  const fence = (await drivers.coordinator.lock(0, 600_000))!;
  const batches = Array.from({ length: rounds }, (_, r) => sealingBatch(ids, r));
  return measure(store, 'commit of 20 metrics sealing a split each', pids, rounds, () =>
    oneAtATime(batches, (batch) => drivers.series.commit({ shard: 0, fence }, batch)),
  );
}

async function objectRows(label: string, url: string, pids: number[], count: number): Promise<Row[]> {
  const rows: Row[] = [];
  const cold = s3SplitObjects(`${url}?cache=0`);
  const cached = s3SplitObjects(`${url}?cache=${2 * count * OBJECT_BYTES}`);
  try {
    await cold.ensureBucket();
    const prefix = `bench/${randomUUID()}/`;
    const names = Array.from({ length: count }, (_, i) => `${prefix}${i}`);
    const body = randomBytes(OBJECT_BYTES);
    const half = Math.floor(count / 4);
    rows.push(await measure(label, 'PUT 16 KiB, 1 in flight', pids, half, () => oneAtATime(names.slice(0, half), (n) => cold.put(new Map([[n, body]])))));
    rows.push(await measure(label, 'PUT 16 KiB, 16 in flight', pids, count - half, () => cold.put(new Map(names.slice(half).map((n) => [n, body])))));
    rows.push(await measure(label, 'GET 16 KiB, 1 in flight', pids, half, () => oneAtATime(names.slice(0, half), (n) => cold.get([n]))));
    rows.push(await measure(label, 'GET 16 KiB, 16 in flight', pids, count, () => cached.get(names)));
    const gets = cached.counters.gets;
    rows.push(await measure(label, 'GET again, from the object cache', pids, count, () => cached.get(names)));
    if (cached.counters.gets !== gets) throw new Error('the object cache missed');
    rows.push(await measure(label, 'DELETE 1 at a time', pids, half, () => oneAtATime(names.slice(0, half), (n) => cold.delete([n]))));
    rows.push(await measure(label, 'DELETE, 50 per DeleteObjects, 2 in flight', pids, count - half, () => cold.delete(names.slice(half))));
  } finally {
    cold.close();
    cached.close();
  }
  return rows;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { stores: { type: 'string', default: 'ceph,swift' }, objects: { type: 'string', default: '2000' }, commits: { type: 'string', default: '50' } } });
  const count = Number(values.objects);
  const rounds = Number(values.commits);
  const redis = startScript('redis', await freePort());
  const rows: Row[] = [];
  const footprint: Record<string, unknown>[] = [];
  try {
    const redisOnly = await redisDrivers({ incoming: redis.url, series: redis.url, shards: 4 }, { nodeId: 'bench' });
    try {
      rows.push(await commits('Redis only', redisOnly, redis.pids, rounds));
    } finally {
      await redisOnly.close();
    }
    for (const kind of values.stores.split(',')) {
      const store = startScript(kind, await portRange());
      try {
        const idle = Math.round(memoryKiB(processTree(store.pids)).rssKiB / 1024);
        rows.push(...(await objectRows(kind, store.url, store.pids, count)));
        execFileSync('redis-cli', ['-u', redis.url, 'FLUSHALL']);
        const drivers = await redisDrivers({ incoming: redis.url, series: redis.url, shards: 4, splits: store.url }, { nodeId: 'bench' });
        try {
          rows.push(await commits(`Redis + ${kind}`, drivers, [...store.pids, ...redis.pids], rounds));
        } finally {
          await drivers.close();
        }
        footprint.push({ store: kind, 'start s': Math.round(store.startSeconds * 10) / 10, processes: processTree(store.pids).length, 'RSS MiB idle': idle, 'RSS MiB after': Math.round(memoryKiB(processTree(store.pids)).rssKiB / 1024) });
      } finally {
        stop(store);
      }
    }
  } finally {
    stop(redis);
  }
  console.table(footprint);
  console.table(rows);
}

await main();
