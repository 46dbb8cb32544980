/**
 * PostgreSQL and Redis for the cluster benchmark, started and stopped by the
 * operator scripts of scripts/cluster/ (the one implementation of how to run
 * them) in a temporary directory on a free loopback port, and the CPU time
 * of an engine's processes. Stopping touches only the processes of the
 * engine's own directory.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { freePort } from './harness.js';

const run = promisify(execFile);
const SCRIPTS = fileURLToPath(new URL('../../scripts/cluster/', import.meta.url));

export type EngineKind = 'postgresql' | 'redis';

export interface RunningEngine {
  kind: EngineKind;
  url: string;
  /** The main process: postmaster or redis-server. */
  pid: number;
  /** Stops exactly this engine's processes and removes its directory. */
  stop(): Promise<void>;
}

async function script(name: string, ...args: string[]): Promise<string> {
  try {
    return (await run('bash', [join(SCRIPTS, name), ...args], { timeout: 90_000 })).stdout.trim();
  } catch (err) {
    throw new Error(`${name} ${args.join(' ')} failed: ${(err as { stderr?: string }).stderr?.trim() || String(err)}`);
  }
}

export async function startEngine(kind: EngineKind): Promise<RunningEngine> {
  const dir = mkdtempSync(join(tmpdir(), `cluster-bench-${kind}-`));
  try {
    const url = await script(kind === 'postgresql' ? 'start-postgres.sh' : 'start-redis.sh', dir, String(await freePort()));
    const pid = Number(readFileSync(join(dir, 'pid'), 'utf8'));
    const stop = async () => {
      await script('stop.sh', dir);
      rmSync(dir, { recursive: true, force: true });
    };
    return { kind, url, pid, stop };
  } catch (err) {
    await script('stop.sh', dir).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Calls and CPU microseconds Redis spent in each command (`INFO commandstats`) so far. */
export async function redisCommandStats(url: string): Promise<Map<string, { calls: number; usec: number }>> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const info = await redis.info('commandstats');
    const stats = new Map<string, { calls: number; usec: number }>();
    for (const [, name, calls, usec] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
      stats.set(name!, { calls: Number(calls), usec: Number(usec) });
    }
    return stats;
  } finally {
    redis.disconnect();
  }
}

/**
 * Transactions committed or rolled back in the database of `url` so far
 * (each statement outside an explicit transaction counts as one). The
 * backends report their counts at most once a second when idle: read it
 * after a pause.
 */
export async function postgresTransactions(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const res = await client.query<{ n: string }>('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()');
    return Number(res.rows[0]!.n);
  } finally {
    await client.end();
  }
}
