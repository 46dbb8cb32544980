/**
 * Processing throughput in process (no HTTP, inline runner): how many metric
 * updates and measures per second the processor turns into stored
 * aggregates, for many metrics with one point each (how collectors push)
 * and few metrics with many points, and the bytes written to disk per
 * measure (pushes and processing). Policy: 1 s / 1 min / 1 h with the six
 * default methods.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/processing.bench.js [--metrics M --points N --pushes K]
 *
 * With arguments it runs that one case (handy under `node --cpu-prof`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Engine } from '../engine/engine.js';
import { bytesWritten } from './harness.js';

const S = 1_000_000;

interface Case {
  metrics: number;
  pointsPerPush: number;
  pushes: number;
}

async function measure({ metrics, pointsPerPush, pushes }: Case): Promise<Record<string, string | number>> {
  const dir = mkdtempSync(join(tmpdir(), 'gnocchi-processing-'));
  const engine = await Engine.open({
    dataDir: dir,
    defaultArchivePolicies: false,
    defaultAggregationMethods: ['mean'],
    workers: 0,
    processingIntervalMs: 1e9,
  });
  try {
    // Processing runs only between a push and its drain, so each round is timed alone.
    await engine.processor.stop();
    await engine.index.createPolicy({
      name: 'bench',
      backWindow: 0,
      definition: [
        { granularity: S, points: 86_400, timespan: 86_400 * S },
        { granularity: 60 * S, points: 43_200, timespan: 43_200 * 60 * S },
        { granularity: 3600 * S, points: 8760, timespan: 8760 * 3600 * S },
      ],
      aggregationMethods: ['count', 'max', 'mean', 'min', 'std', 'sum'],
    });
    const ids: string[] = [];
    for (let i = 0; i < metrics; i++) {
      const m = await engine.index.createMetric({
        id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'bench', creator: 'bench', resourceId: null,
      });
      ids.push(m.id);
    }
    const t0 = Date.UTC(2024, 0, 1) * 1000;
    let pushMs = 0;
    let processMs = 0;
    const written = bytesWritten(process.pid);
    for (let r = 0; r < pushes; r++) {
      const batch = new Map(
        ids.map((id) => [
          id,
          {
            timestamps: Float64Array.from({ length: pointsPerPush }, (_, k) => t0 + (r * pointsPerPush + k) * S),
            values: Float64Array.from({ length: pointsPerPush }, () => Math.round((40 + Math.random() * 10) * 100) / 100),
          },
        ]),
      );
      let t = performance.now();
      await engine.addMeasures(batch);
      pushMs += performance.now() - t;
      t = performance.now();
      // The processor's own rounds: batches of metrics as the server makes them.
      engine.processor.start();
      await engine.processor.drained();
      await engine.processor.stop();
      processMs += performance.now() - t;
    }
    const measures = metrics * pointsPerPush * pushes;
    return {
      case: `${metrics} metrics x ${pointsPerPush} points, ${pushes} pushes`,
      'stored measures/s': Math.round(measures / (pushMs / 1000)),
      'processed measures/s': Math.round(measures / (processMs / 1000)),
      'metric updates/s': Math.round((metrics * pushes) / (processMs / 1000)),
      'bytes written per measure': Math.round((bytesWritten(process.pid) - written) / measures),
    };
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function caseFromArgs(argv: string[]): Case | null {
  const arg = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i === -1 ? undefined : Number(argv[i + 1]);
  };
  const metrics = arg('metrics');
  if (metrics === undefined) return null;
  return { metrics, pointsPerPush: arg('points') ?? 1, pushes: arg('pushes') ?? 5 };
}

export async function run(argv: string[] = []): Promise<void> {
  const only = caseFromArgs(argv);
  const cases: Case[] = only !== null ? [only] : [
    { metrics: 2000, pointsPerPush: 1, pushes: 5 },
    { metrics: 100, pointsPerPush: 1000, pushes: 5 },
  ];
  const rows = [];
  for (const c of cases) rows.push(await measure(c));
  console.table(rows);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run(process.argv.slice(2));
