/**
 * Where cutting one `(aggregate mean (metric ...))` query in two time ranges
 * on two workers pays, on real stored data (LMDB splits, 60 s granularity):
 * for growing series x points, the query inline, whole on one worker, and
 * cut in two on two workers (aggregates-time-split.ts). The variants
 * run interleaved, round after round (a range within one split cannot be
 * cut: NaN), so that noise from other processes
 * falls on all of them alike; medians are reported.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/aggregates-split.bench.js [--rounds R]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inlineAggregatesRunner, workerAggregatesRunner } from '../engine/aggregates/runner.js';
import type { AggregatesTask, SeriesRef } from '../engine/aggregates/task.js';
import { cutInTime, joinResults } from './aggregates-time-split.js';
import { Engine } from '../engine/engine.js';
import { parseOperations } from '../formats/operations.js';
import { buildApp } from '../server/app.js';
import { defaultConfig, engineOptions, type Config } from '../server/config.js';
import { AUTH, percentile } from './harness.js';

const SIZES: [series: number, points: number][] = [[10, 3_000], [10, 10_000], [30, 10_000], [100, 3_000], [100, 10_000], [200, 10_000]];
const ORIGIN = Date.UTC(2024, 0, 1) / 1000;

export async function run(rounds = 15): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-bench-split-'));
  const config: Config = { ...defaultConfig(), dataDir, defaultArchivePolicies: false, workers: 2, logLevel: 'silent' };
  const engine = await Engine.open(engineOptions(config));
  const app = await buildApp({ engine, config });
  const post = async (url: string, body: unknown) => {
    const res = await app.inject({ method: 'POST', url, headers: AUTH, payload: body as object });
    if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    return (res.body === '' ? {} : res.json()) as { id: string };
  };
  const inline = inlineAggregatesRunner(engine.drivers.series);
  const cut = async (task: AggregatesTask) => {
    const snapshot = await engine.loadSeries(task.refs.map((r) => r.metricId));
    try {
      return cutInTime(snapshot, task);
    } finally {
      snapshot.release();
    }
  };
  const pool = workerAggregatesRunner({ kind: 'lmdb', dataDir }, 2);
  const rows: Record<string, unknown>[] = [];
  try {
    const maxPoints = Math.max(...SIZES.map(([, p]) => p));
    await post('/v1/archive_policy', { name: 'bench', aggregation_methods: ['mean'], definition: [{ granularity: '60s', points: maxPoints }] });
    const maxSeries = Math.max(...SIZES.map(([s]) => s));
    const ids: string[] = [];
    for (let s = 0; s < maxSeries; s++) ids.push((await post('/v1/metric', { archive_policy_name: 'bench' })).id);
    for (let offset = 0; offset < maxPoints; offset += 500) {
      const body: Record<string, { timestamp: number; value: number }[]> = {};
      ids.forEach((id, s) => {
        body[id] = Array.from({ length: Math.min(500, maxPoints - offset) }, (_, k) => ({
          timestamp: ORIGIN + (offset + k) * 60,
          value: Math.round((50 + 40 * Math.sin((offset + k) / 97 + s)) * 100) / 100,
        }));
      });
      await post('/v1/batch/metrics/measures', body);
    }
    await engine.processor.refresh(ids);
    const policy = await engine.policyOf((await engine.index.getMetric(ids[0]!))!);

    for (const [series, points] of SIZES) {
      const refs: SeriesRef[] = ids.slice(0, series).map((id) => ({ metricId: id, policy, aggregation: 'mean', key: [id, 'mean'], name: id }));
      const task: AggregatesTask = {
        refs,
        granularities: [60_000_000],
        start: (ORIGIN + (maxPoints - points) * 60) * 1e6,
        operations: parseOperations(['aggregate', 'mean', ['metric', ...refs.map((r) => [r.metricId, 'mean'])]]),
        neededOverlap: 100,
        fill: 'dropna',
      };
      const cuttable = (await cut(task)) !== undefined;
      const variants: [string, () => Promise<unknown>][] = [
        ['inline', () => inline.run(task)],
        ['1 worker', () => pool.run(task)],
      ];
      // The cut is planned on every run: its cost (open splits read on the calling thread) counts.
      if (cuttable) {
        variants.push(['2 workers, cut', async () => {
          const [a, b] = await Promise.all((await cut(task))!.map((h) => pool.run(h)));
          return joinResults(a!, b!);
        }]);
      }
      await inline.run(task);
      const times = new Map(variants.map(([name]) => [name, [] as number[]]));
      for (let r = 0; r < rounds + 2; r++) {
        for (const [name, f] of variants) {
          const t = performance.now();
          await f();
          if (r >= 2) times.get(name)!.push(performance.now() - t);
        }
      }
      const median = (name: string) => {
        const list = times.get(name);
        return list === undefined ? NaN : percentile(list.sort((a, b) => a - b), 50);
      };
      rows.push({
        series,
        points,
        'inline ms': +median('inline').toFixed(2),
        '1 worker ms': +median('1 worker').toFixed(2),
        '2 workers cut ms': +median('2 workers, cut').toFixed(2),
        'cut / 1 worker': +(median('2 workers, cut') / median('1 worker')).toFixed(2),
      });
    }
  } finally {
    await pool.destroy();
    await app.close();
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(`(aggregate mean (metric ...)) on stored splits, medians of ${rounds} interleaved rounds`);
  console.table(rows);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const i = process.argv.indexOf('--rounds');
  await run(i === -1 ? undefined : Number(process.argv[i + 1]));
}
