/**
 * HTTP load benchmark: starts the real server on a temporary data directory
 * and drives it over loopback with concurrent keep-alive clients.
 *
 *   npm run bench:http [-- --quick] [-- --metrics M --points N --batch B --concurrency C]
 *
 * Reports accepted measures/s (202s), processed measures/s (until /v1/status
 * shows no backlog) and read latencies; writes bench/results/http.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const AUTH = { authorization: `basic ${Buffer.from('admin:').toString('base64')}` };
const JSON_HEADERS = { ...AUTH, 'content-type': 'application/json' };

interface Options {
  metrics: number;
  points: number;
  batch: number;
  concurrency: number;
  reads: number;
}

function parseArgs(argv: string[]): Options {
  const quick = argv.includes('--quick');
  const opts: Options = quick
    ? { metrics: 100, points: 2_000, batch: 10_000, concurrency: 4, reads: 200 }
    : { metrics: 1_000, points: 5_000, batch: 10_000, concurrency: 8, reads: 2_000 };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i]!.replace(/^--/, '') as keyof Options;
    if (key in opts && i + 1 < argv.length) opts[key] = Number(argv[++i]);
  }
  return opts;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

async function startServer(dataDir: string, port: number): Promise<ChildProcess> {
  const main = fileURLToPath(new URL('../server/main.js', import.meta.url));
  // BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" profiles the server.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const child = spawn(process.execPath, [...nodeArgs, main, '--port', String(port), '--data-dir', dataDir, '--no-default-archive-policies'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      return child;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error('server did not start');
}

async function call(url: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(url, init);
  if (res.status >= 400) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${await res.text()}`);
  return res;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

export async function run(argv: string[] = process.argv.slice(2)): Promise<Record<string, unknown>> {
  const opts = parseArgs(argv);
  const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-bench-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = await startServer(dataDir, port);
  try {
    await call(`${base}/v1/archive_policy`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({
        name: 'bench',
        aggregation_methods: ['mean', 'min', 'max', 'sum', 'std', 'count'],
        definition: [
          { granularity: '1s', timespan: '1 day' },
          { granularity: '1m', timespan: '30 days' },
          { granularity: '1h', timespan: '365 days' },
        ],
      }),
    });
    const ids: string[] = [];
    await pool(Array.from({ length: opts.metrics }), opts.concurrency, async () => {
      const res = await call(`${base}/v1/metric`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ archive_policy_name: 'bench' }),
      });
      ids.push(((await res.json()) as { id: string }).id);
    });

    // Batches of `batch` measures: each covers batch/metrics... consecutive points of every metric.
    const perMetricPerBatch = Math.max(1, Math.floor(opts.batch / opts.metrics));
    const start = Date.UTC(2024, 0, 1) / 1000;
    const bodies: string[] = [];
    for (let offset = 0; offset < opts.points; offset += perMetricPerBatch) {
      const n = Math.min(perMetricPerBatch, opts.points - offset);
      const body: Record<string, { timestamp: number; value: number }[]> = {};
      for (const id of ids) {
        body[id] = Array.from({ length: n }, (_, k) => ({
          timestamp: start + offset + k,
          value: Math.round((40 + 5 * Math.sin((offset + k) / 30) + Math.random()) * 100) / 100,
        }));
      }
      bodies.push(JSON.stringify(body));
    }
    const total = opts.metrics * opts.points;
    const t0 = performance.now();
    await pool(bodies, opts.concurrency, async (body) => {
      await call(`${base}/v1/batch/metrics/measures`, { method: 'POST', headers: JSON_HEADERS, body });
    });
    const accepted = performance.now() - t0;
    for (;;) {
      const status = (await (await call(`${base}/v1/status?details=false`, { headers: AUTH })).json()) as {
        storage: { summary: { measures: number } };
      };
      if (status.storage.summary.measures === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const processed = performance.now() - t0;

    const latencies: number[] = [];
    await pool(Array.from({ length: opts.reads }), 1, async () => {
      const id = ids[Math.floor(Math.random() * ids.length)]!;
      const t = performance.now();
      await (await call(`${base}/v1/metric/${id}/measures?granularity=1`, { headers: AUTH })).text();
      latencies.push(performance.now() - t);
    });
    latencies.sort((a, b) => a - b);
    const result = {
      date: new Date().toISOString(),
      options: opts,
      measures: total,
      acceptedPerSecond: Math.round(total / (accepted / 1000)),
      processedPerSecond: Math.round(total / (processed / 1000)),
      read: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99) },
    };
    console.table({
      'accepted measures/s': result.acceptedPerSecond,
      'processed measures/s (end to end)': result.processedPerSecond,
      'single-metric read p50 ms': result.read.p50.toFixed(2),
      'single-metric read p95 ms': result.read.p95.toFixed(2),
      'single-metric read p99 ms': result.read.p99.toFixed(2),
    });
    const out = fileURLToPath(new URL('../../bench/results/', import.meta.url));
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'http.json'), JSON.stringify(result, null, 2));
    return result;
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  run().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
