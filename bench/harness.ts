/**
 * Shared plumbing of the HTTP benchmarks: start the built server
 * (dist/server/main.js) on a free port and a temporary data directory,
 * call it, run requests with a bounded number of keep-alive clients, and
 * read percentiles.
 *
 * BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" passes node options to the
 * server process (e.g. to profile it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const AUTH = { authorization: `basic ${Buffer.from('admin:').toString('base64')}` };
export const JSON_HEADERS = { ...AUTH, 'content-type': 'application/json' };

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface RunningServer {
  base: string;
  port: number;
  dataDir: string;
  child: ChildProcess;
  /** Sends SIGTERM, waits for the exit and removes the data directory. */
  stop(): Promise<void>;
}

/**
 * Spawns the server with `--no-default-archive-policies` and `extraArgs`
 * (e.g. `['--aggregates-workers', '2']`) and waits until it answers.
 */
export async function startServer(extraArgs: string[] = []): Promise<RunningServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-bench-'));
  const port = await freePort();
  const main = fileURLToPath(new URL('../server/main.js', import.meta.url));
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const child = spawn(
    process.execPath,
    [...nodeArgs, main, '--port', String(port), '--data-dir', dataDir, '--no-default-archive-policies', ...extraArgs],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const base = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(`${base}/`);
      return { base, port, dataDir, child, stop };
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  await stop();
  throw new Error('server did not start');
}

/** fetch that throws on a 4xx/5xx with the method, URL, status and body. */
export async function call(url: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(url, init);
  if (res.status >= 400) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${await res.text()}`);
  return res;
}

/** The p-th percentile of an ascending array (nearest rank). */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Runs `fn` over `items` with `concurrency` clients, each awaiting its previous request. */
export async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** Polls /v1/status until no measures are waiting to be processed. */
export async function waitForBacklog(base: string, pollMs = 20): Promise<void> {
  for (;;) {
    const status = (await (await call(`${base}/v1/status?details=false`, { headers: AUTH })).json()) as {
      storage: { summary: { measures: number } };
    };
    if (status.storage.summary.measures === 0) return;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
