/**
 * The InfluxDB write path without HTTP: a body of 10,000 lines of 2-decimal
 * gauges with nanosecond timestamps (`cpu,host=host-17,region=r7
 * usage=12.34 1700000000000000000`), as 1,000 series x 10 points (the
 * points of a request in time order, each time every series) and as
 * 10,000 series x 1 point. Tasks: the byte scanner alone; scanning and
 * grouping into per-metric arrays with the series already remembered (a
 * collector's steady state) and with none (every series new, as on a
 * first write);
 * then the whole route through `app.inject` up to the committed incoming
 * record (processing off, resources and metrics existing). Reported as
 * points per second. `run()` prints the table; running the file calls it:
 *
 *   npx tsc -p tsconfig.json && node dist/bench/line-protocol.bench.js
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { Engine } from '../engine/engine.js';
import { SeriesCache } from '../engine/series-cache.js';
import { LineScanner } from '../formats/line-protocol.js';
import { buildApp } from '../server/app.js';
import { defaultConfig, engineOptions } from '../server/config.js';
import { groupLines, type LineWrite } from '../server/routes/influxdb.js';
import { random } from './split-codec.bench.js';

const LINES = 10_000;
const T0 = 1_700_000_000;

/** `points` points of each of `series` series, 60 s apart, every series at each time. */
function body(series: number, points: number): Buffer {
  const next = random(5);
  const lines: string[] = [];
  for (let k = 0; k < points; k++) {
    for (let s = 0; s < series; s++) lines.push(`cpu,host=host-${s},region=r${s % 10} usage=${(next() * 100).toFixed(2)} ${T0 + 60 * k}000000000`);
  }
  return Buffer.from(lines.join('\n') + '\n');
}

function scanOnly(bytes: Buffer): number {
  const scan = new LineScanner(bytes);
  let n = 0;
  while (scan.next()) n += scan.fieldCount;
  return n;
}

const WRITE: LineWrite = { db: 'influxdb', tagToRid: 'host', precision: 'ns', creator: 'admin', nowMicros: 0 };
const HEADERS = { authorization: `basic ${Buffer.from('admin:').toString('base64')}`, 'content-type': 'text/plain' };

export async function run(): Promise<void> {
  const bench = new Bench({ name: 'line protocol', time: 1000 });
  const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-line-protocol-bench-'));
  const config = { ...defaultConfig(), dataDir, workers: 0, logLevel: 'silent' };
  const engine = await Engine.open(engineOptions(config));
  await engine.processor.stop();
  const app = await buildApp({ engine, config });
  try {
    await app.inject({ method: 'POST', url: '/v1/influxdb/query?q=create+database+influxdb', headers: HEADERS });
    for (const [name, series, points] of [['1,000 series x 10 points', 1000, 10], ['10,000 series x 1 point', 10_000, 1]] as const) {
      const bytes = body(series, points);
      const warm = new SeriesCache();
      groupLines(bytes, WRITE, warm);
      bench.add(`scan, ${name}`, () => scanOnly(bytes));
      bench.add(`scan + group, series known, ${name}`, () => groupLines(bytes, WRITE, warm).series());
      bench.add(`scan + group, series new, ${name}`, () => groupLines(bytes, WRITE, new SeriesCache()).series());
      const push = async () => {
        const res = await app.inject({ method: 'POST', url: '/v1/influxdb/write?db=influxdb', headers: HEADERS, payload: bytes });
        if (res.statusCode !== 204) throw new Error(`write: ${res.statusCode} ${res.body}`);
      };
      // Creates the resources and metrics, so that the timed writes find them.
      await push();
      const ids = (await engine.index.listMetrics({ filter: {}, sorts: [], limit: Number.MAX_SAFE_INTEGER })).map((m) => m.id);
      // Pending measures are dropped after each push: they would pile up, processing off.
      const afterEach = () => ids.forEach((id) => engine.processor.forget(id));
      bench.add(`route, ${name}`, push, { afterEach });
    }
    await bench.run();
  } finally {
    await app.close();
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.table(
    bench.tasks.map((t) => {
      const mean = t.result?.state === 'completed' ? t.result.latency.mean : Number.NaN;
      return { task: t.name, 'ms per call': mean.toFixed(3), 'points/s': Math.round((LINES / mean) * 1000).toLocaleString('en-US') };
    }),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
