/**
 * Processing throughput in process (no HTTP, inline runner): how many metric
 * updates and measures per second the processor turns into stored
 * aggregates, for many metrics with one point each (how collectors push)
 * and few metrics with many points, and the bytes written to disk per
 * measure (pushes and processing), and the bytes of the open splits'
 * chunks at the end per measure. Policy: 1 s / 1 min / 1 h with the six
 * default methods.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/processing.bench.js [--metrics M --points N --pushes K]
 *     [--interval S] [--policy bench|low|p60] [--backlog] [--workers W] [--rounds R]
 *
 * With arguments it runs that one case (handy under `node --cpu-prof`):
 * points S seconds apart (1 by default); `--policy low` aggregates into the
 * server's default rule's policy (5 minutes over 30 days, the same methods),
 * `--policy p60` into bench:footprint's (60 s x mean);
 * `--backlog` processes once after every push, as a time-major collector's
 * backlog is (each metric's job then holds a point of every push);
 * `--workers W` processes on W worker threads as the server does (the
 * batches then cross to the pool packed), not on the main thread;
 * `--rounds R` repeats the pushes and their processing R times, timestamps
 * going on (from the second round on, every metric has a state and the
 * code is warm), a row per round. The
 * processing CPU time is the process's (user + system, every thread's)
 * while processing ran: steadier than the rates on a shared machine.
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
  /** Seconds between points. */
  interval: number;
  policy: keyof typeof POLICIES;
  backlog: boolean;
  /** Processing worker threads; 0: inline. */
  workers: number;
  /** Times the pushes (and their processing) are repeated, timestamps going on: a row each. */
  rounds: number;
}

const METHODS = ['count', 'max', 'mean', 'min', 'std', 'sum'];

const POLICIES = {
  bench: {
    definition: [
      { granularity: S, points: 86_400, timespan: 86_400 * S },
      { granularity: 60 * S, points: 43_200, timespan: 43_200 * 60 * S },
      { granularity: 3600 * S, points: 8760, timespan: 8760 * 3600 * S },
    ],
    methods: METHODS,
  },
  low: { definition: [{ granularity: 300 * S, points: 8640, timespan: 8640 * 300 * S }], methods: METHODS },
  p60: { definition: [{ granularity: 60 * S, points: 100_000, timespan: 100_000 * 60 * S }], methods: ['mean'] },
};

async function measure({ metrics, pointsPerPush, pushes, interval, policy, backlog, workers, rounds }: Case): Promise<Record<string, string | number>[]> {
  const dir = mkdtempSync(join(tmpdir(), 'gnocchi-processing-'));
  const engine = await Engine.open({
    dataDir: dir,
    defaultArchivePolicies: false,
    defaultAggregationMethods: ['mean'],
    workers,
    processingIntervalMs: 1e9,
  });
  try {
    // Processing runs only between a push and its drain, so each round is timed alone.
    await engine.processor.stop();
    const { definition, methods } = POLICIES[policy];
    await engine.index.createPolicy({ name: 'bench', backWindow: 0, definition, aggregationMethods: methods });
    const ids: string[] = [];
    for (let i = 0; i < metrics; i++) {
      const m = await engine.index.createMetric({
        id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'bench', creator: 'bench', resourceId: null,
      });
      ids.push(m.id);
    }
    const t0 = Date.UTC(2024, 0, 1) * 1000;
    const rows: Record<string, string | number>[] = [];
    for (let round = 0; round < rounds; round++) {
      let pushMs = 0;
      let processMs = 0;
      let processCpu = 0;
      const drain = async () => {
        const t = performance.now();
        const cpu = process.cpuUsage();
        // The processor's own rounds: batches of metrics as the server makes them.
        engine.processor.start();
        await engine.processor.drained();
        await engine.processor.stop();
        const used = process.cpuUsage(cpu);
        processCpu += (used.user + used.system) / 1000;
        processMs += performance.now() - t;
      };
      const written = bytesWritten(process.pid);
      for (let p = round * pushes; p < (round + 1) * pushes; p++) {
        const batch = new Map(
          ids.map((id) => [
            id,
            {
              timestamps: Float64Array.from({ length: pointsPerPush }, (_, k) => t0 + (p * pointsPerPush + k) * interval * S),
              values: Float64Array.from({ length: pointsPerPush }, () => Math.round((40 + Math.random() * 10) * 100) / 100),
            },
          ]),
        );
        const t = performance.now();
        await engine.addMeasures(batch);
        pushMs += performance.now() - t;
        if (!backlog) await drain();
      }
      if (backlog) await drain();
      const measures = metrics * pointsPerPush * pushes;
      let chunkBytes = 0;
      for (const { value } of engine.storage.stateChunks.getRange()) chunkBytes += value.length;
      rows.push({
        case: `${metrics} metrics x ${pointsPerPush} points, ${pushes} pushes${backlog ? ' (backlog)' : ''}, ${policy}${workers > 0 ? `, ${workers} workers` : ''}${rounds > 1 ? `, round ${round + 1}` : ''}`,
        'stored measures/s': Math.round(measures / (pushMs / 1000)),
        'processed measures/s': Math.round(measures / (processMs / 1000)),
        'metric updates/s': Math.round((backlog ? metrics : metrics * pushes) / (processMs / 1000)),
        'processing CPU ms': Math.round(processCpu),
        'CPU us per measure': Number(((1000 * processCpu) / measures).toFixed(2)),
        'bytes written per measure': Math.round((bytesWritten(process.pid) - written) / measures),
        'chunk bytes per measure': Number((chunkBytes / ((round + 1) * measures)).toFixed(3)),
      });
    }
    return rows;
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const isPolicy = (name: string): name is Case['policy'] => Object.hasOwn(POLICIES, name);

function caseFromArgs(argv: string[]): Case | null {
  const arg = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i === -1 ? undefined : Number(argv[i + 1]);
  };
  const metrics = arg('metrics');
  if (metrics === undefined) return null;
  const policy = argv.includes('--policy') ? argv[argv.indexOf('--policy') + 1] : 'bench';
  if (!isPolicy(policy)) throw new Error(`--policy ${Object.keys(POLICIES).join('|')}, not ${policy}`);
  return { metrics, pointsPerPush: arg('points') ?? 1, pushes: arg('pushes') ?? 5, interval: arg('interval') ?? 1, policy, backlog: argv.includes('--backlog'), workers: arg('workers') ?? 0, rounds: arg('rounds') ?? 1 };
}

export async function run(argv: string[] = []): Promise<void> {
  const only = caseFromArgs(argv);
  const cases: Case[] = only !== null ? [only] : [
    { metrics: 2000, pointsPerPush: 1, pushes: 5, interval: 1, policy: 'bench', backlog: false, workers: 0, rounds: 1 },
    { metrics: 100, pointsPerPush: 1000, pushes: 5, interval: 1, policy: 'bench', backlog: false, workers: 0, rounds: 1 },
  ];
  const rows = [];
  for (const c of cases) rows.push(...(await measure(c)));
  console.table(rows);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run(process.argv.slice(2));
