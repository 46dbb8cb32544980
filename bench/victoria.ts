/**
 * VictoriaMetrics as the peer of the side-by-side benchmarks: the single-node
 * binary Debian installs (/usr/bin/victoria-metrics, 1.79), started on a free
 * loopback port and a temporary data directory, with a retention long enough
 * for any benchmark timestamps. Nothing is installed: when the binary is
 * absent the benchmarks run ours only.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, stopChild } from './harness.js';

export const VICTORIA_METRICS = '/usr/bin/victoria-metrics';

export interface RunningVictoria {
  base: string;
  dataDir: string;
  pid: number;
  /** `vm_app_version` of its /metrics; `unknown` where the build leaves it empty (Debian's 1.79.5 does). */
  version: string;
  /**
   * Makes everything it acknowledged searchable and on disk
   * (`/internal/force_flush`: in-memory rows and index items become parts).
   */
  flush(): Promise<void>;
  /** Sends SIGTERM, waits for the exit and removes the data directory. */
  stop(): Promise<void>;
}

export function victoriaAvailable(): boolean {
  try {
    accessSync(VICTORIA_METRICS, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function get(url: string): Promise<string> {
  const res = await fetch(url);
  const text = await res.text();
  if (res.status >= 400) throw new Error(`GET ${url}: ${res.status} ${text}`);
  return text;
}

/** Starts VictoriaMetrics and waits until `/health` answers. */
export async function startVictoria(): Promise<RunningVictoria> {
  const dataDir = mkdtempSync(join(tmpdir(), 'victoria-bench-'));
  const port = await freePort();
  const child = spawn(
    VICTORIA_METRICS,
    [`-httpListenAddr=127.0.0.1:${port}`, `-storageDataPath=${dataDir}`, '-retentionPeriod=100y', '-loggerLevel=ERROR'],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const base = `http://127.0.0.1:${port}`;
  const stop = () => stopChild(child, dataDir);
  for (let i = 0; i < 200 && child.exitCode === null; i++) {
    try {
      await get(`${base}/health`);
      const version = /^vm_app_version\{[^}]*version="([^"]+)"/m.exec(await get(`${base}/metrics`))?.[1] ?? 'unknown';
      return { base, dataDir, pid: child.pid!, version, flush: async () => void (await get(`${base}/internal/force_flush`)), stop };
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  await stop();
  throw new Error('VictoriaMetrics did not start');
}

/**
 * Samples of all series with a timestamp in (`time` - `windowSeconds`,
 * `time`], from an instant query that skips the response cache (which
 * would answer a repeated poll with its first, incomplete, count).
 */
export async function victoriaPointCount(base: string, time: number, windowSeconds: number): Promise<number> {
  const query = `sum(count_over_time({__name__=~".+"}[${windowSeconds}s]))`;
  const body = await get(`${base}/api/v1/query?nocache=1&time=${time}&query=${encodeURIComponent(query)}`);
  const result = (JSON.parse(body) as { data: { result: { value: [number, string] }[] } }).data.result;
  return result.length === 0 ? 0 : Number(result[0]!.value[1]);
}

/**
 * Flushes and counts until `expected` samples are searchable, or until the
 * count has not moved for `stallMs` (samples refused or lost); resolves
 * with the last count.
 */
export async function waitForVictoriaPoints(
  vm: RunningVictoria,
  expected: number,
  time: number,
  windowSeconds: number,
  stallMs = 10_000,
): Promise<number> {
  let last = -1;
  let since = performance.now();
  for (;;) {
    await vm.flush();
    const count = await victoriaPointCount(vm.base, time, windowSeconds);
    if (count >= expected) return count;
    if (count !== last) [last, since] = [count, performance.now()];
    else if (performance.now() - since > stallMs) return count;
    await new Promise((r) => setTimeout(r, 50));
  }
}
