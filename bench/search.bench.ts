/**
 * Resource search at scale, in process (no HTTP): 100,000 resources of a
 * custom type with 5 attributes, created through the engine in large
 * transactions, every 10th then updated once (a closed revision each), then
 * the searches of search-workload.ts. Reports ms per page (p50, p95).
 *
 *   npx tsc -p tsconfig.json && node dist/bench/search.bench.js [count]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LmdbIndexStore } from '../engine/drivers/lmdb/index-store.js';
import { Engine } from '../engine/engine.js';
import type { ResourceTypeRecord } from '../engine/resource-type.js';
import { resourceId, serverResource, serverType, timeSearches } from './search-workload.js';

const BATCH = 10_000;

/** An LMDB index loaded with the workload's `count` resources (also search-postgres.ts's reference), and how to drop it. */
export async function loadLmdb(count: number): Promise<{ index: LmdbIndexStore; rt: ResourceTypeRecord; updatedAt: number; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'gnocchi-search-'));
  const engine = await Engine.open({
    dataDir: dir,
    defaultArchivePolicies: false,
    defaultAggregationMethods: ['mean'],
    workers: 0,
    processingIntervalMs: 1e9,
  });
  const close = async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await engine.processor.stop();
    const { index, storage } = engine;
    // Loaded through the LMDB classes, many resources per transaction; searched through the seam.
    if (!(index instanceof LmdbIndexStore)) throw new Error('the search benchmark loads an LMDB index');
    const { resources } = index;
    const rt = await resources.createType(serverType());
    let t = performance.now();
    for (let base = 0; base < count; base += BATCH) {
      // ResourceIndex writes nest in this transaction: one commit per batch.
      storage.root.transactionSync(() => {
        for (let i = base; i < Math.min(count, base + BATCH); i++) {
          void resources.create(rt.name, serverResource(i));
        }
      });
    }
    console.log(`created ${count} resources in ${Math.round(performance.now() - t)} ms`);
    t = performance.now();
    const updatedAt = Date.now() * 1000;
    for (let base = 0; base < count; base += BATCH) {
      storage.root.transactionSync(() => {
        for (let i = base; i < Math.min(count, base + BATCH); i += 10) {
          void resources.update(rt.name, resourceId(i), { attrs: { vcpus: 16 } });
        }
      });
    }
    console.log(`updated ${count / 10} resources in ${Math.round(performance.now() - t)} ms`);
    return { index, rt, updatedAt, close };
  } catch (err) {
    await close();
    throw err;
  }
}

export async function run(count = 100_000): Promise<void> {
  const { index, rt, updatedAt, close } = await loadLmdb(count);
  try {
    await timeSearches(index, rt, count, updatedAt);
  } finally {
    await close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run(Number(process.argv[2] ?? 100_000));
