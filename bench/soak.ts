/**
 * Soak test: the real server (a child process) under a steady mixed load for
 * minutes, sampled over time, to catch leaks, growing backlogs and errors
 * that short benchmarks miss.
 *
 *   npm run soak [-- --quick] [-- --minutes M --rate R --metrics N ...] [-- --overload]
 *
 * Load, all over keep-alive connections:
 *   - `--push-clients` clients push `--rate` measures/s in total (paced, in
 *     batches every `--tick-ms`) through /v1/batch/metrics/measures, each to
 *     its own share of `--metrics` metrics, timestamps moving forward;
 *   - `--read-clients` dashboard clients alternate single-metric reads and
 *     POST /v1/aggregates over 10 metrics, `--read-pause-ms` apart;
 *   - one client churns resources: create (with a metric), patch, delete.
 *
 * Every `--sample` seconds it records the requests served, errors, p99
 * latency of the interval, the server's memory (/proc/PID/status: VmRSS, and
 * its parts RssAnon and RssFile), the size of the data directory and the
 * backlog (/v1/status), prints the table and writes bench/results/soak.json.
 * VmRSS includes the pages of the LMDB file mapped in, which grow with the
 * data and are reclaimable page cache; a leak shows in RssAnon (heaps,
 * buffers, native allocations), which is what the plateau check reads.
 *
 * `--overload` adds a phase of `--overload-minutes` in which the push clients
 * send as fast as they can (batches of `--overload-batch`) to a server started
 * with `--max-backlog` (default 100,000): pushes must be refused with 503 and
 * Retry-After (which the clients honour), not fail otherwise, while RSS stays
 * bounded.
 *
 * The run stops early, and fails, once the data directory passes
 * `--max-db-mb` (default 4096): on a shared machine a store that does not
 * reuse its freed pages would otherwise fill the disk.
 *
 * Exits 1 when a check fails: any error (a 503 counts only in the overload
 * phase), RssAnon not levelling off (the last third's max more than 25% above
 * the middle third's), the backlog still growing at the end of the steady phase,
 * or, under overload, no 503, a 503 without Retry-After, or a backlog far
 * past the bound.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AUTH, JSON_HEADERS, call, createMetrics, percentile, startServer, type RunningServer } from './harness.js';

interface Options {
  minutes: number;
  rate: number;
  metrics: number;
  'push-clients': number;
  'read-clients': number;
  'read-pause-ms': number;
  'tick-ms': number;
  sample: number;
  'overload-minutes': number;
  'overload-batch': number;
  'max-backlog': number;
  'max-db-mb': number;
}

type Phase = 'steady' | 'overload';

const START_S = Date.UTC(2024, 0, 1) / 1000;
/** A check tolerance: RSS of the last third may exceed the middle third's by this factor. */
const RSS_GROWTH_LIMIT = 1.25;

function parseArgs(argv: string[]): { opts: Options; overload: boolean; serverArgs: string[] } {
  const quick = argv.includes('--quick');
  const opts: Options = {
    minutes: quick ? 0.5 : 3,
    rate: 5_000,
    metrics: 200,
    'push-clients': 4,
    'read-clients': 2,
    'read-pause-ms': 50,
    'tick-ms': 200,
    sample: quick ? 5 : 10,
    'overload-minutes': quick ? 0.5 : 1,
    'overload-batch': 5_000,
    'max-backlog': 100_000,
    'max-db-mb': 4096,
  };
  let serverArgs: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!.replace(/^--/, '');
    if (arg === 'server-args' && i + 1 < argv.length) serverArgs = argv[++i]!.split(' ').filter((a) => a !== '');
    else if (arg in opts && i + 1 < argv.length) {
      const n = Number(argv[++i]);
      if (!(n >= 0)) throw new Error(`--${arg}: expected a non-negative number, got ${argv[i]}`);
      opts[arg as keyof Options] = n;
    }
  }
  return { opts, overload: argv.includes('--overload'), serverArgs };
}

/** What happened during one sampling interval. */
class Interval {
  served = 0;
  errors = 0;
  refused = 0;
  measuresAccepted = 0;
  latencies: number[] = [];
  pushLatencies: number[] = [];
  readLatencies: number[] = [];
}

interface Sample {
  phase: Phase;
  t: number;
  served: number;
  reqPerSec: number;
  measuresPerSec: number;
  errors: number;
  refused503: number;
  p99Ms: number;
  pushP99Ms: number;
  readP99Ms: number;
  rssMB: number;
  /** The heap and native allocations: what a leak would grow. */
  anonMB: number;
  /** The database file mapped in memory: grows with the data, reclaimable. */
  fileMB: number;
  dbMB: number;
  backlog: number;
}

type Kind = 'push' | 'read' | 'churn';

class Load {
  current = new Interval();
  phase: Phase = 'steady';
  /** When the clients of the current phase stop (performance.now() ms). */
  until = 0;
  /** Why the run was cut short, if it was. */
  stopped: string | undefined;
  readonly errorSamples: string[] = [];
  refusedWithoutRetryAfter = 0;

  constructor(private readonly base: string) {}

  /**
   * One request, timed; a status outside `ok` is an error, except a 503 in
   * the overload phase, which is counted as refused and returns the seconds
   * to wait (Retry-After).
   */
  async request(kind: Kind, path: string, init: RequestInit, ok: number[], measures = 0): Promise<{ res?: Response; retryAfter?: number }> {
    const started = performance.now();
    let res: Response;
    try {
      res = await fetch(this.base + path, init);
      await res.arrayBuffer();
    } catch (err) {
      this.error(`${init.method ?? 'GET'} ${path}: ${(err as Error).message}`);
      return {};
    }
    const ms = performance.now() - started;
    const iv = this.current;
    iv.served++;
    iv.latencies.push(ms);
    if (kind === 'push') iv.pushLatencies.push(ms);
    if (kind === 'read') iv.readLatencies.push(ms);
    if (res.status === 503 && kind === 'push' && this.phase === 'overload') {
      iv.refused++;
      const header = res.headers.get('retry-after');
      const retryAfter = Number(header);
      if (header === null || !(retryAfter >= 0)) {
        this.refusedWithoutRetryAfter++;
        return { res, retryAfter: 1 };
      }
      return { res, retryAfter };
    }
    if (!ok.includes(res.status)) {
      this.error(`${init.method ?? 'GET'} ${path.slice(0, 80)}: ${res.status}`);
      return { res };
    }
    iv.measuresAccepted += measures;
    return { res };
  }

  private error(message: string): void {
    this.current.errors++;
    if (this.errorSamples.length < 10) this.errorSamples.push(message);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** VmRSS, RssAnon and RssFile of a process, in MB. */
function memoryMB(pid: number): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Math.round(Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024);
  return { rss: field('VmRSS'), anon: field('RssAnon'), file: field('RssFile') };
}

function directoryMB(dir: string): number {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) bytes += statSync(join(entry.parentPath, entry.name)).blocks * 512;
  }
  return Math.round(bytes / 1024 ** 2);
}

async function backlog(base: string): Promise<number> {
  const status = (await (await call(`${base}/v1/status?details=false`, { headers: AUTH })).json()) as { storage: { summary: { measures: number } } };
  return status.storage.summary.measures;
}

/** A client's share of metrics and its position: measure p goes to metric p % n at second p / n. */
class PushStream {
  private position = 0;
  constructor(private readonly ids: string[]) {}

  batch(n: number): string {
    const body: Record<string, { timestamp: number; value: number }[]> = {};
    for (let k = 0; k < n; k++, this.position++) {
      const id = this.ids[this.position % this.ids.length]!;
      const second = Math.floor(this.position / this.ids.length);
      (body[id] ??= []).push({ timestamp: START_S + second, value: Math.round((50 + 30 * Math.sin(second / 300)) * 100) / 100 });
    }
    return JSON.stringify(body);
  }
}

async function pushSteady(load: Load, stream: PushStream, perTick: number, tickMs: number): Promise<void> {
  const started = performance.now();
  for (let tick = 0; performance.now() < load.until; tick++) {
    await load.request('push', '/v1/batch/metrics/measures', { method: 'POST', headers: JSON_HEADERS, body: stream.batch(perTick) }, [202], perTick);
    // Paced on the schedule, not on the previous answer: a slow answer is
    // followed by an immediate push, so the offered rate stays constant.
    const next = started + (tick + 1) * tickMs;
    const wait = next - performance.now();
    if (wait > 0) await sleep(Math.min(wait, load.until - performance.now()));
  }
}

async function pushFlat(load: Load, stream: PushStream, batch: number): Promise<void> {
  while (performance.now() < load.until) {
    const { retryAfter } = await load.request('push', '/v1/batch/metrics/measures', { method: 'POST', headers: JSON_HEADERS, body: stream.batch(batch) }, [202], batch);
    if (retryAfter !== undefined) await sleep(Math.min(retryAfter * 1000, load.until - performance.now()));
  }
}

async function dashboard(load: Load, ids: string[], pauseMs: number): Promise<void> {
  for (let i = 0; performance.now() < load.until; i++) {
    if (i % 2 === 0) {
      const id = ids[Math.floor(Math.random() * ids.length)]!;
      await load.request('read', `/v1/metric/${id}/measures?granularity=60`, { headers: AUTH }, [200]);
    } else {
      const first = Math.floor(Math.random() * (ids.length - 10));
      const refs = ids.slice(first, first + 10).map((id) => `(${id} mean)`).join(' ');
      await load.request(
        'read',
        '/v1/aggregates?granularity=60&needed_overlap=0',
        { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ operations: `(aggregate mean (metric ${refs}))` }) },
        [200],
      );
    }
    await sleep(pauseMs);
  }
}

/** Creates, patches and deletes resources, keeping at most 50 alive. */
async function churn(load: Load): Promise<void> {
  const alive: string[] = [];
  for (let i = 0; performance.now() < load.until; i++) {
    const id = randomUUID();
    const created = await load.request(
      'churn',
      '/v1/resource/generic',
      { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ id, user_id: 'soak', project_id: 'soak', metrics: { cpu: { archive_policy_name: 'soak' } } }) },
      [201],
    );
    if (created.res?.status === 201) alive.push(id);
    if (alive.length > 0) {
      const target = alive[Math.floor(Math.random() * alive.length)]!;
      await load.request('churn', `/v1/resource/generic/${target}`, { method: 'PATCH', headers: JSON_HEADERS, body: JSON.stringify({ user_id: `soak-${i}` }) }, [200]);
    }
    if (alive.length > 50) await load.request('churn', `/v1/resource/generic/${alive.shift()!}`, { method: 'DELETE', headers: AUTH }, [204]);
    await sleep(50);
  }
}

/** Samples every `sampleMs` until the clients are done, then once more (every request is counted). */
async function sampler(load: Load, server: RunningServer, opts: Options, clients: Promise<unknown>, samples: Sample[], t0: number): Promise<void> {
  const sampleMs = opts.sample * 1000;
  let last = performance.now();
  let done = false;
  void clients.finally(() => {
    done = true;
  });
  while (!done) {
    await Promise.race([sleep(sampleMs), clients]);
    const iv = load.current;
    load.current = new Interval();
    const now = performance.now();
    const seconds = (now - last) / 1000;
    last = now;
    const memory = memoryMB(server.child.pid!);
    const p99 = (xs: number[]) => (xs.length === 0 ? 0 : Math.round(percentile(xs.sort((a, b) => a - b), 99) * 10) / 10);
    const sample: Sample = {
      phase: load.phase,
      t: Math.round((now - t0) / 1000),
      served: iv.served,
      reqPerSec: Math.round(iv.served / seconds),
      measuresPerSec: Math.round(iv.measuresAccepted / seconds),
      errors: iv.errors,
      refused503: iv.refused,
      p99Ms: p99(iv.latencies),
      pushP99Ms: p99(iv.pushLatencies),
      readP99Ms: p99(iv.readLatencies),
      rssMB: memory.rss,
      anonMB: memory.anon,
      fileMB: memory.file,
      dbMB: directoryMB(server.dataDir),
      backlog: await backlog(server.base),
    };
    samples.push(sample);
    if (sample.dbMB > opts['max-db-mb'] && load.stopped === undefined) {
      load.stopped = `data directory at ${sample.dbMB} MB, past --max-db-mb ${opts['max-db-mb']}`;
      load.until = 0;
    }
    console.log(Object.values(sample).map((v) => String(v).padStart(9)).join(' '));
  }
}

/** The checks on one phase's samples; each failure is a sentence. */
function check(phase: Phase, samples: Sample[], opts: Options): string[] {
  const failures: string[] = [];
  const errors = samples.reduce((n, s) => n + s.errors, 0);
  if (errors > 0) failures.push(`${phase}: ${errors} errors`);
  const third = Math.floor(samples.length / 3);
  if (third >= 1) {
    const middle = samples.slice(third, 2 * third);
    const last = samples.slice(samples.length - third);
    const maxOf = (xs: Sample[], k: 'anonMB' | 'backlog') => Math.max(...xs.map((s) => s[k]));
    if (maxOf(last, 'anonMB') > RSS_GROWTH_LIMIT * maxOf(middle, 'anonMB')) {
      failures.push(`${phase}: anonymous RSS still growing (last third max ${maxOf(last, 'anonMB')} MB > ${RSS_GROWTH_LIMIT} x middle third max ${maxOf(middle, 'anonMB')} MB)`);
    }
    const lastMin = Math.min(...last.map((s) => s.backlog));
    if (phase === 'steady' && lastMin > maxOf(middle, 'backlog') && lastMin > opts.rate) {
      failures.push(`steady: backlog kept growing (last third min ${lastMin} > middle third max ${maxOf(middle, 'backlog')})`);
    }
  } else {
    failures.push(`${phase}: too few samples (${samples.length}) to judge RSS and backlog; run longer or sample more often`);
  }
  if (phase === 'overload') {
    if (samples.reduce((n, s) => n + s.refused503, 0) === 0) failures.push('overload: no push was refused with 503');
    // The bound is checked before each push; the pushes already admitted may each add a batch.
    const ceiling = opts['max-backlog'] + opts['push-clients'] * opts['overload-batch'];
    const worst = Math.max(...samples.map((s) => s.backlog));
    if (worst > ceiling) failures.push(`overload: backlog ${worst} past the bound ${opts['max-backlog']} plus one batch per client`);
  }
  return failures;
}

export async function run(argv: string[] = process.argv.slice(2)): Promise<boolean> {
  const { opts, overload, serverArgs } = parseArgs(argv);
  const server = await startServer([...(overload ? ['--max-backlog', String(opts['max-backlog'])] : []), ...serverArgs]);
  const { base } = server;
  try {
    await call(`${base}/v1/archive_policy`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({
        name: 'soak',
        aggregation_methods: ['mean', 'max', 'count'],
        definition: [
          { granularity: '1s', timespan: '1 day' },
          { granularity: '1m', timespan: '30 days' },
          { granularity: '1h', timespan: '365 days' },
        ],
      }),
    });
    const ids = await createMetrics(base, 'soak', opts.metrics, 4);
    const clients = opts['push-clients'];
    const streams = Array.from({ length: clients }, (_, c) => new PushStream(ids.filter((_, i) => i % clients === c)));
    const load = new Load(base);
    const samples: Sample[] = [];
    const t0 = performance.now();
    console.log(`soak: ${opts.minutes} min steady at ${opts.rate} measures/s over ${opts.metrics} metrics${overload ? `, then ${opts['overload-minutes']} min overload (--max-backlog ${opts['max-backlog']})` : ''}`);
    console.log(['phase', 't s', 'served', 'req/s', 'meas/s', 'errors', '503', 'p99 ms', 'push p99', 'read p99', 'RSS MB', 'anon MB', 'file MB', 'db MB', 'backlog'].map((h) => h.padStart(9)).join(' '));

    const phase = async (name: Phase, minutes: number, push: (stream: PushStream) => Promise<void>) => {
      if (load.stopped !== undefined) return;
      load.phase = name;
      load.until = performance.now() + minutes * 60_000;
      const clients = Promise.all([
        ...streams.map((s) => push(s)),
        ...Array.from({ length: opts['read-clients'] }, () => dashboard(load, ids, opts['read-pause-ms'])),
        churn(load),
      ]);
      await Promise.all([clients, sampler(load, server, opts, clients, samples, t0)]);
    };
    const perTick = Math.max(1, Math.round((opts.rate * opts['tick-ms']) / 1000 / clients));
    await phase('steady', opts.minutes, (s) => pushSteady(load, s, perTick, opts['tick-ms']));
    if (overload) await phase('overload', opts['overload-minutes'], (s) => pushFlat(load, s, opts['overload-batch']));

    const failures = [
      ...(load.stopped === undefined ? [] : [`stopped early: ${load.stopped}`]),
      ...check('steady', samples.filter((s) => s.phase === 'steady'), opts),
      ...(overload ? check('overload', samples.filter((s) => s.phase === 'overload'), opts) : []),
      ...(load.refusedWithoutRetryAfter > 0 ? [`${load.refusedWithoutRetryAfter} answers 503 without Retry-After`] : []),
    ];
    const summary = (name: Phase) => {
      const xs = samples.filter((s) => s.phase === name);
      if (xs.length === 0) return undefined;
      return {
        samples: xs.length,
        served: xs.reduce((n, s) => n + s.served, 0),
        errors: xs.reduce((n, s) => n + s.errors, 0),
        refused503: xs.reduce((n, s) => n + s.refused503, 0),
        measuresPerSec: Math.round(xs.reduce((n, s) => n + s.measuresPerSec, 0) / xs.length),
        worstP99Ms: Math.max(...xs.map((s) => s.p99Ms)),
        rssMB: { first: xs[0]!.rssMB, max: Math.max(...xs.map((s) => s.rssMB)), last: xs[xs.length - 1]!.rssMB },
        anonMB: { first: xs[0]!.anonMB, max: Math.max(...xs.map((s) => s.anonMB)), last: xs[xs.length - 1]!.anonMB },
        dbMB: { last: xs[xs.length - 1]!.dbMB },
        backlog: { max: Math.max(...xs.map((s) => s.backlog)), last: xs[xs.length - 1]!.backlog },
      };
    };
    const result = {
      date: new Date().toISOString(),
      command: `npm run soak -- ${argv.join(' ')}`.trim(),
      options: { ...opts, overload, serverArgs },
      summary: { steady: summary('steady'), overload: summary('overload') },
      failures,
      errorSamples: load.errorSamples,
      samples,
    };
    console.log(JSON.stringify(result.summary, null, 2));
    if (load.errorSamples.length > 0) console.log('first errors:\n  ' + load.errorSamples.join('\n  '));
    console.log(failures.length === 0 ? 'soak: all checks passed' : `soak: FAILED\n  ${failures.join('\n  ')}`);
    const out = fileURLToPath(new URL('../../bench/results/', import.meta.url));
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'soak.json'), JSON.stringify(result, null, 2));
    return failures.length === 0;
  } finally {
    await server.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  run().then(
    (ok) => process.exit(ok ? 0 : 1),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
