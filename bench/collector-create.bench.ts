/**
 * A collector's first write: 10,000 series never seen, one point each (the
 * time-major workload's first request), grouped from line protocol and then
 * stored by writeCollectorBatch as the InfluxDB route does, which creates a
 * resource and a metric for each (resources with its named metric, metrics,
 * resource_values and resources_by_revision_start entries, one
 * transaction) and pushes the points: into an empty index (a fresh data
 * directory each time), and into one the previous iterations filled. Each
 * iteration names new hosts; the grouping runs before the timed part.
 * Processing is off, and the pushed points are dropped after each
 * iteration. Reported as µs per created series: wall time, and the CPU
 * time and the garbage collections' time of warmup and timed iterations;
 * first, the process's first write alone (cold code, as a fresh server's
 * first request).
 * Node's default young generation unless told (the server runs with
 * `--max-semi-space-size=1`):
 *
 *   npx tsc -p tsconfig.json && node dist/bench/collector-create.bench.js
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { CollectorBatch, writeCollectorBatch, type CollectorWrite } from '../engine/collector.js';
import { Engine } from '../engine/engine.js';
import { SeriesCache } from '../engine/series-cache.js';
import { defaultConfig, engineOptions } from '../server/config.js';
import { groupLines, type LineWrite } from '../server/routes/influxdb.js';

const SERIES = 10_000;
const T0 = 1_700_000_000;

const LINE_WRITE: LineWrite = { db: 'influxdb', tagToRid: 'host', precision: 'ns', creator: 'admin', nowMicros: 0 };

/** One point of each of SERIES series of hosts no other round names. */
function body(round: number): Buffer {
  const lines: string[] = [];
  for (let s = 0; s < SERIES; s++) lines.push(`cpu,host=host-${round}-${s},region=r${s % 10} usage=${(s % 10_000) / 100} ${T0 + 60 * round}000000000`);
  return Buffer.from(lines.join('\n') + '\n');
}

const COLLECTOR_WRITE: CollectorWrite = {
  type: 'influxdb',
  creator: 'admin',
  prepare: () => ({}),
  mayUpdate: () => {},
  mayPost: () => {},
  maxSeries: 0,
};

/** A fresh data directory with the `influxdb` resource type, processing off. */
async function freshEngine(): Promise<{ engine: Engine; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-collector-create-bench-'));
  const config = { ...defaultConfig(), dataDir, workers: 0, logLevel: 'silent' };
  const engine = await Engine.open(engineOptions(config));
  await engine.processor.stop();
  await engine.index.createType({ name: 'influxdb', state: 'creating', attributes: [] });
  return { engine, dataDir };
}

export async function run(): Promise<void> {
  let round = 0;
  let batch: CollectorBatch | undefined;
  let current: { engine: Engine; dataDir: string } | undefined;
  /** A new batch, into a fresh engine when `fresh`, else into the one the previous rounds filled. */
  const prepare = async (fresh: boolean) => {
    if (current === undefined || fresh) {
      if (current !== undefined) await close(current);
      current = await freshEngine();
    }
    batch = groupLines(body(round++), LINE_WRITE, new SeriesCache());
  };
  const close = async ({ engine, dataDir }: { engine: Engine; dataDir: string }) => {
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  // CPU time as well as tinybench's wall time (the machine is shared), and the garbage collections within the writes.
  const cpu = new Map<string, { micros: number; calls: number; spans: [number, number][] }>();
  const write = (task: string) => async () => {
    const before = process.cpuUsage();
    const start = performance.now();
    await writeCollectorBatch(current!.engine, batch!, COLLECTOR_WRITE);
    const used = process.cpuUsage(before);
    const sum = cpu.get(task) ?? { micros: 0, calls: 0, spans: [] };
    sum.micros += used.user + used.system;
    sum.calls++;
    sum.spans.push([start, performance.now()]);
    cpu.set(task, sum);
  };
  const collections: PerformanceEntry[] = [];
  const observer = new PerformanceObserver((list) => collections.push(...list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  const gcMillis = (spans: [number, number][]) =>
    collections.filter((e) => spans.some(([a, b]) => e.startTime >= a && e.startTime < b)).reduce((sum, e) => sum + e.duration, 0);
  // The pushed points would pile up, processing off.
  const forget = () => {
    for (const m of batch!.metrics) if (m.record !== undefined) current!.engine.processor.forget(m.record.id);
  };
  const bench = new Bench({ name: 'collector creation', time: 0, iterations: 10, warmupIterations: 2 });
  const name = `create ${SERIES.toLocaleString('en-US')} series (resource + metric each), a point each`;
  const empty = `${name}, empty index`;
  const filled = `${name}, after 10,000 more each time`;
  bench.add(empty, write(empty), { beforeEach: () => prepare(true), afterEach: forget });
  bench.add(filled, write(filled), { beforeAll: () => prepare(true), beforeEach: () => prepare(false), afterEach: forget });
  // The process's first write, before V8 has optimized any of it: what a fresh server's first request costs
  // (the protocols bench's cold runs), which changes may move the other way from the warm figures.
  const cold = `${name}, first write of the process, empty index`;
  try {
    await prepare(true);
    await write(cold)();
    forget();
    await bench.run();
  } finally {
    observer.disconnect();
    if (current !== undefined) await close(current);
  }
  const coldSpan = cpu.get(cold)?.spans[0];
  const means: [string, number][] = [
    [cold, coldSpan === undefined ? Number.NaN : coldSpan[1] - coldSpan[0]],
    ...bench.tasks.map((t): [string, number] => [t.name, t.result?.state === 'completed' ? t.result.latency.mean : Number.NaN]),
  ];
  console.table(
    means.map(([task, mean]) => {
      const used = cpu.get(task);
      const cpuMicros = used === undefined ? Number.NaN : used.micros / used.calls / SERIES;
      const gcMicros = used === undefined ? Number.NaN : (gcMillis(used.spans) * 1000) / used.calls / SERIES;
      return {
        task,
        'ms per call': mean.toFixed(1),
        'µs per series': ((mean * 1000) / SERIES).toFixed(1),
        'CPU µs per series': cpuMicros.toFixed(1),
        'GC µs per series': gcMicros.toFixed(1),
      };
    }),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
