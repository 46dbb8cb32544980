/**
 * Shared plumbing of the HTTP benchmarks: start the built server
 * (dist/server/main.js) on a free port and a temporary data directory,
 * call it, load measures, time requests from a bounded number of keep-alive
 * clients, and read percentiles.
 *
 * BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" passes node options to the
 * server process (e.g. to profile it).
 */
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
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

export interface ServerOptions {
  /**
   * Seed Gnocchi's policies and the `*` -> `low` rule, as a new deployment
   * has them; off by default so that a benchmark's own policy is the only one.
   */
  defaultArchivePolicies?: boolean;
  /** Node options before BENCH_NODE_ARGS's, and environment over the bench's own. */
  nodeArgs?: string[];
  env?: Record<string, string>;
}

/** Sends SIGTERM to `child` (unless it exited), waits for its exit and removes `dataDir`. */
export async function stopChild(child: ChildProcess, dataDir: string): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
}

/**
 * Numeric `--name value` options over `defaults` (the `quick` ones with
 * `--quick`), and `--<choice> NAME` narrowing the list `key` to one of its
 * values.
 */
export function benchOptions<O extends object, K extends keyof O & string>(
  argv: string[],
  defaults: { quick: O; full: O },
  choice: { flag: string; key: K },
): O {
  const opts = { ...(argv.includes('--quick') ? defaults.quick : defaults.full) };
  const choices = opts[choice.key] as unknown as readonly string[];
  for (let i = 0; i + 1 < argv.length; i++) {
    const key = argv[i]!.replace(/^--/, '');
    if (key === choice.flag) {
      const name = argv[++i]!;
      if (!choices.includes(name)) throw new Error(`--${choice.flag} takes ${choices.join(', ')}`);
      (opts as Record<string, unknown>)[choice.key] = [name];
    } else if (key in opts) {
      (opts as Record<string, unknown>)[key] = Number(argv[++i]);
    }
  }
  return opts;
}

/** The node options `npm start` and the `gnocchi-ts` command run the server with (server/main.ts). */
const SERVER_NODE_ARGS = ['--max-semi-space-size=1', '--heap-growing-percent=100'];

/**
 * Spawns the server with `extraArgs` (e.g. `['--aggregates-workers', '2']`)
 * and waits until it answers.
 */
export async function startServer(extraArgs: string[] = [], options: ServerOptions = {}): Promise<RunningServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-bench-'));
  const port = await freePort();
  const main = fileURLToPath(new URL('../server/main.js', import.meta.url));
  const nodeArgs = [...SERVER_NODE_ARGS, ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '')];
  const child = spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      ...nodeArgs,
      main,
      '--port',
      String(port),
      '--data-dir',
      dataDir,
      ...(options.defaultArchivePolicies === true ? [] : ['--no-default-archive-policies']),
      ...extraArgs,
    ],
    { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ...options.env } },
  );
  const base = `http://127.0.0.1:${port}`;
  const stop = () => stopChild(child, dataDir);
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

export interface Client {
  /**
   * Resolves with the whole response body; throws on a 4xx/5xx with the
   * method, path, status and body. `headers` are added to the defaults,
   * replacing those of the same name (e.g. a body of another content type).
   */
  request(method: string, path: string, body?: Buffer, headers?: Record<string, string>): Promise<Buffer>;
  /** Closes the kept-alive sockets. */
  close(): void;
}

/**
 * A node:http client over `maxSockets` keep-alive sockets, for setting up
 * and checking (undici's fetch costs several times more CPU per request);
 * timed loads go through timeLoad. Bodies are pre-encoded JSON.
 */
export function client(base: string, maxSockets: number): Client {
  const { hostname, port } = new URL(base);
  const agent = new Agent({ keepAlive: true, maxSockets });
  const request = (method: string, path: string, body?: Buffer, extra: Record<string, string> = {}) =>
    new Promise<Buffer>((resolve, reject) => {
      const headers = body === undefined ? { ...AUTH, ...extra } : { ...JSON_HEADERS, ...extra, 'content-length': body.length };
      const req = httpRequest({ agent, hostname, port, method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const data = Buffer.concat(chunks);
          if (res.statusCode! >= 400) reject(new Error(`${method} ${path}: ${res.statusCode} ${data.toString()}`));
          else resolve(data);
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  return { request, close: () => agent.destroy() };
}

/** The p-th percentile of an ascending array (nearest rank). */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Runs `fn` over `items` with `concurrency` clients, each awaiting its previous request. */
export async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

export interface Latency {
  requests: number;
  clients: number;
  perSecond: number;
  /** Milliseconds. */
  p50: number;
  p95: number;
  p99: number;
  mean: number;
}

/** The method, path and body of the next request of a timed load. */
export type NextRequest = () => [method: string, path: string, body?: Buffer];

/**
 * Times `requests` requests made by `next` from `clients` keep-alive
 * connections, after a tenth as many (at most 20) untimed ones that let the
 * server's JIT settle. The load comes from autocannon: the client shares
 * the 2 cores with the server, and node:http's client spent about twice its
 * CPU per request (~150 vs ~70 us on 43 KB answers), CPU the server's
 * figures lost. Latencies are autocannon's per-response times, unrounded.
 */
export async function timeLoad(base: string, requests: number, clients: number, next: NextRequest): Promise<Latency> {
  await load(base, Math.min(20, Math.ceil(requests / 10)), clients, next);
  const latencies: number[] = [];
  const t0 = performance.now();
  const wall = (await load(base, requests, clients, next, latencies)) - t0;
  latencies.sort((a, b) => a - b);
  const ms = (x: number) => Math.round(x * 1000) / 1000;
  return {
    requests,
    clients,
    perSecond: Math.round(requests / (wall / 1000)),
    p50: ms(percentile(latencies, 50)),
    p95: ms(percentile(latencies, 95)),
    p99: ms(percentile(latencies, 99)),
    mean: ms(latencies.reduce((a, b) => a + b, 0) / requests),
  };
}

/**
 * `amount` requests of `next` through autocannon, their latencies (ms)
 * pushed to `latencies`; throws unless all got a 2xx. Resolves with the
 * time of the last response: autocannon reports the end at its next
 * once-a-second tick.
 */
async function load(base: string, amount: number, clients: number, next: NextRequest, latencies?: number[]): Promise<number> {
  const options: autocannon.Options = {
    url: base,
    connections: clients,
    amount,
    requests: [
      {
        setupRequest: (request) => {
          const [method, path, body] = next();
          return { ...request, method: method as autocannon.Request['method'], path, headers: body === undefined ? AUTH : JSON_HEADERS, ...(body === undefined ? {} : { body }) };
        },
      },
    ],
  };
  let last = NaN;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(options, (err, done) => (err ? reject(err) : resolve(done)));
    instance.on('response', (_client, _status, _bytes, ms) => {
      last = performance.now();
      latencies?.push(ms);
    });
  });
  const failed = result.non2xx + result.errors + result.timeouts;
  if (failed > 0) throw new Error(`${failed} of ${amount} requests failed (${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts)`);
  return last;
}

/** Seconds since the epoch as the ISO 8601 string the query parameters take. */
export function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

/**
 * Bodies of `POST /v1/batch/metrics/measures` carrying points 0..`points`-1
 * of every metric, about `batch` measures each (consecutive points of all
 * metrics); `measure(series, k)` gives point k of metric `ids[series]` as
 * [timestamp in seconds, value]. Encoded ahead so that the timed loop does
 * not pay for it.
 */
export function batchBodies(ids: string[], points: number, batch: number, measure: (series: number, k: number) => [number, number]): Buffer[] {
  const perMetric = Math.max(1, Math.floor(batch / ids.length));
  const bodies: Buffer[] = [];
  for (let offset = 0; offset < points; offset += perMetric) {
    const end = Math.min(points, offset + perMetric);
    const metrics = ids.map((id, series) => {
      const measures: string[] = [];
      for (let k = offset; k < end; k++) {
        const [timestamp, value] = measure(series, k);
        measures.push(`{"timestamp":${timestamp},"value":${value}}`);
      }
      return `"${id}":[${measures.join(',')}]`;
    });
    bodies.push(Buffer.from(`{${metrics.join(',')}}`));
  }
  return bodies;
}

/** Posts `bodies` (from batchBodies) from `concurrency` clients. */
export async function postBatches(base: string, bodies: Buffer[], concurrency: number): Promise<void> {
  const http = client(base, concurrency);
  try {
    await pool(bodies, concurrency, (body) => http.request('POST', '/v1/batch/metrics/measures', body));
  } finally {
    http.close();
  }
}

/** Measures waiting to be processed, from /v1/status. */
export async function backlog(base: string): Promise<number> {
  const res = await call(`${base}/v1/status?details=false`, { headers: AUTH });
  return ((await res.json()) as { storage: { summary: { measures: number } } }).storage.summary.measures;
}

/** Polls /v1/status until no measures are waiting to be processed. */
export async function waitForBacklog(base: string, pollMs = 20): Promise<void> {
  while ((await backlog(base)) > 0) await new Promise((r) => setTimeout(r, pollMs));
}

/**
 * Creates the archive policy the ingestion benchmarks use: the six default
 * methods at three granularities (`finest`, 1 minute, 1 hour).
 */
export async function createBenchPolicy(base: string, name: string, finest: string): Promise<void> {
  await call(`${base}/v1/archive_policy`, {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({
      name,
      aggregation_methods: ['mean', 'min', 'max', 'sum', 'std', 'count'],
      definition: [
        { granularity: finest, timespan: '1 day' },
        { granularity: '1m', timespan: '30 days' },
        { granularity: '1h', timespan: '365 days' },
      ],
    }),
  });
}

/** Creates `count` metrics of `policy` from `concurrency` clients; their ids, in creation order. */
export async function createMetrics(base: string, policy: string, count: number, concurrency: number): Promise<string[]> {
  const ids: string[] = [];
  await pool(Array.from({ length: count }), concurrency, async () => {
    const res = await call(`${base}/v1/metric`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ archive_policy_name: policy }) });
    ids.push(((await res.json()) as { id: string }).id);
  });
  return ids;
}

/**
 * Bytes the process has caused to be written to storage (Linux /proc/PID/io),
 * or NaN: unlike times, not skewed by other load on the machine.
 */
export function bytesWritten(pid: number | undefined): number {
  const file = `/proc/${pid}/io`;
  if (pid === undefined || !existsSync(file)) return Number.NaN;
  return Number(/^write_bytes: (\d+)$/m.exec(readFileSync(file, 'utf8'))?.[1] ?? Number.NaN);
}

/**
 * CPU seconds (user + system) the process has used so far (Linux
 * /proc/PID/stat, in clock ticks of 10 ms), or NaN: steadier than wall
 * time on a shared machine, where other load stretches the latter.
 */
export function cpuSeconds(pid: number | undefined): number {
  const file = `/proc/${pid}/stat`;
  if (pid === undefined || !existsSync(file)) return Number.NaN;
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const stat = readFileSync(file, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export interface Memory {
  /** Bytes: the peak resident set (VmHWM), the resident set now (VmRSS) and its anonymous part (RssAnon, heaps). */
  peakRss: number;
  rss: number;
  anonRss: number;
}

/**
 * A process's memory from Linux /proc/PID/status, NaN where unknown. VmRSS
 * also counts file pages mapped in (LMDB's file, VictoriaMetrics' parts):
 * reclaimable cache, unlike RssAnon.
 */
export function memory(pid: number | undefined): Memory {
  const file = `/proc/${pid}/status`;
  const status = pid !== undefined && existsSync(file) ? readFileSync(file, 'utf8') : '';
  const kB = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  return { peakRss: kB('VmHWM'), rss: kB('VmRSS'), anonRss: kB('RssAnon') };
}

/** Writes a benchmark's result to bench/results/NAME.json. */
export function writeResult(name: string, result: unknown): void {
  const out = fileURLToPath(new URL('../../bench/results/', import.meta.url));
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `${name}.json`), JSON.stringify(result, null, 2));
}

/** Runs `run` when `moduleUrl` is the script node was started with; exits 1 on failure. */
export function runIfMain(moduleUrl: string, run: () => Promise<unknown>): void {
  if (process.argv[1] !== fileURLToPath(moduleUrl)) return;
  run().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
