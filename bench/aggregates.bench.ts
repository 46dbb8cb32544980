/**
 * The aggregates evaluator (align, fill, overlap, operations) over 100 series
 * of 10,000 points: `(aggregate mean ...)` alone, after `resample`, after
 * `rolling` (mean, std, median, max), reported as input points per second.
 * Then where splitting one request across workers pays: the same evaluation
 * inline, on one worker, and cut in two time ranges on two workers, for
 * growing sizes. `run()` prints both tables; running the file calls it:
 *
 *   npx tsc -p tsconfig.json && node dist/bench/aggregates.bench.js
 */
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import { Bench } from 'tinybench';
import { alignAndEvaluate } from '../engine/aggregates/align.js';
import { makeInput, makeOperations } from './aggregates-data.js';
import type { SplitTask } from './aggregates-split.worker.js';

const SERIES = 100;
const POINTS = 10_000;

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

async function evaluator(): Promise<void> {
  const input = makeInput(SERIES, POINTS);
  const cases: [string, ReturnType<typeof makeOperations>][] = [
    ['(aggregate mean (metric ...))', makeOperations(SERIES)],
    ['(aggregate mean (resample mean 1h (metric ...)))', makeOperations(SERIES, (m) => ['resample', 'mean', '3600', m])],
    ['(aggregate mean (rolling mean 5 (metric ...)))', makeOperations(SERIES, (m) => ['rolling', 'mean', '5', m])],
    ['(aggregate mean (rolling mean 60 (metric ...)))', makeOperations(SERIES, (m) => ['rolling', 'mean', '60', m])],
    ['(aggregate mean (rolling std 60 (metric ...)))', makeOperations(SERIES, (m) => ['rolling', 'std', '60', m])],
    ['(aggregate mean (rolling median 60 (metric ...)))', makeOperations(SERIES, (m) => ['rolling', 'median', '60', m])],
    ['(aggregate mean (rolling max 60 (metric ...)))', makeOperations(SERIES, (m) => ['rolling', 'max', '60', m])],
  ];
  const bench = new Bench({ name: 'aggregates evaluator', time: 1000 });
  for (const [label, node] of cases) {
    bench.add(label, () => {
      alignAndEvaluate([input], node, { neededOverlap: 100, fill: 'dropna' });
    });
  }
  await bench.run();
  console.log(`aggregates evaluator: ${SERIES} series x ${POINTS} points (fill=dropna)`);
  console.table(cases.map(([label]) => {
    const r = bench.getTask(label)!.result;
    if (r.state !== 'completed') return { operations: label, state: r.state };
    return {
      operations: label,
      'mean ms': +r.latency.mean.toFixed(2),
      'p99 ms': +r.latency.p99!.toFixed(2),
      'points/s': fmt(r.throughput.mean * SERIES * POINTS),
    };
  }));
}

async function split(): Promise<void> {
  const threads = Math.max(2, Math.min(2, availableParallelism()));
  const pool = new Piscina({ filename: new URL('./aggregates-split.worker.js', import.meta.url).href, minThreads: threads, maxThreads: threads });
  const sizes: [number, number][] = [[2, 1_000], [10, 1_000], [100, 1_000], [10, 10_000], [100, 10_000], [300, 10_000]];
  const rows: Record<string, unknown>[] = [];
  try {
    for (const [series, points] of sizes) {
      const input = makeInput(series, points);
      const node = makeOperations(series);
      const whole: SplitTask = { series, points, from: 0, to: points };
      const half = Math.floor(points / 2);
      const halves: SplitTask[] = [{ series, points, from: 0, to: half }, { series, points, from: half, to: points }];
      // Warm both workers' caches so that only evaluation and hand-off are timed.
      await Promise.all([pool.run(whole), pool.run(whole), ...halves.map((h) => pool.run(h)), ...halves.map((h) => pool.run(h))]);
      const bench = new Bench({ name: `split ${series}x${points}`, time: 500 });
      bench
        .add('inline', () => {
          alignAndEvaluate([input], node, { neededOverlap: 100, fill: 'dropna' });
        })
        .add('1 worker', async () => {
          await pool.run(whole);
        })
        .add('2 workers', async () => {
          const [a, b] = (await Promise.all(halves.map((h) => pool.run(h)))) as Float64Array[];
          const out = new Float64Array(a!.length + b!.length);
          out.set(a!);
          out.set(b!, a!.length);
        });
      await bench.run();
      const ms = (name: string) => {
        const r = bench.getTask(name)!.result;
        return r.state === 'completed' ? r.latency.mean : NaN;
      };
      const inline = ms('inline');
      const two = ms('2 workers');
      rows.push({
        series,
        points,
        'inline ms': +inline.toFixed(3),
        '1 worker ms': +ms('1 worker').toFixed(3),
        '2 workers ms': +two.toFixed(3),
        'speed-up 2w/inline': +(inline / two).toFixed(2),
      });
    }
  } finally {
    await pool.destroy();
  }
  console.log(`\nsplitting (aggregate mean (metric ...)) by time range over ${threads} workers (data held by the workers)`);
  console.table(rows);
}

export async function run(): Promise<void> {
  await evaluator();
  await split();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await run();
}
