/**
 * Embedded LMDB against cluster mode, over HTTP: three set-ups in one run,
 * (a) one LMDB node, (b) one cluster node, (c) three cluster nodes (requests
 * spread round robin), each on engines of its own (PostgreSQL and Redis
 * started by scripts/cluster/ in a temporary directory, stopped after), the
 * order alternating between repeats so that drift on the shared machine
 * falls on every set-up alike.
 *
 *   npm run bench:cluster [-- --quick] [-- --repeats R --setup lmdb|cluster-1|cluster-3
 *     --metrics M --points N --batch B --concurrency C --tm-metrics T --rounds K
 *     --reads R --read-concurrency RC --shards S]
 *
 * Phases, each timed and with the CPU seconds of every process (every node,
 * redis-server, PostgreSQL's processes summed, the bench itself) from
 * /proc/PID/stat before and after:
 * - ingestion: M metrics x N points (1 s apart) through
 *   POST /v1/batch/metrics/measures in batches of B measures from C clients:
 *   one client per group of metrics, each pushing its own in time order:
 *   accepted measures/s (until the last 202) and end to end (until
 *   /v1/status shows no backlog and refreshing reads of every metric show
 *   its last point; the metrics the first such read missed are counted);
 * - time-major: T metrics (resources of 100) x 1 point per request, K rounds
 *   (as collectors send them), accepted and end-to-end updates/s;
 * - reads of a 1,000-point window at granularity 1 s from RC clients: a
 *   window no read asked for before (every read goes to storage), then the
 *   same window of 50 metrics read once before (LMDB's read cache answers
 *   those; cluster mode has no read cache).
 * In cluster mode also Redis's calls and CPU per command (INFO commandstats)
 * and PostgreSQL's transactions per phase, for the per-operation costs.
 * Prints markdown tables and writes bench/results/cluster.json.
 */
import { cpuSeconds, benchOptions, batchBodies, client, createBenchPolicy, createMetrics, iso, percentile, pool, runIfMain, startServer, waitForBacklog, writeResult, type Client, type RunningServer } from './harness.js';
import { postgresTransactions, redisCommandStats, startEngine, type RunningEngine } from './cluster-engines.js';
import { treeCpuSeconds } from './processes.js';

const SETUPS = ['lmdb', 'cluster-1', 'cluster-3'] as const;
type Setup = (typeof SETUPS)[number];

interface Options {
  setups: readonly Setup[];
  repeats: number;
  metrics: number;
  points: number;
  batch: number;
  concurrency: number;
  'tm-metrics': number;
  rounds: number;
  reads: number;
  'read-concurrency': number;
  shards: number;
}

const DEFAULTS: { quick: Options; full: Options } = {
  quick: { setups: SETUPS, repeats: 1, metrics: 100, points: 2_000, batch: 10_000, concurrency: 4, 'tm-metrics': 10_000, rounds: 3, reads: 200, 'read-concurrency': 4, shards: 6 },
  full: { setups: SETUPS, repeats: 1, metrics: 200, points: 2_000, batch: 10_000, concurrency: 4, 'tm-metrics': 10_000, rounds: 4, reads: 300, 'read-concurrency': 4, shards: 6 },
};

const START_S = Date.UTC(2024, 0, 1) / 1000;
const WINDOW_POINTS = 1_000;
const CACHED_METRICS = 50;
const METRICS_PER_RESOURCE = 100;

/** The processes whose CPU a phase reports, by name. */
interface Processes {
  nodes: RunningServer[];
  redis?: RunningEngine;
  postgres?: RunningEngine;
}

interface Snapshot {
  at: number;
  cpu: Record<string, number>;
  redis?: Map<string, { calls: number; usec: number }>;
  pgTransactions?: number;
}

export interface Phase {
  name: string;
  /** What `units` counts: measures or reads. */
  unit: string;
  units: number;
  seconds: number;
  /** Seconds until the last request was acknowledged, when processing follows. */
  acceptedSeconds?: number;
  /** Metrics whose last point the first refreshing read after the pushes did not show (should be 0). */
  missedByRefresh?: number;
  /** Milliseconds per request, for reads. */
  p50?: number;
  p95?: number;
  /** CPU seconds of each process during the phase. */
  cpu: Record<string, number>;
  /** Redis commands run during the phase: calls and CPU microseconds. */
  redis?: Record<string, { calls: number; usec: number }>;
  pgTransactions?: number;
}

async function snapshot(procs: Processes): Promise<Snapshot> {
  const cpu: Record<string, number> = { bench: cpuSeconds(process.pid) };
  procs.nodes.forEach((node, i) => (cpu[`node ${i + 1}`] = cpuSeconds(node.child.pid)));
  if (procs.redis !== undefined) cpu.redis = treeCpuSeconds([procs.redis.pid]);
  if (procs.postgres !== undefined) cpu.postgres = treeCpuSeconds([procs.postgres.pid]);
  return {
    at: performance.now(),
    cpu,
    ...(procs.redis === undefined ? {} : { redis: await redisCommandStats(procs.redis.url) }),
    ...(procs.postgres === undefined ? {} : { pgTransactions: await postgresTransactions(procs.postgres.url) }),
  };
}

/** PostgreSQL's backends report their counts when idle, at most once a second. */
const PG_STATS_DELAY_MS = 1_100;


/** When a phase's work ended and, for pushes, when its last request was acknowledged (performance.now()). */
interface Timing {
  end: number;
  accepted?: number;
  latencies?: number[];
  /** Metrics whose last point the first refreshing read after the pushes did not show. */
  missedByRefresh?: number;
}

/** Runs `work` between two snapshots of the processes. */
async function phase(procs: Processes, name: string, unit: string, units: number, work: () => Promise<Timing>): Promise<Phase> {
  const before = await snapshot(procs);
  const timing = await work();
  const after = await snapshot(procs);
  // The transaction count again once the backends have reported.
  if (procs.postgres !== undefined) {
    await new Promise((r) => setTimeout(r, PG_STATS_DELAY_MS));
    after.pgTransactions = await postgresTransactions(procs.postgres.url);
  }
  const cpu = Object.fromEntries(Object.entries(after.cpu).map(([p, s]) => [p, Math.round((s - before.cpu[p]!) * 100) / 100]));
  const redis: Record<string, { calls: number; usec: number }> = {};
  for (const [command, now] of after.redis ?? []) {
    const prior = before.redis?.get(command) ?? { calls: 0, usec: 0 };
    // Less the INFO of the snapshot itself.
    const calls = now.calls - prior.calls - (command === 'info' ? 1 : 0);
    if (calls > 0) redis[command] = { calls, usec: now.usec - prior.usec };
  }
  const sorted = timing.latencies?.sort((a, b) => a - b);
  return {
    name,
    unit,
    units,
    seconds: (timing.end - before.at) / 1000,
    ...(timing.accepted === undefined ? {} : { acceptedSeconds: (timing.accepted - before.at) / 1000 }),
    ...(timing.missedByRefresh === undefined ? {} : { missedByRefresh: timing.missedByRefresh }),
    ...(sorted === undefined ? {} : { p50: round3(percentile(sorted, 50)), p95: round3(percentile(sorted, 95)) }),
    cpu,
    ...(procs.redis === undefined ? {} : { redis }),
    // Less the two reads of the count before the phase, each a transaction of its own.
    ...(procs.postgres === undefined ? {} : { pgTransactions: after.pgTransactions! - before.pgTransactions! - 2 }),
  };
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** Requests spread round robin over the nodes, each with its own keep-alive sockets. */
class Spread {
  private readonly clients: Client[];
  private next = 0;

  constructor(nodes: RunningServer[], sockets: number) {
    this.clients = nodes.map((n) => client(n.base, sockets));
  }

  request(method: string, path: string, body?: Buffer): Promise<Buffer> {
    return this.clients[this.next++ % this.clients.length]!.request(method, path, body);
  }

  close(): void {
    for (const c of this.clients) c.close();
  }
}

/** Metrics per refresh request of `processedUpTo`. */
const REFRESH_CHUNK = 1_000;

/** How long processedUpTo waits for a point a refresh did not show before calling it lost. */
const LOST_AFTER_MS = 60_000;

/**
 * Waits until every metric of `ids` shows its point at `timestamp`: when,
 * and how many metrics the first refreshing read missed. /v1/status first
 * (cheap), though in cluster mode its backlog is the sum of the nodes' last
 * heartbeats, seconds old: it can read 0 before the pushes show. So then
 * refreshing reads of them all, which should include every measure
 * acknowledged before; those that do not are counted and read again.
 */
async function processedUpTo(nodes: RunningServer[], ids: string[], timestamp: number, granularity: number): Promise<{ end: number; missedByRefresh: number }> {
  await waitForBacklog(nodes[0]!.base, 20);
  const spread = new Spread(nodes, 2);
  const path = `/v1/aggregates?refresh=true&granularity=${granularity}&start=${iso(timestamp)}`;
  const lacking = async (chunk: string[]) => {
    const body = Buffer.from(JSON.stringify({ operations: `(metric ${chunk.map((id) => `(${id} mean)`).join(' ')})` }));
    const answer = JSON.parse((await spread.request('POST', path, body)).toString()) as { measures: Record<string, { mean: unknown[] }> };
    return chunk.filter((id) => answer.measures[id]?.mean.length !== 1);
  };
  try {
    let missedByRefresh: number | undefined;
    const deadline = performance.now() + LOST_AFTER_MS;
    for (let left = ids; left.length > 0; ) {
      const chunks = Array.from({ length: Math.ceil(left.length / REFRESH_CHUNK) }, (_, i) => left.slice(i * REFRESH_CHUNK, (i + 1) * REFRESH_CHUNK));
      const missing: string[] = [];
      await pool(chunks, 2, async (chunk) => void missing.push(...(await lacking(chunk))));
      missedByRefresh ??= missing.length;
      left = missing;
      if (left.length > 0 && performance.now() > deadline) throw new Error(`${left.length} metrics lack their point at ${iso(timestamp)} after ${LOST_AFTER_MS} ms, e.g. ${left[0]}`);
      if (left.length > 0) await new Promise((r) => setTimeout(r, 50));
    }
    return { end: performance.now(), missedByRefresh: missedByRefresh! };
  } finally {
    spread.close();
  }
}

/**
 * Pushes `streams` round robin over the nodes, one client per stream sending
 * its bodies in order, then waits until the last point of `ids` is processed.
 */
async function pushAndProcess(nodes: RunningServer[], streams: Buffer[][], last: { ids: string[]; timestamp: number; granularity: number }): Promise<Timing> {
  const spread = new Spread(nodes, streams.length);
  try {
    await Promise.all(streams.map(async (bodies) => {
      for (const body of bodies) await spread.request('POST', '/v1/batch/metrics/measures', body);
    }));
    const accepted = performance.now();
    return { accepted, ...(await processedUpTo(nodes, last.ids, last.timestamp, last.granularity)) };
  } finally {
    spread.close();
  }
}

function measure(_series: number, k: number): [number, number] {
  return [START_S + k, Math.round((40 + 5 * Math.sin(k / 30) + Math.random()) * 100) / 100];
}

/** `count` metrics of `policy` on resources of 100 metrics each, created round robin over the nodes. */
async function createResourceMetrics(nodes: RunningServer[], policy: string, count: number): Promise<string[]> {
  const spread = new Spread(nodes, 4);
  const ids: string[] = [];
  try {
    await pool(Array.from({ length: Math.ceil(count / METRICS_PER_RESOURCE) }, (_, r) => r), 4, async (r) => {
      const metrics: Record<string, { archive_policy_name: string }> = {};
      for (let m = 0; m < Math.min(METRICS_PER_RESOURCE, count - r * METRICS_PER_RESOURCE); m++) metrics[`m${m}`] = { archive_policy_name: policy };
      const body = await spread.request('POST', '/v1/resource/generic', Buffer.from(JSON.stringify({ id: `host-${r}`, metrics })));
      ids.push(...Object.values((JSON.parse(body.toString()) as { metrics: Record<string, string> }).metrics));
    });
    return ids;
  } finally {
    spread.close();
  }
}

/** Times `paths` read round robin from `concurrency` clients; throws unless each answers `points` points. */
async function timedReads(nodes: RunningServer[], paths: string[], concurrency: number, points: number): Promise<Timing> {
  const spread = new Spread(nodes, concurrency);
  const latencies: number[] = [];
  try {
    await pool(paths, concurrency, async (path) => {
      const t = performance.now();
      const body = await spread.request('GET', path);
      latencies.push(performance.now() - t);
      const got = (JSON.parse(body.toString()) as unknown[]).length;
      if (got !== points) throw new Error(`GET ${path}: ${got} points, expected ${points}`);
    });
    return { end: performance.now(), latencies };
  } finally {
    spread.close();
  }
}

function windowPath(id: string, offset: number): string {
  const from = START_S + offset;
  return `/v1/metric/${id}/measures?granularity=1&start=${iso(from)}&stop=${iso(from + WINDOW_POINTS)}`;
}

function clusterArgs(setup: Setup, node: number, engines: { postgres: RunningEngine; redis: RunningEngine }, opts: Options): string[] {
  if (setup === 'lmdb') return [];
  const redis = engines.redis.url;
  return ['--index', engines.postgres.url, '--incoming', redis, '--series', redis, '--coordination', redis, '--shards', String(opts.shards), '--node-id', `n${node + 1}`];
}

export interface SetupRun {
  setup: Setup;
  repeat: number;
  phases: Phase[];
}

async function runSetup(setup: Setup, repeat: number, opts: Options): Promise<SetupRun> {
  const engines: RunningEngine[] = [];
  const nodes: RunningServer[] = [];
  try {
    const procs: Processes = { nodes };
    if (setup !== 'lmdb') {
      procs.postgres = await startEngine('postgresql');
      engines.push(procs.postgres);
      procs.redis = await startEngine('redis');
      engines.push(procs.redis);
    }
    // One at a time: the first node creates the schema and the cluster's shard count.
    for (let i = 0; i < (setup === 'cluster-3' ? 3 : 1); i++) {
      nodes.push(await startServer(procs.postgres === undefined ? [] : clusterArgs(setup, i, { postgres: procs.postgres, redis: procs.redis! }, opts)));
    }
    const first = nodes[0]!.base;
    await createBenchPolicy(first, 'bench', '1s');
    await createBenchPolicy(first, 'collector', '10s');
    const ids = await createMetrics(first, 'bench', opts.metrics, 4);
    const tmIds = await createResourceMetrics(nodes, 'collector', opts['tm-metrics']);

    const phases: Phase[] = [];
    const total = ids.length * opts.points;
    // Each client its own metrics, in time order: a point pushed after a later one of its metric was
    // processed is older than the archive policy's back window, dropped as Gnocchi does.
    const groups = Array.from({ length: opts.concurrency }, (_, c) => ids.filter((_, i) => i % opts.concurrency === c));
    const streams = groups.map((group) => batchBodies(group, opts.points, opts.batch, measure));
    phases.push(await phase(procs, 'ingestion', 'measure', total, () => pushAndProcess(nodes, streams, { ids, timestamp: START_S + opts.points - 1, granularity: 1 })));

    const tmBodies: Buffer[] = [];
    for (let round = 0; round < opts.rounds; round++) {
      // One collection interval (10 s) per round, values like a CPU gauge.
      const timestamp = START_S + 10 * round;
      for (let i = 0; i < tmIds.length; i += 10_000) {
        const slice = tmIds.slice(i, i + 10_000);
        tmBodies.push(Buffer.from(`{${slice.map((id, j) => `"${id}":[{"timestamp":${timestamp},"value":${(j * 7 + round) % 100}.5}]`).join(',')}}`));
      }
    }
    // Two clients, as in bench/collector.ts: a round may be in flight with the next.
    const tmStreams = [0, 1].map((c) => tmBodies.filter((_, i) => i % 2 === c));
    const lastTm = { ids: tmIds, timestamp: START_S + 10 * (opts.rounds - 1), granularity: 10 };
    phases.push(await phase(procs, 'time-major', 'update', tmIds.length * opts.rounds, () => pushAndProcess(nodes, tmStreams, lastTm)));

    // A (metric, window) pair no read asked for before: metrics in turn, the window moving on a second per round of metrics.
    const windows = opts.points - WINDOW_POINTS + 1;
    if (windows < 1 || opts.reads > ids.length * windows) throw new Error(`--points must leave ${opts.reads} new 1,000-point windows`);
    const fresh = Array.from({ length: opts.reads }, (_, i) => windowPath(ids[i % ids.length]!, Math.floor(i / ids.length)));
    phases.push(await phase(procs, 'read, new window each', 'read', fresh.length, () => timedReads(nodes, fresh, opts['read-concurrency'], WINDOW_POINTS)));

    const middle = Math.floor(windows / 2);
    const cached = ids.slice(0, CACHED_METRICS).map((id) => windowPath(id, middle));
    await timedReads(nodes, cached, opts['read-concurrency'], WINDOW_POINTS);
    const repeated = Array.from({ length: opts.reads }, (_, i) => cached[i % cached.length]!);
    phases.push(await phase(procs, 'read, same window again', 'read', repeated.length, () => timedReads(nodes, repeated, opts['read-concurrency'], WINDOW_POINTS)));
    return { setup, repeat, phases };
  } finally {
    for (const node of nodes) await node.stop();
    for (const engine of engines.reverse()) await engine.stop();
  }
}

const n = (x: number) => Math.round(x).toLocaleString('en-US');

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** The median over the runs of a set-up and, with several, each run's figure. */
function cell(values: number[], format: (x: number) => string): string {
  return values.length === 1 ? format(values[0]!) : `${format(median(values))} (${values.map(format).join(', ')})`;
}

function table(header: string[], rows: string[][]): string {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** The throughput and latency table: a row per figure, a column per set-up. */
function summary(runs: SetupRun[], setups: readonly Setup[]): string {
  const of = (setup: Setup, name: string) => runs.filter((r) => r.setup === setup).map((r) => r.phases.find((p) => p.name === name)!);
  const rows: [string, string, (p: Phase) => number, (x: number) => string][] = [
    ['ingestion, accepted measures/s', 'ingestion', (p) => p.units / p.acceptedSeconds!, n],
    ['ingestion, end-to-end measures/s', 'ingestion', (p) => p.units / p.seconds, n],
    ['time-major, accepted metric updates/s', 'time-major', (p) => p.units / p.acceptedSeconds!, n],
    ['time-major, end-to-end metric updates/s', 'time-major', (p) => p.units / p.seconds, n],
    ['time-major, metrics a refresh read missed (should be 0)', 'time-major', (p) => p.missedByRefresh!, n],
    ['ingestion, metrics a refresh read missed (should be 0)', 'ingestion', (p) => p.missedByRefresh!, n],
    ['1,000-point read, new window each, p50 ms', 'read, new window each', (p) => p.p50!, (x) => x.toFixed(1)],
    ['1,000-point read, new window each, p95 ms', 'read, new window each', (p) => p.p95!, (x) => x.toFixed(1)],
    ['1,000-point read, same window again, p50 ms', 'read, same window again', (p) => p.p50!, (x) => x.toFixed(1)],
    ['1,000-point read, same window again, p95 ms', 'read, same window again', (p) => p.p95!, (x) => x.toFixed(1)],
  ];
  return table(['', ...setups], rows.map(([label, name, figure, format]) => [label, ...setups.map((s) => cell(of(s, name).map(figure), format))]));
}

/** CPU per phase and process: seconds, and microseconds per unit (measure, update, read). */
function cpuTable(runs: SetupRun[]): string {
  const rows: string[][] = [];
  for (const run of runs) {
    for (const p of run.phases) {
      const nodes = Object.entries(p.cpu).filter(([k]) => k.startsWith('node'));
      const nodeSum = nodes.reduce((a, [, s]) => a + s, 0);
      const per = (s: number) => `${s.toFixed(2)} s (${((s * 1e6) / p.units).toFixed(1)} µs)`;
      rows.push([
        `${run.setup} #${run.repeat + 1}`,
        `${p.name} (${n(p.units)} ${p.unit}s)`,
        p.seconds.toFixed(1),
        `${per(nodeSum)}${nodes.length > 1 ? ` [${nodes.map(([, s]) => s.toFixed(2)).join(' + ')}]` : ''}`,
        p.cpu.redis === undefined ? '–' : per(p.cpu.redis),
        p.cpu.postgres === undefined ? '–' : per(p.cpu.postgres),
        per(p.cpu.bench!),
      ]);
    }
  }
  return table(['set-up', 'phase', 'wall s', 'nodes CPU (per unit)', 'redis CPU (per unit)', 'postgres CPU (per unit)', 'bench client CPU (per unit)'], rows);
}

/** Redis commands and PostgreSQL transactions per phase of the cluster runs: the per-operation costs. */
function engineTable(runs: SetupRun[]): string {
  const rows: string[][] = [];
  for (const run of runs) {
    for (const p of run.phases) {
      if (p.redis === undefined) continue;
      const commands = Object.entries(p.redis)
        .filter(([c]) => c !== 'info')
        .sort(([, a], [, b]) => b.usec - a.usec)
        .map(([c, { calls, usec }]) => `${c} ${n(calls)} x ${(usec / calls).toFixed(0)} µs`);
      rows.push([`${run.setup} #${run.repeat + 1}`, p.name, commands.slice(0, 6).join(', '), n(p.pgTransactions!), (p.pgTransactions! / p.units).toFixed(4)]);
    }
  }
  return table(['set-up', 'phase', 'Redis commands (calls x CPU µs per call, by CPU)', 'PG transactions', `PG transactions per unit`], rows);
}

export async function run(argv: string[] = process.argv.slice(2)): Promise<SetupRun[]> {
  const opts = benchOptions(argv, DEFAULTS, { flag: 'setup', key: 'setups' });
  const runs: SetupRun[] = [];
  for (let repeat = 0; repeat < opts.repeats; repeat++) {
    const order = repeat % 2 === 0 ? opts.setups : [...opts.setups].reverse();
    for (const setup of order) {
      console.log(`${setup}, run ${repeat + 1} of ${opts.repeats}`);
      runs.push(await runSetup(setup, repeat, opts));
    }
  }
  console.log(`\n${n(opts.metrics)} metrics x ${n(opts.points)} points, batches of ${n(opts.batch)}, ${opts.concurrency} clients; ` +
    `time-major ${n(opts['tm-metrics'])} metrics x ${opts.rounds} rounds, 2 clients; ${n(opts.reads)} reads from ${opts['read-concurrency']} clients; ` +
    `${opts.shards} shards; requests round robin over the nodes\n`);
  console.log(summary(runs, opts.setups));
  console.log(`\nCPU per phase and process (µs per measure, update or read)\n`);
  console.log(cpuTable(runs));
  console.log(`\nCluster engines per phase\n`);
  console.log(engineTable(runs));
  writeResult('cluster', { date: new Date().toISOString(), options: opts, runs });
  return runs;
}

runIfMain(import.meta.url, () => run());
