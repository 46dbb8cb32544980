/**
 * What the Redis drivers cost: appends per second of 1 KB incoming records
 * (one at a time, and many in flight), and commits per second of a
 * processing batch of 20 metrics on one shard (commit alone, and load then
 * commit as processing does), with the CPU seconds this Node process and
 * redis-server spent per operation. Starts its own Redis with
 * scripts/cluster/start-redis.sh (AOF, appendfsync always) and stops it.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/redis-drivers.js [--seconds S]
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { redisDrivers, type RedisDrivers } from '../engine/drivers/redis/drivers.js';
import type { MetricWrites } from '../engine/drivers/types.js';
import { WriteQueue } from '../engine/record-writes.js';
import { freePort } from './harness.js';

const SCRIPTS = fileURLToPath(new URL('../../scripts/cluster/', import.meta.url));
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
const G = 60_000_000;

/** CPU seconds a process spent so far (user + system), from /proc. */
function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

function nodeCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

interface Row {
  case: string;
  ops: number;
  'ops/s': number;
  'node CPU µs/op': number;
  'redis CPU µs/op': number;
}

/** Runs `op` from `inFlight` loops for `seconds`. */
async function measure(name: string, redisPid: number, seconds: number, inFlight: number, op: () => Promise<unknown>): Promise<Row> {
  let ops = 0;
  const node0 = nodeCpuSeconds();
  const redis0 = processCpuSeconds(redisPid);
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < deadline) {
        await op();
        ops++;
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const perOp = (cpu: number) => Math.round((cpu / ops) * 1e6);
  return {
    case: name,
    ops,
    'ops/s': Math.round(ops / elapsed),
    'node CPU µs/op': perOp(nodeCpuSeconds() - node0),
    'redis CPU µs/op': perOp(processCpuSeconds(redisPid) - redis0),
  };
}

/** A batch of 20 metrics of shard 0: each a 4 KB state, a 1 KB chunk and, every tenth commit, a 16 KB sealed split. */
function batchOf(ids: readonly string[], round: number): MetricWrites[] {
  const state = Buffer.alloc(4096, round);
  const chunk = Buffer.alloc(1024, round);
  const split = Buffer.alloc(16384, round);
  return ids.map((id) => {
    const writes = new WriteQueue();
    writes.put('state', id, state);
    writes.put('chunk', [id, G, round], chunk);
    writes.remove('chunk', [id, G, round - 1]);
    if (round % 10 === 0) writes.put('split', [id, G, round], split);
    return { metricId: id, writes };
  });
}

async function run(drivers: RedisDrivers, redisPid: number, seconds: number): Promise<Row[]> {
  const record = Buffer.alloc(1024, 7);
  const rows: Row[] = [];
  for (const inFlight of [1, 32]) {
    rows.push(await measure(`append 1 KB, ${inFlight} in flight`, redisPid, seconds, inFlight, () => drivers.incoming.append(new Map([[0, record]]))));
  }
  const ids: string[] = [];
  while (ids.length < 20) {
    const id = randomUUID();
    if (drivers.incoming.shardOf(id) === 0) ids.push(id);
  }
  const fence = (await drivers.coordinator.lock(0, 600_000))!;
  const lease = { shard: 0, fence };
  let round = 0;
  rows.push(await measure('commit 20 metrics', redisPid, seconds, 1, () => drivers.series.commit(lease, batchOf(ids, ++round))));
  rows.push(
    await measure('load + commit 20 metrics', redisPid, seconds, 1, async () => {
      const snapshot = await drivers.series.load(ids);
      snapshot.release();
      await drivers.series.commit(lease, batchOf(ids, ++round));
    }),
  );
  return rows;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' } } });
  const seconds = Number(values.seconds);
  const dir = mkdtempSync(join(tmpdir(), 'gnocchi-bench-redis-'));
  const port = await freePort();
  const url = execFileSync('bash', [join(SCRIPTS, 'start-redis.sh'), dir, String(port)]).toString().trim();
  try {
    const redisPid = Number(readFileSync(join(dir, 'pid'), 'utf8'));
    const drivers = await redisDrivers({ incoming: url, series: url, shards: 4 }, { nodeId: 'bench' });
    try {
      console.table(await run(drivers, redisPid, seconds));
    } finally {
      await drivers.close();
    }
  } finally {
    execFileSync('bash', [join(SCRIPTS, 'stop.sh'), dir]);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
