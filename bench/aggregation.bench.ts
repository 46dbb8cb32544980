/**
 * The aggregation maths over 1M raw points (one per second, a noisy gauge):
 * each aggregation method at a 60 s granularity (what processing computes),
 * all six default methods in one pass (as processing does), and resample of
 * the 60 s means to 1 h and to calendar months. Reported as input points per
 * second. `run()` prints the table; running the file calls it:
 *
 *   npx tsc -p tsconfig.json && node dist/bench/aggregation.bench.js
 */
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { aggregate, aggregateMany, parseMethod, resample, type AggregationMethod, type Series } from '../engine/aggregation.js';
import { random } from './split-codec.bench.js';

const POINTS = 1_000_000;
const S = 1_000_000;
const T0 = Date.UTC(2024, 0, 1) * 1000;
const METHODS = ['mean', 'sum', 'count', 'min', 'max', 'first', 'last', 'std', 'median', '95pct', 'rate:mean'];
const DEFAULT_METHODS = ['mean', 'min', 'max', 'sum', 'std', 'count'];

function gauge(): Series {
  const next = random(9);
  const timestamps = new Float64Array(POINTS);
  const values = new Float64Array(POINTS);
  for (let i = 0; i < POINTS; i++) {
    timestamps[i] = T0 + i * S;
    values[i] = Math.round((50 + 10 * Math.sin(i / 600) + next() * 5) * 100) / 100;
  }
  return { timestamps, values };
}

const method = (name: string): AggregationMethod => parseMethod(name)!;

export async function run(): Promise<void> {
  const raw = gauge();
  const minutes = aggregate(raw, 60 * S, method('mean'));
  const bench = new Bench({ name: 'aggregation over 1M points', time: 500 });
  for (const name of METHODS) bench.add(`${name} at 60 s`, () => aggregate(raw, 60 * S, method(name)));
  bench.add('6 default methods at 60 s, one pass', () => aggregateMany(raw, 60 * S, DEFAULT_METHODS.map(method)));
  bench.add('resample 60 s means to 1 h', () => resample(minutes, 3600 * S, method('mean')));
  bench.add('resample 60 s means to calendar months', () => resample(minutes, 'M', method('mean')));
  await bench.run();
  console.table(
    bench.tasks.map((t) => {
      const input = t.name.startsWith('resample') ? minutes.timestamps.length : POINTS;
      const mean = t.result?.state === 'completed' ? t.result.latency.mean : Number.NaN;
      return { task: t.name, 'ms per call': mean.toFixed(2), 'input points/s': Math.round((input / mean) * 1000).toLocaleString('en-US') };
    }),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
