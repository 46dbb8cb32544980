/**
 * What the same points cost at rest, ours beside VictoriaMetrics
 * (bench/victoria.ts; ours only when it is not installed). Each server, on
 * a fresh data directory, takes the same InfluxDB line protocol bodies
 * (bench/protocols.ts's series): S series x N points 60 s apart (B lines a
 * request) then TS other series x R time-major rounds (a request a round),
 * C requests in flight; once every point is queryable it idles for the
 * settle time (background merges and compaction run), then reports: the data
 * directory's allocated bytes (blocks, as `du -s --block-size=1`) and
 * apparent bytes (sizes), allocated bytes per point sent, peak RSS (VmHWM),
 * RSS and anonymous RSS now, and the CPU seconds of the whole process life.
 *
 * Ours runs once per archive policy, chosen through the `*` rule:
 *   default  the shipped rule: `low` (5 minutes x the 6 default methods)
 *   p60      60 s x mean, a timespan covering the data
 *   high     Gnocchi's `high` (1 s for 1 hour, 1 minute for 7 days, 1 hour for
 *            a year, 6 methods)
 * For ours it also prints the per-database breakdown of
 * `gnocchi-ts stats --json`, run beside the server (it opens read-only).
 * VictoriaMetrics is flushed (/internal/force_flush) before it is measured.
 *
 * `--memory-detail` loads bench/memory-probe.ts into our server and adds,
 * per thread (main, each worker), its V8 heap (young, old, large objects),
 * ArrayBuffers and external memory at the peak RSS and after the settle,
 * and the resident pages by kind of mapping (LMDB file, other files, malloc
 * arenas, other anonymous) after the settle. `--ours-only` skips
 * VictoriaMetrics.
 *
 * Prints markdown tables and writes bench/results/footprint.json.
 *
 *   npm run bench:footprint [-- --quick] [-- --policy default|p60|high] [-- --settle S]
 *     [-- --series S --points N --tm-series TS --rounds R --batch B --concurrency C]
 *     [-- --memory-detail] [-- --ours-only]
 */
import { execFile } from 'node:child_process';
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { StorageStats } from '../engine/db-stats.js';
import { atPeak, memoryProbe, readThreads, smapsBreakdown, type SmapsBreakdown } from './memory-detail.js';
import type { ThreadMemory, ThreadSample } from './memory-probe.js';
import { benchOptions, call, cpuSeconds, JSON_HEADERS, memory, runIfMain, startServer, waitForBacklog, writeResult, type Memory } from './harness.js';
import { countWindow, cpuSet, createInfluxDatabase, LINE_HEADERS, lineBodies, memSet, OURS_LINE_WRITE, postAll, STEP } from './protocols.js';
import { startVictoria, victoriaAvailable, VICTORIA_METRICS, waitForVictoriaPoints } from './victoria.js';

type PolicyName = 'default' | 'p60' | 'high';
const POLICIES: PolicyName[] = ['default', 'p60', 'high'];

interface Options {
  policy: PolicyName[];
  settle: number;
  series: number;
  points: number;
  'tm-series': number;
  rounds: number;
  batch: number;
  concurrency: number;
}

function parseArgs(argv: string[]): Options {
  return benchOptions<Options, 'policy'>(
    argv,
    {
      quick: { policy: POLICIES, settle: 5, series: 200, points: 500, 'tm-series': 2_000, rounds: 10, batch: 10_000, concurrency: 8 },
      full: { policy: POLICIES, settle: 30, series: 1_000, points: 2_000, 'tm-series': 10_000, rounds: 30, batch: 10_000, concurrency: 8 },
    },
    { flag: 'policy', key: 'policy' },
  );
}

/** Allocated (blocks) and apparent (sizes) bytes under `dir`, each inode once, as `du` counts. */
export function diskUsage(dir: string): { allocated: number; apparent: number } {
  const seen = new Set<string>();
  let allocated = 0;
  let apparent = 0;
  const visit = (path: string) => {
    const st = lstatSync(path);
    const inode = `${st.dev}:${st.ino}`;
    if (seen.has(inode)) return;
    seen.add(inode);
    allocated += st.blocks * 512;
    apparent += st.size;
    if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return { allocated, apparent };
}

/** Makes `policy` the one the `*` rule gives (a server seeded with the default policies and rule). */
async function choosePolicy(base: string, policy: PolicyName, timespanDays: number): Promise<void> {
  if (policy === 'default') return;
  await call(`${base}/v1/archive_policy_rule/default`, { method: 'DELETE', headers: JSON_HEADERS });
  if (policy === 'p60') {
    await call(`${base}/v1/archive_policy`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ name: 'p60', definition: [{ granularity: '60s', timespan: `${timespanDays} days` }], aggregation_methods: ['mean'] }),
    });
  }
  await call(`${base}/v1/archive_policy_rule`, {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ name: 'all', metric_pattern: '*', archive_policy_name: policy }),
  });
}

const execFileAsync = promisify(execFile);

/** `gnocchi-ts stats --json` of a data directory. */
async function storageStats(dataDir: string): Promise<StorageStats> {
  const main = fileURLToPath(new URL('../server/main.js', import.meta.url));
  const { stdout } = await execFileAsync(process.execPath, [main, 'stats', '--data-dir', dataDir, '--json'], { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as StorageStats;
}

interface Footprint {
  server: string;
  points: number;
  /** Seconds from the first request until every point was queryable. */
  ingestSeconds: number;
  /** VictoriaMetrics: the points its count found (ours: its backlog drained, nothing counted). */
  pointsFound?: number;
  diskBytes: number;
  apparentBytes: number;
  bytesPerPoint: number;
  memory: Memory;
  cpuSeconds: number;
  stats?: StorageStats;
  detail?: MemoryDetail;
}

interface MemoryDetail {
  peak: { rss: number; anon: number; file: number; threads: { threadId: number; role: string; sample: ThreadSample }[] };
  after: { threads: { threadId: number; role: string; sample: ThreadSample }[]; smaps: SmapsBreakdown };
}

function memoryDetail(threads: ThreadMemory[], smaps: SmapsBreakdown): MemoryDetail {
  const peak = atPeak(threads);
  return {
    peak: {
      rss: peak.rss,
      anon: peak.anon,
      file: peak.file,
      threads: threads.flatMap((t) => {
        const sample = peak.samples.get(t.threadId);
        return sample === undefined ? [] : [{ threadId: t.threadId, role: t.role, sample }];
      }),
    },
    after: { threads: threads.map((t) => ({ threadId: t.threadId, role: t.role, sample: t.last })), smaps },
  };
}

interface Load {
  series: Buffer[];
  timeMajor: Buffer[];
  points: number;
  /** Points of the longest series: the span a count and a timespan must cover. */
  span: number;
}

function prepare(opts: Options): Load {
  const cpu = cpuSet(opts.series, opts.points, opts.batch);
  const mem = memSet(opts['tm-series'], opts.rounds);
  return {
    series: lineBodies(cpu),
    timeMajor: lineBodies(mem),
    points: cpu.series * cpu.points + mem.series * mem.points,
    span: Math.max(cpu.points, mem.points),
  };
}

async function send(base: string, path: string, load: Load, concurrency: number): Promise<void> {
  await postAll(base, path, load.series, concurrency, LINE_HEADERS);
  await postAll(base, path, load.timeMajor, concurrency, LINE_HEADERS);
}

const sleep = (seconds: number) => new Promise((r) => setTimeout(r, seconds * 1000));

function measured(server: string, load: Load, dataDir: string, pid: number, ingestMs: number, pointsFound?: number): Footprint {
  const disk = diskUsage(dataDir);
  return {
    server,
    points: load.points,
    ingestSeconds: ingestMs / 1000,
    ...(pointsFound === undefined ? {} : { pointsFound }),
    diskBytes: disk.allocated,
    apparentBytes: disk.apparent,
    bytesPerPoint: Math.round((disk.allocated / load.points) * 100) / 100,
    memory: memory(pid),
    cpuSeconds: cpuSeconds(pid),
  };
}

async function victoriaFootprint(load: Load, opts: Options): Promise<Footprint & { version: string }> {
  const vm = await startVictoria();
  try {
    const t0 = performance.now();
    await send(vm.base, '/write', load, opts.concurrency);
    const found = await waitForVictoriaPoints(vm, load.points, ...countWindow(load.span));
    const ingest = performance.now() - t0;
    await sleep(opts.settle);
    await vm.flush();
    return { ...measured('victoria-metrics', load, vm.dataDir, vm.pid, ingest, found), version: vm.version };
  } finally {
    await vm.stop();
  }
}

async function oursFootprint(load: Load, opts: Options, policy: PolicyName, detail: boolean): Promise<Footprint> {
  const probe = detail ? memoryProbe() : undefined;
  const server = await startServer([], { defaultArchivePolicies: true, ...(probe === undefined ? {} : { nodeArgs: probe.nodeArgs, env: probe.env }) });
  try {
    const { base } = server;
    await choosePolicy(base, policy, Math.ceil((load.span * STEP) / 86_400) + 1);
    await createInfluxDatabase(base);
    const t0 = performance.now();
    await send(base, OURS_LINE_WRITE, load, opts.concurrency);
    await waitForBacklog(base, 50);
    const ingest = performance.now() - t0;
    await sleep(opts.settle);
    const footprint = measured(`ours ${policy}`, load, server.dataDir, server.child.pid!, ingest);
    if (probe !== undefined) footprint.detail = memoryDetail(readThreads(probe.dir), smapsBreakdown(server.child.pid!, server.dataDir));
    return { ...footprint, stats: await storageStats(server.dataDir) };
  } finally {
    await server.stop();
    probe?.remove();
  }
}

const MB = (bytes: number) => (bytes / 1024 ** 2).toFixed(1);

const table = (header: string[], rows: (string | number)[][]) =>
  [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

function threadRows(threads: { threadId: number; role: string; sample: ThreadSample }[]): string[][] {
  const rows = threads.map(({ threadId, role, sample: s }) => [
    `${threadId} ${role}`,
    MB(s.heapTotal),
    MB(s.heapUsed),
    MB(s.young),
    MB(s.old),
    MB(s.large),
    MB(s.malloced),
    MB(s.arrayBuffers),
    MB(s.external),
  ]);
  const sum = (f: (s: ThreadSample) => number) => MB(threads.reduce((n, t) => n + f(t.sample), 0));
  rows.push(['all', sum((s) => s.heapTotal), sum((s) => s.heapUsed), sum((s) => s.young), sum((s) => s.old), sum((s) => s.large), sum((s) => s.malloced), sum((s) => s.arrayBuffers), sum((s) => s.external)]);
  return rows;
}

function detailTables(server: string, d: MemoryDetail): string {
  const header = ['thread', 'heap MB', 'used MB', 'young MB', 'old MB', 'large MB', 'V8 malloc MB', 'ArrayBuffers MB', 'external MB'];
  const m = d.after.smaps;
  return [
    `${server} at peak RSS ${MB(d.peak.rss)} MB (anon ${MB(d.peak.anon)}, file ${MB(d.peak.file)}):\n`,
    table(header, threadRows(d.peak.threads)),
    `\n${server} after the settle:\n`,
    table(header, threadRows(d.after.threads)),
    `\n${server} resident after the settle, by mapping:\n`,
    table(
      ['LMDB file MB', 'other files MB', 'brk heap MB', `malloc arenas MB (${m.arenaCount})`, 'stacks MB', 'other anon MB'],
      [[MB(m.lmdb), MB(m.otherFiles), MB(m.brkHeap), MB(m.arenas), MB(m.stacks), MB(m.otherAnon)]],
    ),
  ].join('\n');
}

export async function run(argv: string[] = process.argv.slice(2)): Promise<Record<string, unknown>> {
  const opts = parseArgs(argv);
  const load = prepare(opts);
  const results: Footprint[] = [];
  let victoriaMetrics = 'not found';
  if (argv.includes('--ours-only')) {
    console.log('VictoriaMetrics skipped (--ours-only).');
  } else if (victoriaAvailable()) {
    const vm = await victoriaFootprint(load, opts);
    victoriaMetrics = vm.version;
    results.push(vm);
  } else {
    console.log(`VictoriaMetrics was not found at ${VICTORIA_METRICS}: ours only.`);
  }
  for (const policy of opts.policy) results.push(await oursFootprint(load, opts, policy, argv.includes('--memory-detail')));

  console.log(
    '\n' +
      table(
        ['server', 'points', 'found', 'ingest s', 'disk MB', 'apparent MB', 'bytes/point', 'peak RSS MB', 'RSS MB', 'anon RSS MB', 'CPU s'],
        results.map((r) => [
          r.server,
          r.points,
          r.pointsFound ?? '-',
          r.ingestSeconds.toFixed(1),
          MB(r.diskBytes),
          MB(r.apparentBytes),
          r.bytesPerPoint.toFixed(2),
          MB(r.memory.peakRss),
          MB(r.memory.rss),
          MB(r.memory.anonRss),
          r.cpuSeconds.toFixed(1),
        ]),
      ),
  );
  for (const r of results) {
    if (r.stats === undefined) continue;
    const used = r.stats.usedPages * r.stats.pageSize;
    const databases = [...r.stats.databases].sort((a, b) => b.bytes - a.bytes);
    console.log(
      `\n${r.server}: LMDB file ${MB(r.stats.fileBytes)} MB, pages in use ${MB(used)} MB, incoming segments ${MB(r.stats.incoming.bytes)} MB, stored points ${r.stats.storedPoints}\n\n` +
        table(
          ['database', 'records', 'MB', 'share'],
          databases.map((d) => [d.name, d.records, MB(d.bytes), used === 0 ? '-' : `${((100 * d.bytes) / used).toFixed(1)}%`]),
        ),
    );
  }
  for (const r of results) if (r.detail !== undefined) console.log(`\n${detailTables(r.server, r.detail)}`);
  const result = { date: new Date().toISOString(), options: opts, victoriaMetrics, results };
  writeResult('footprint', result);
  return result;
}

runIfMain(import.meta.url, () => run());
