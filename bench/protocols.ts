/**
 * Ingestion through the collector protocols, ours beside VictoriaMetrics
 * (bench/victoria.ts; ours only when it is not installed). Three workloads,
 * each on a fresh server of each kind, the bodies encoded before timing and
 * sent by a node:http client in this process from C keep-alive clients:
 *
 *   influx     S series x N points of a 2-decimal random-walk gauge, 60 s
 *              apart, as InfluxDB line protocol with nanosecond timestamps
 *              (`cpu,host=host-17,region=r7 usage=12.34 1700000000000000000`),
 *              B lines per request (consecutive points of every series)
 *   prom       the same samples as Prometheus remote write (snappy + protobuf
 *              WriteRequest; `cpu_usage{instance="host-17",job="bench",region="r7"}`)
 *   timemajor  TS series x R rounds of one point each, line protocol, one
 *              request per round (every series), the rounds in order
 *
 * Ours runs with the default archive policies (the `*` rule: `low`, 5 minutes
 * x 6 methods) and takes `POST /v1/influxdb/write?db=influxdb` (after
 * `create database influxdb`) and `POST /v1/prometheus/write`;
 * VictoriaMetrics takes `POST /write` and `POST /api/v1/write`. For each:
 * accepted points/s (until the last 2xx), queryable points/s (ours: until
 * /v1/status shows no backlog, then a check that three series have all
 * their points, untimed; VictoriaMetrics: until, after /internal/force_flush,
 * an instant `sum(count_over_time(...))` counts every point) and the server's
 * CPU seconds over that time. Repeats alternate which server goes first (the
 * second of a pair ran ~30% slower here); the summary takes medians.
 *
 * `--warm W` first sends each server W requests of the same shape for other
 * series on other hosts (a month before the timed points, outside
 * VictoriaMetrics' count window) and waits until ours has processed them:
 * the figures then are those of a server that has been taking pushes, its
 * JIT-compiled code warm, where the default (0) times a server's first
 * seconds.
 *
 * Prints markdown tables and writes bench/results/protocols.json.
 *
 *   npm run bench:protocols [-- --quick] [-- --only influx|prom|timemajor] [-- --repeats N]
 *     [-- --series S --points N --tm-series TS --rounds R --batch B --concurrency C] [-- --warm W]
 */
import { compress } from 'snappyjs';
import { encodeWriteRequest } from '../formats/prometheus-remote.js';
import { AUTH, benchOptions, call, client, cpuSeconds, pool, runIfMain, startServer, waitForBacklog, writeResult } from './harness.js';
import { startVictoria, victoriaAvailable, VICTORIA_METRICS, waitForVictoriaPoints } from './victoria.js';

/** Seconds since the epoch of every series' first point (2023-11-14). */
export const T0 = 1_700_000_000;
/** Seconds between a series' points. */
export const STEP = 60;

/** One metric per host: `MEASUREMENT,host=host-S,region=rS%10 FIELD=value`. */
export interface SeriesSet {
  measurement: string;
  field: string;
  series: number;
  points: number;
  /** Samples per request: the next points of every series, at least one each. */
  perRequest: number;
  seed: number;
  /** Seconds since the epoch of every series' first point; T0 unless given. */
  start?: number;
  /** The hosts' names are `${hosts}-S`; `host` unless given. */
  hosts?: string;
}

/** The series-major set of the influx and prom workloads. */
export const cpuSet = (series: number, points: number, perRequest: number): SeriesSet => ({
  measurement: 'cpu',
  field: 'usage',
  series,
  points,
  perRequest,
  seed: 1,
});

/** The time-major set: one request per round. */
export const memSet = (series: number, rounds: number): SeriesSet => ({
  measurement: 'mem',
  field: 'used',
  series,
  points: rounds,
  perRequest: series,
  seed: 2,
});

export const LINE_HEADERS = { 'content-type': 'text/plain' };
const REMOTE_WRITE_HEADERS = {
  'content-type': 'application/x-protobuf',
  'content-encoding': 'snappy',
  'x-prometheus-remote-write-version': '0.1.0',
};
export const OURS_LINE_WRITE = '/v1/influxdb/write?db=influxdb';

const host = (s: number, hosts = 'host') => `${hosts}-${s}`;
const region = (s: number) => `r${s % 10}`;

/** mulberry32: the same walks on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/**
 * Point k of series s at [k * series + s]: a walk between 0 and 100 in
 * steps of up to 1, rounded to 2 decimals like a CPU gauge.
 */
function walk(set: SeriesSet): Float64Array {
  const next = random(set.seed);
  const values = new Float64Array(set.series * set.points);
  const current = Float64Array.from({ length: set.series }, () => 100 * next());
  for (let k = 0; k < set.points; k++) {
    for (let s = 0; s < set.series; s++) {
      let v = Math.abs(current[s]! + 2 * next() - 1);
      if (v > 100) v = 200 - v;
      current[s] = v;
      values[k * set.series + s] = Math.round(v * 100) / 100;
    }
  }
  return values;
}

/** Point ranges [from, to) of each request. */
function requestRanges(set: SeriesSet): [number, number][] {
  const perSeries = Math.max(1, Math.floor(set.perRequest / set.series));
  const ranges: [number, number][] = [];
  for (let k = 0; k < set.points; k += perSeries) ranges.push([k, Math.min(set.points, k + perSeries)]);
  return ranges;
}

export function lineBodies(set: SeriesSet): Buffer[] {
  const values = walk(set);
  const prefix = Array.from({ length: set.series }, (_, s) => `${set.measurement},host=${host(s, set.hosts)},region=${region(s)} ${set.field}=`);
  return requestRanges(set).map(([from, to]) => {
    const lines: string[] = [];
    for (let k = from; k < to; k++) {
      const ns = ` ${(set.start ?? T0) + STEP * k}000000000`;
      for (let s = 0; s < set.series; s++) lines.push(prefix[s] + values[k * set.series + s]!.toFixed(2) + ns);
    }
    return Buffer.from(lines.join('\n') + '\n');
  });
}

function remoteWriteBodies(set: SeriesSet): Buffer[] {
  const values = walk(set);
  return requestRanges(set).map(([from, to]) => {
    const timeseries = Array.from({ length: set.series }, (_, s) => ({
      labels: [
        { name: '__name__', value: `${set.measurement}_${set.field}` },
        { name: 'instance', value: host(s, set.hosts) },
        { name: 'job', value: 'bench' },
        { name: 'region', value: region(s) },
      ],
      samples: Array.from({ length: to - from }, (_, i) => ({ value: values[(from + i) * set.series + s]!, timestampMs: ((set.start ?? T0) + STEP * (from + i)) * 1000 })),
    }));
    return Buffer.from(compress(encodeWriteRequest({ timeseries })));
  });
}

/** Creates the InfluxDB database (resource type) `influxdb` on our server. */
export async function createInfluxDatabase(base: string): Promise<void> {
  await call(`${base}/v1/influxdb/query?q=${encodeURIComponent('create database influxdb')}`, { method: 'POST', headers: AUTH });
}

/** Posts `bodies` in order from `concurrency` keep-alive clients; throws on the first refusal. */
export async function postAll(base: string, path: string, bodies: Buffer[], concurrency: number, headers: Record<string, string>): Promise<void> {
  const http = client(base, concurrency);
  try {
    await pool(bodies, concurrency, (body) => http.request('POST', path, body, headers));
  } finally {
    http.close();
  }
}

type WorkloadName = 'influx' | 'prom' | 'timemajor';
const WORKLOADS: WorkloadName[] = ['influx', 'prom', 'timemajor'];

interface Workload {
  name: WorkloadName;
  set: SeriesSet;
  bodies: Buffer[];
  /** Sent before timing (`--warm`): the same shape for other series, a month earlier. */
  warmBodies: Buffer[];
  oursPath: string;
  victoriaPath: string;
  headers: Record<string, string>;
  /** Our resource type, resource id and metric name of series s. */
  oursMetric(s: number): [type: string, resource: string, metric: string];
}

/**
 * `requests` requests' worth of `set`'s shape for other series on other
 * hosts (our resources), so that the timed requests still create theirs,
 * starting WARM_BEFORE earlier.
 */
function warmSet(set: SeriesSet, requests: number): SeriesSet {
  const perSeries = Math.max(1, Math.floor(set.perRequest / set.series));
  return { ...set, measurement: `warm${set.measurement}`, hosts: 'warm', points: requests * perSeries, seed: set.seed + 100, start: (set.start ?? T0) - WARM_BEFORE };
}

/** How long before the timed points the warm-up's are (s): outside the window VictoriaMetrics' points are counted in. */
const WARM_BEFORE = 30 * 86_400;

function workload(name: WorkloadName, opts: Options): Workload {
  const line = { oursPath: OURS_LINE_WRITE, victoriaPath: '/write', headers: LINE_HEADERS };
  const lineMetric = (set: SeriesSet) => (s: number): [string, string, string] => ['influxdb', host(s), `${set.measurement}.${set.field}@region=${region(s)}`];
  const warm = (set: SeriesSet, bodies: (set: SeriesSet) => Buffer[]) => (opts.warm > 0 ? bodies(warmSet(set, opts.warm)) : []);
  switch (name) {
    case 'influx': {
      const set = cpuSet(opts.series, opts.points, opts.batch);
      return { name, set, bodies: lineBodies(set), warmBodies: warm(set, lineBodies), ...line, oursMetric: lineMetric(set) };
    }
    case 'prom': {
      const set = cpuSet(opts.series, opts.points, opts.batch);
      return {
        name,
        set,
        bodies: remoteWriteBodies(set),
        warmBodies: warm(set, remoteWriteBodies),
        oursPath: '/v1/prometheus/write',
        victoriaPath: '/api/v1/write',
        headers: REMOTE_WRITE_HEADERS,
        oursMetric: (s) => ['prometheus', `bench@${host(s)}`, `${set.measurement}_${set.field}`],
      };
    }
    case 'timemajor': {
      const set = memSet(opts['tm-series'], opts.rounds);
      return { name, set, bodies: lineBodies(set), warmBodies: warm(set, lineBodies), ...line, oursMetric: lineMetric(set) };
    }
  }
}

type ServerName = 'ours' | 'victoria-metrics';

interface Run {
  workload: WorkloadName;
  repeat: number;
  server: ServerName;
  order: number;
  points: number;
  requests: number;
  acceptedSeconds: number;
  queryableSeconds: number;
  acceptedPointsPerSecond: number;
  queryablePointsPerSecond: number;
  cpuSeconds: number;
  /** Ours: the checked series had all their points; VictoriaMetrics: the count reached the points sent. */
  complete: boolean;
}

interface Timed {
  accepted: number;
  queryable: number;
  cpu: number;
  complete: boolean;
  /** VictoriaMetrics' version. */
  version?: string;
}

/** Sum of the `count` aggregates of one of our metrics: the points it holds. */
async function oursPoints(base: string, [type, resource, metric]: [string, string, string]): Promise<number> {
  const url = `${base}/v1/resource/${type}/${encodeURIComponent(resource)}/metric/${encodeURIComponent(metric)}/measures?aggregation=count`;
  const measures = (await (await call(url, { headers: AUTH })).json()) as [string, number, number][];
  return measures.reduce((sum, [, , count]) => sum + count, 0);
}

async function timeOurs(w: Workload, concurrency: number): Promise<Timed> {
  const server = await startServer([], { defaultArchivePolicies: true });
  try {
    const { base } = server;
    if (w.oursPath === OURS_LINE_WRITE) await createInfluxDatabase(base);
    if (w.warmBodies.length > 0) {
      await postAll(base, w.oursPath, w.warmBodies, concurrency, w.headers);
      await waitForBacklog(base, 50);
    }
    const cpu0 = cpuSeconds(server.child.pid);
    const t0 = performance.now();
    await postAll(base, w.oursPath, w.bodies, concurrency, w.headers);
    const accepted = performance.now() - t0;
    await waitForBacklog(base, 50);
    const queryable = performance.now() - t0;
    const cpu = cpuSeconds(server.child.pid) - cpu0;
    const checked = [0, w.set.series >> 1, w.set.series - 1];
    const counts = await Promise.all(checked.map((s) => oursPoints(base, w.oursMetric(s))));
    return { accepted, queryable, cpu, complete: counts.every((n) => n === w.set.points) };
  } finally {
    await server.stop();
  }
}

/** The instant and window (s) of a count covering every point of `points` per series from T0. */
export const countWindow = (points: number): [time: number, seconds: number] => [T0 + STEP * points, STEP * (points + 1)];

async function timeVictoria(w: Workload, concurrency: number): Promise<Timed> {
  const vm = await startVictoria();
  try {
    const expected = w.set.series * w.set.points;
    if (w.warmBodies.length > 0) {
      await postAll(vm.base, w.victoriaPath, w.warmBodies, concurrency, w.headers);
      await vm.flush();
    }
    const cpu0 = cpuSeconds(vm.pid);
    const t0 = performance.now();
    await postAll(vm.base, w.victoriaPath, w.bodies, concurrency, w.headers);
    const accepted = performance.now() - t0;
    const counted = await waitForVictoriaPoints(vm, expected, ...countWindow(w.set.points));
    const queryable = performance.now() - t0;
    return { accepted, queryable, cpu: cpuSeconds(vm.pid) - cpu0, complete: counted === expected, version: vm.version };
  } finally {
    await vm.stop();
  }
}

interface Options {
  only: WorkloadName[];
  repeats: number;
  series: number;
  points: number;
  'tm-series': number;
  rounds: number;
  batch: number;
  concurrency: number;
  warm: number;
}

function parseArgs(argv: string[]): Options {
  return benchOptions<Options, 'only'>(
    argv,
    {
      quick: { only: WORKLOADS, repeats: 1, series: 200, points: 500, 'tm-series': 2_000, rounds: 10, batch: 10_000, concurrency: 8, warm: 0 },
      full: { only: WORKLOADS, repeats: 1, series: 1_000, points: 2_000, 'tm-series': 10_000, rounds: 30, batch: 10_000, concurrency: 8, warm: 0 },
    },
    { flag: 'only', key: 'only' },
  );
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const table = (header: string[], rows: (string | number)[][]) =>
  [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

export async function run(argv: string[] = process.argv.slice(2)): Promise<Record<string, unknown>> {
  const opts = parseArgs(argv);
  const withVictoria = victoriaAvailable();
  if (!withVictoria) console.log(`VictoriaMetrics was not found at ${VICTORIA_METRICS}: ours only.`);
  const runs: Run[] = [];
  let victoriaVersion: string | undefined;
  for (const [w, name] of opts.only.entries()) {
    const load = workload(name, opts);
    const points = load.set.series * load.set.points;
    for (let repeat = 0; repeat < opts.repeats; repeat++) {
      const servers: ServerName[] = !withVictoria ? ['ours'] : (repeat + w) % 2 === 0 ? ['ours', 'victoria-metrics'] : ['victoria-metrics', 'ours'];
      for (const [order, server] of servers.entries()) {
        const timed = server === 'ours' ? await timeOurs(load, opts.concurrency) : await timeVictoria(load, opts.concurrency);
        victoriaVersion ??= timed.version;
        runs.push({
          workload: name,
          repeat,
          server,
          order,
          points,
          requests: load.bodies.length,
          acceptedSeconds: timed.accepted / 1000,
          queryableSeconds: timed.queryable / 1000,
          acceptedPointsPerSecond: Math.round(points / (timed.accepted / 1000)),
          queryablePointsPerSecond: Math.round(points / (timed.queryable / 1000)),
          cpuSeconds: Math.round(timed.cpu * 100) / 100,
          complete: timed.complete,
        });
        console.log(`${name} #${repeat + 1} ${server}: ${runs.at(-1)!.acceptedPointsPerSecond} accepted, ${runs.at(-1)!.queryablePointsPerSecond} queryable points/s`);
      }
    }
  }

  const summary = opts.only.map((workload) => {
    const of = (server: ServerName, key: 'acceptedPointsPerSecond' | 'queryablePointsPerSecond' | 'cpuSeconds') => {
      const xs = runs.filter((r) => r.workload === workload && r.server === server).map((r) => r[key]);
      return xs.length === 0 ? Number.NaN : median(xs);
    };
    const ratio = (key: 'acceptedPointsPerSecond' | 'queryablePointsPerSecond' | 'cpuSeconds') =>
      Math.round((of('ours', key) / of('victoria-metrics', key)) * 100) / 100;
    return { workload, acceptedRatio: ratio('acceptedPointsPerSecond'), queryableRatio: ratio('queryablePointsPerSecond'), cpuRatio: ratio('cpuSeconds') };
  });

  console.log(
    '\n' +
      table(
        ['workload', 'repeat', 'server', 'ran', 'points', 'requests', 'accepted points/s', 'queryable points/s', 'CPU s', 'complete'],
        runs.map((r) => [r.workload, r.repeat + 1, r.server, r.order === 0 ? 'first' : 'second', r.points, r.requests, r.acceptedPointsPerSecond, r.queryablePointsPerSecond, r.cpuSeconds.toFixed(2), r.complete ? 'yes' : 'NO']),
      ),
  );
  if (withVictoria) {
    console.log(
      `\nours / VictoriaMetrics (medians over repeats${opts.warm > 0 ? `, each server warmed by ${opts.warm} requests` : ''}):\n\n` +
        table(['workload', 'accepted points/s', 'queryable points/s', 'CPU s'], summary.map((s) => [s.workload, s.acceptedRatio, s.queryableRatio, s.cpuRatio])),
    );
  }
  const result = { date: new Date().toISOString(), options: opts, victoriaMetrics: withVictoria ? victoriaVersion : 'not found', runs, summary: withVictoria ? summary : [] };
  writeResult('protocols', result);
  return result;
}

runIfMain(import.meta.url, () => run());
