/**
 * What the IndexStore seam costs the embedded mode per call: a metric
 * looked up through engine/index.ts directly (synchronous) and through
 * LmdbIndexStore (a promise awaited), one at a time and 100 at a time
 * (getMetrics), and a policy lookup. Records come from the index's cache,
 * as on the hot paths. Reported as ns per lookup:
 *
 *   npx tsc -p tsconfig.json && node dist/bench/index-store.bench.js
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { LmdbIndexStore } from '../engine/drivers/lmdb/index-store.js';
import { Engine } from '../engine/engine.js';

const METRICS = 1000;
const BATCH = 100;

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gnocchi-bench-index-store-'));
  const engine = await Engine.open({ dataDir: dir, defaultArchivePolicies: true, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });
  try {
    await engine.processor.stop();
    const store = engine.index;
    if (!(store instanceof LmdbIndexStore)) throw new Error('the seam benchmark measures the LMDB index');
    const ids: string[] = [];
    for (let i = 0; i < METRICS; i++) {
      ids.push((await store.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'low', creator: 'x', resourceId: null })).id);
    }
    const batches = Array.from({ length: METRICS / BATCH }, (_, b) => ids.slice(b * BATCH, (b + 1) * BATCH));
    let i = 0;
    const bench = new Bench({ time: 1000 });
    bench
      .add('Index.getMetric (synchronous)', () => void store.metrics.getMetric(ids[i++ % METRICS]!))
      .add('await IndexStore.getMetric', async () => void (await store.getMetric(ids[i++ % METRICS]!)))
      .add(`await IndexStore.getMetrics, ${BATCH} ids`, async () => void (await store.getMetrics(batches[i++ % batches.length]!)))
      .add('await IndexStore.getPolicy', async () => void (await store.getPolicy('low')));
    await bench.run();
    console.table(
      bench.tasks.map((t) => {
        const mean = t.result?.state === 'completed' ? t.result.latency.mean : Number.NaN;
        return { lookup: t.name, 'ns per call': Math.round(mean * 1e6) };
      }),
    );
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
