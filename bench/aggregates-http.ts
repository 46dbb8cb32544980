/**
 * HTTP latency of `POST /v1/aggregates` against the real server (issue 4
 * "Speed", issue 6 read targets). Loads `--metrics` metrics of `--points`
 * points at one granularity (60 s) through the batch endpoint, plus
 * `--resources` resources of one metric `cpu` of `--resource-points` points
 * in `--groups` projects, waits for /v1/status to show no backlog, then
 * times sequential requests (one client, keep-alive) of:
 *
 *   - `(aggregate mean (metric ...))` over 10 metrics x 1,000 points (a
 *     start/stop window) and over all metrics x all points, plain, after
 *     `(resample mean 1h ...)` and after `(rolling mean 60 ...)`;
 *   - `(aggregate mean (metric cpu mean))` with `groupby=project_id` over
 *     the resources selected by `resource_type` + `search`.
 *
 * Prints p50/p99 per case and writes bench/results/aggregates-http.json.
 *
 *   npm run bench:aggregates [-- --quick] [-- --reps R --metrics M --points N --resources K ...]
 *
 * BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" profiles the server;
 * `--server-args "--workers 1"` passes options to it; `--only REGEX` times
 * only the cases whose name matches.
 */
import { type Client, type Latency, JSON_HEADERS, batchBodies, call, client, createMetrics, iso, pool, postBatches, runIfMain, startServer, timeLoad, waitForBacklog, writeResult } from './harness.js';

interface Options {
  metrics: number;
  points: number;
  resources: number;
  'resource-points': number;
  groups: number;
  reps: number;
  concurrency: number;
}

const GRANULARITY_S = 60;
const START_S = Date.UTC(2024, 0, 1) / 1000;

function parseArgs(argv: string[]): { opts: Options; serverArgs: string[]; only: string | undefined } {
  const quick = argv.includes('--quick');
  const opts: Options = quick
    ? { metrics: 20, points: 2_000, resources: 100, 'resource-points': 100, groups: 10, reps: 20, concurrency: 4 }
    : { metrics: 100, points: 10_000, resources: 1_000, 'resource-points': 1_000, groups: 10, reps: 100, concurrency: 4 };
  let serverArgs: string[] = [];
  let only: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!.replace(/^--/, '');
    if (arg === 'server-args' && i + 1 < argv.length) serverArgs = argv[++i]!.split(' ').filter((a) => a !== '');
    else if (arg === 'only' && i + 1 < argv.length) only = argv[++i];
    else if (arg in opts && i + 1 < argv.length) opts[arg as keyof Options] = Number(argv[++i]);
  }
  return { opts, serverArgs, only };
}

function value(series: number, k: number): number {
  return Math.round((50 + 40 * Math.sin(k / 97 + series) + ((k * 31 + series * 7) % 13)) * 100) / 100;
}

/** Pushes `points` points of every metric in batches of about 50,000 measures. */
async function load(base: string, ids: string[], points: number, concurrency: number): Promise<void> {
  await postBatches(base, batchBodies(ids, points, 50_000, (s, k) => [START_S + k * GRANULARITY_S, value(s, k)]), concurrency);
}

interface Case {
  name: string;
  url: string;
  body: Buffer;
}

function cases(opts: Options, ids: string[]): Case[] {
  const few = ids.slice(0, 10);
  const fewPoints = Math.min(1_000, opts.points);
  // A window of `fewPoints` points in the middle of the data.
  const from = START_S + Math.floor((opts.points - fewPoints) / 2) * GRANULARITY_S;
  const window = `start=${iso(from)}&stop=${iso(from + fewPoints * GRANULARITY_S)}`;
  const wraps: [string, (m: string) => string][] = [
    ['', (m) => m],
    [' resample 1h', (m) => `(resample mean 3600 ${m})`],
    [' rolling 60', (m) => `(rolling mean 60 ${m})`],
  ];
  const out: Case[] = [];
  for (const [label, selected, query] of [
    [`${few.length}x${fewPoints}`, few, `?${window}`],
    [`${ids.length}x${opts.points}`, ids, ''],
  ] as const) {
    const metric = `(metric ${selected.map((id) => `(${id} mean)`).join(' ')})`;
    for (const [suffix, wrap] of wraps) {
      out.push({
        name: `mean ${label}${suffix}`,
        url: `/v1/aggregates${query}`,
        body: Buffer.from(JSON.stringify({ operations: `(aggregate mean ${wrap(metric)})` })),
      });
    }
  }
  out.push({
    name: `mean groupby project_id, ${opts.resources} resources x ${opts['resource-points']}`,
    url: '/v1/aggregates?groupby=project_id',
    body: Buffer.from(
      JSON.stringify({
        operations: '(aggregate mean (metric cpu mean))',
        resource_type: 'generic',
        search: { '=': { user_id: 'bench' } },
      }),
    ),
  });
  return out;
}

interface Timing extends Latency {
  name: string;
  bytes: number;
}

async function time(base: string, http: Client, c: Case, reps: number): Promise<Timing> {
  const bytes = (await http.request('POST', c.url, c.body)).length;
  return { name: c.name, bytes, ...(await timeLoad(base, reps, 1, () => ['POST', c.url, c.body])) };
}

export async function run(argv: string[] = process.argv.slice(2)): Promise<Record<string, unknown>> {
  const { opts, serverArgs, only } = parseArgs(argv);
  const server = await startServer(serverArgs);
  const { base } = server;
  try {
    await call(`${base}/v1/archive_policy`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({
        name: 'bench',
        aggregation_methods: ['mean'],
        definition: [{ granularity: `${GRANULARITY_S}s`, points: Math.max(opts.points, opts['resource-points']) }],
      }),
    });
    const ids = await createMetrics(base, 'bench', opts.metrics, opts.concurrency);
    ids.sort();
    const cpu: string[] = [];
    await pool(Array.from({ length: opts.resources }, (_, i) => i), opts.concurrency, async (i) => {
      const res = await call(`${base}/v1/resource/generic`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({
          id: `bench-${i}`,
          user_id: 'bench',
          project_id: `project-${i % opts.groups}`,
          metrics: { cpu: { archive_policy_name: 'bench' } },
        }),
      });
      cpu.push(((await res.json()) as { metrics: { cpu: string } }).metrics.cpu);
    });
    const t0 = performance.now();
    await load(base, ids, opts.points, opts.concurrency);
    await load(base, cpu, opts['resource-points'], opts.concurrency);
    await waitForBacklog(base);
    const loadMs = performance.now() - t0;
    console.log(`loaded ${opts.metrics}x${opts.points} + ${opts.resources}x${opts['resource-points']} points in ${(loadMs / 1000).toFixed(1)} s`);

    const timings: Timing[] = [];
    const http = client(base, 1);
    for (const c of cases(opts, ids)) {
      if (only !== undefined && !new RegExp(only).test(c.name)) continue;
      // The big cases take tens of ms: fewer repetitions keep the run short.
      const reps = c.name.startsWith(`mean ${ids.length}x`) || c.name.includes('groupby') ? Math.ceil(opts.reps / 4) : opts.reps;
      timings.push(await time(base, http, c, reps));
    }
    http.close();
    console.table(
      Object.fromEntries(
        timings.map((t) => [t.name, { 'p50 ms': t.p50, 'p99 ms': t.p99, reps: t.requests, 'response bytes': t.bytes }]),
      ),
    );
    const result = { date: new Date().toISOString(), options: opts, serverArgs, loadMs: Math.round(loadMs), timings };
    writeResult('aggregates-http', result);
    return result;
  } finally {
    await server.stop();
  }
}

runIfMain(import.meta.url, () => run());
