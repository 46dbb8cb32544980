/**
 * What a metric record read from LMDB costs (engine/metric-records.ts), past
 * the index's cache (a process's first read of a metric, or every read of
 * an index larger than the cache): one named on a resource, which takes its
 * name and creator from the resource's record, against one stored whole
 * (no resource), and the parts: the stored record alone, and what the
 * resource holds of it. 10,000 resources of two metrics each, as a
 * collector makes them. Reported as ns per read:
 *
 *   npx tsc -p tsconfig.json && node dist/bench/metric-records.bench.js
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { Engine } from '../engine/engine.js';
import type { NewResource } from '../engine/resources.js';

const RESOURCES = 10_000;
const NAMES = ['cpu.usage@region=r0', 'mem.used@region=r0'];

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gnocchi-bench-metric-records-'));
  const engine = await Engine.open({ dataDir: dir, defaultArchivePolicies: true, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });
  try {
    await engine.processor.stop();
    const resources: NewResource[] = Array.from({ length: RESOURCES }, (_, i) => {
      const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      const metrics = new Map(NAMES.map((name) => [name, { kind: 'new' as const, archivePolicyName: 'low', unit: null }]));
      return { id, originalResourceId: `host-${i}`, creator: 'admin', userId: null, projectId: null, endedAt: null, attrs: {}, metrics };
    });
    await engine.index.createAndExtend('generic', resources, []);
    const named = resources.flatMap((r) => [...engine.storage.resources.metricsOf(r.id)].map(([, id]) => ({ resource: r.id, id })));
    const standalone: string[] = [];
    for (let i = 0; i < RESOURCES; i++) {
      const m = await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'low', creator: 'admin', resourceId: null });
      standalone.push(m.id);
    }
    const { metrics } = engine.storage;
    let i = 0;
    const next = () => named[i++ % named.length]!;
    const bench = new Bench({ time: 1000 });
    bench
      .add('a metric named on a resource', () => void metrics.get(next().id))
      .add('a metric stored whole (no resource)', () => void metrics.get(standalone[i++ % standalone.length]!))
      .add('the named one as stored, unresolved', () => void metrics.getStored(next().id))
      .add('what its resource holds of it (ResourceRecords.owner)', () => {
        const { resource, id } = next();
        void engine.storage.resources.owner(resource, id);
      });
    await bench.run();
    console.table(
      bench.tasks.map((t) => {
        const mean = t.result?.state === 'completed' ? t.result.latency.mean : Number.NaN;
        return { read: t.name, 'ns per read': Math.round(mean * 1e6) };
      }),
    );
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
