/**
 * Decoding pushed measures: a batch body of 1,000 metrics x 10 points
 * (10,000 measures, as `POST /v1/batch/metrics/measures` receives it), with
 * epoch-number and with ISO 8601 timestamps, through the general path
 * (nesting check, JSON.parse, decodeMeasures per metric) and the fast scanner
 * the route tries first; then single timestamp parses. Reported as measures
 * (or timestamps) per second. `run()` prints the table; running the file
 * calls it:
 *
 *   npx tsc -p tsconfig.json && node dist/bench/measures.bench.js
 */
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { scanMeasureBatch } from '../formats/measure-scan.js';
import { decodeMeasures } from '../formats/measures.js';
import { MAX_JSON_NESTING, textDepth } from '../formats/nesting.js';
import { parseTimestamp } from '../formats/timestamp.js';
import { random } from './split-codec.bench.js';

const METRICS = 1000;
const POINTS = 10;
const T0 = Date.UTC(2024, 0, 1) / 1000;

function batchBody(timestamp: (seconds: number) => number | string): string {
  const next = random(3);
  const body: Record<string, { timestamp: number | string; value: number }[]> = {};
  for (let m = 0; m < METRICS; m++) {
    const id = `${m.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`;
    body[id] = Array.from({ length: POINTS }, (_, k) => ({ timestamp: timestamp(T0 + k), value: Math.round(next() * 1e4) / 100 }));
  }
  return JSON.stringify(body);
}

function generalPath(text: string): number {
  if (textDepth(text, '[{', ']}') > MAX_JSON_NESTING) throw new Error('too deep');
  let n = 0;
  for (const measures of Object.values(JSON.parse(text) as Record<string, unknown>)) n += decodeMeasures(measures).timestamps.length;
  return n;
}

function fastPath(text: string): number {
  let n = 0;
  for (const s of scanMeasureBatch(text)!.values()) n += s.timestamps.length;
  return n;
}

export async function run(): Promise<void> {
  const bodies = {
    epoch: batchBody((s) => s),
    iso: batchBody((s) => new Date(s * 1000).toISOString().replace('Z', '+00:00')),
  };
  const bench = new Bench({ name: 'measure decoding', time: 1000 });
  for (const [kind, text] of Object.entries(bodies)) {
    bench.add(`general path, ${kind} timestamps`, () => generalPath(text));
    bench.add(`fast scanner, ${kind} timestamps`, () => fastPath(text));
  }
  const isoStrings = Array.from({ length: 1000 }, (_, i) => new Date((T0 + i) * 1000).toISOString());
  bench.add('parseTimestamp x 1000 ISO strings', () => isoStrings.forEach((s) => parseTimestamp(s)));
  await bench.run();
  console.table(
    bench.tasks.map((t) => {
      const perRun = t.name.startsWith('parseTimestamp') ? isoStrings.length : METRICS * POINTS;
      const mean = t.result?.state === 'completed' ? t.result.latency.mean : Number.NaN;
      return { task: t.name, 'ms per call': mean.toFixed(3), 'items/s': Math.round((perRun / mean) * 1000).toLocaleString('en-US') };
    }),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
