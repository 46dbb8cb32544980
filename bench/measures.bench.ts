/**
 * Decoding pushed measures: a batch body of 1,000 metrics x 10 points
 * (10,000 measures, as `POST /v1/batch/metrics/measures` receives it), with
 * epoch-number and with ISO 8601 timestamps, through the general path
 * (nesting check, JSON.parse, decodeMeasures per metric) and the fast scanner
 * the route tries first; then the whole route (through `app.inject`, up to
 * the committed incoming record; processing off) for 1,000 metrics x 10
 * points and 10,000 x 1 as collectors push; then single timestamp parses.
 * Reported as measures (or timestamps) per second. `run()` prints the
 * table; running the file calls it:
 *
 *   npx tsc -p tsconfig.json && node dist/bench/measures.bench.js
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { Bench } from 'tinybench';
import { Engine } from '../engine/engine.js';
import { buildApp } from '../server/app.js';
import { defaultConfig, engineOptions } from '../server/config.js';
import { scanMeasureBatch } from '../formats/measure-scan.js';
import { decodeMeasures } from '../formats/measures.js';
import { MAX_JSON_NESTING, textDepth } from '../formats/nesting.js';
import { parseTimestamp } from '../formats/timestamp.js';
import { random } from './split-codec.bench.js';

const METRICS = 1000;
const POINTS = 10;
const T0 = Date.UTC(2024, 0, 1) / 1000;

const metricId = (m: number) => `${m.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`;

function batchBody(timestamp: (seconds: number) => number | string, metrics = METRICS, points = POINTS): string {
  const next = random(3);
  const body: Record<string, { timestamp: number | string; value: number }[]> = {};
  for (let m = 0; m < metrics; m++) {
    body[metricId(m)] = Array.from({ length: points }, (_, k) => ({ timestamp: timestamp(T0 + k), value: Math.round(next() * 1e4) / 100 }));
  }
  return JSON.stringify(body);
}

/** A server on a throw-away data directory with metrics 0..count-1 of `metricId`, processing off. */
async function routeServer(count: number): Promise<{ app: FastifyInstance; engine: Engine; close(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-measures-bench-'));
  const config = { ...defaultConfig(), dataDir, defaultArchivePolicies: false, workers: 0, logLevel: 'silent' };
  const engine = await Engine.open(engineOptions(config));
  await engine.processor.stop();
  const app = await buildApp({ engine, config });
  await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: 60e6, points: 1440, timespan: 86_400e6 }], aggregationMethods: ['mean'] });
  const metric = (m: number) => ({ id: metricId(m), name: null, unit: null, archivePolicyName: 'p', creator: 'admin:', resourceId: null });
  await Promise.all(Array.from({ length: count }, (_, m) => engine.index.createMetric(metric(m))));
  const close = async () => {
    await app.close();
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { app, engine, close };
}

const PUSH_HEADERS = { authorization: `basic ${Buffer.from('admin:').toString('base64')}`, 'content-type': 'application/json' };

async function push(app: FastifyInstance, body: string): Promise<void> {
  const res = await app.inject({ method: 'POST', url: '/v1/batch/metrics/measures', headers: PUSH_HEADERS, payload: body });
  if (res.statusCode !== 202) throw new Error(`push: ${res.statusCode} ${res.body}`);
}

function generalPath(text: string): number {
  if (textDepth(text, '[{', ']}') > MAX_JSON_NESTING) throw new Error('too deep');
  let n = 0;
  for (const measures of Object.values(JSON.parse(text) as Record<string, unknown>)) n += decodeMeasures(measures).timestamps.length;
  return n;
}

/** From the body's bytes, as the server receives them (the general path needs their text first). */
function fastPath(body: Buffer): number {
  let n = 0;
  for (const s of scanMeasureBatch(body)!.lists) n += s.timestamps.length;
  return n;
}

export async function run(): Promise<void> {
  const bodies = {
    epoch: batchBody((s) => s),
    iso: batchBody((s) => new Date(s * 1000).toISOString().replace('Z', '+00:00')),
  };
  const bench = new Bench({ name: 'measure decoding', time: 1000 });
  for (const [kind, text] of Object.entries(bodies)) {
    const bytes = Buffer.from(text, 'latin1');
    bench.add(`general path, ${kind} timestamps`, () => generalPath(text));
    bench.add(`fast scanner, ${kind} timestamps`, () => fastPath(bytes));
  }
  const server = await routeServer(10 * METRICS);
  for (const [name, metrics, points] of [['1,000 metrics x 10 points', METRICS, POINTS], ['10,000 metrics x 1 point', 10 * METRICS, 1]] as const) {
    const body = batchBody((s) => s, metrics, points);
    // Pending measures are dropped after each push: they would pile up, processing off.
    const afterEach = () => {
      for (let m = 0; m < metrics; m++) server.engine.processor.forget(metricId(m));
    };
    bench.add(`route, ${name}`, () => push(server.app, body), { afterEach });
  }
  const isoStrings = Array.from({ length: 1000 }, (_, i) => new Date((T0 + i) * 1000).toISOString());
  bench.add('parseTimestamp x 1000 ISO strings', () => isoStrings.forEach((s) => parseTimestamp(s)));
  try {
    await bench.run();
  } finally {
    await server.close();
  }
  console.table(
    bench.tasks.map((t) => {
      const perRun = t.name.startsWith('parseTimestamp') ? isoStrings.length : METRICS * POINTS;
      const mean = t.result?.state === 'completed' ? t.result.latency.mean : Number.NaN;
      return { task: t.name, 'ms per call': mean.toFixed(3), 'items/s': Math.round((perRun / mean) * 1000).toLocaleString('en-US') };
    }),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
