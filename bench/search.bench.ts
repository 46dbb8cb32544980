/**
 * Resource search at scale, in process (no HTTP): 100,000 resources of a
 * custom type with 5 attributes, created through the engine in large
 * transactions, every 10th then updated once (a closed revision each), then
 * one search page (limit 100) per filter, as `POST /v1/search/resource/{type}`
 * runs it: `and`s of an equality and a range of different selectivity, `in`,
 * `or`, a non-default sort and history searches.
 * Reports ms per page (p50, p95).
 *
 *   npx tsc -p tsconfig.json && node dist/bench/search.bench.js [count]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LmdbIndexStore } from '../engine/drivers/lmdb/index-store.js';
import { Engine } from '../engine/engine.js';
import { DEFAULT_RESOURCE_SORT, parseResourceSorts } from '../engine/resources.js';
import type { QueryNode } from '../formats/resource-query.js';
import { validateResourceQuery } from '../formats/resource-query.js';

const FLAVORS = ['m1.tiny', 'm1.small', 'm1.medium', 'm1.large', 'm1.xlarge'];
const HOSTS = 20;
const BATCH = 10_000;
const PAGE = 100;
/** started_at of resource i: one minute apart from 2024-01-01. */
const T0 = Date.UTC(2024, 0, 1) * 1000;
const startedAt = (i: number) => T0 + i * 60_000_000;
const iso = (us: number) => new Date(us / 1000).toISOString();

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function run(count = 100_000): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gnocchi-search-'));
  const engine = await Engine.open({
    dataDir: dir,
    defaultArchivePolicies: false,
    defaultAggregationMethods: ['mean'],
    workers: 0,
    processingIntervalMs: 1e9,
  });
  try {
    await engine.processor.stop();
    const { index, storage } = engine;
    // Loaded through the LMDB classes, many resources per transaction; searched through the seam.
    if (!(index instanceof LmdbIndexStore)) throw new Error('the search benchmark loads an LMDB index');
    const { resources } = index;
    const rt = await resources.createType({
      name: 'server',
      state: 'creating',
      attributes: [
        { name: 'flavor', type: 'string', required: true, minLength: 0, maxLength: 255 },
        { name: 'host', type: 'string', required: true, minLength: 0, maxLength: 255 },
        { name: 'display_name', type: 'string', required: true, minLength: 0, maxLength: 255 },
        { name: 'vcpus', type: 'number', required: true, min: null, max: null },
        { name: 'booted_at', type: 'datetime', required: false },
      ],
    });
    let t = performance.now();
    for (let base = 0; base < count; base += BATCH) {
      // ResourceIndex writes nest in this transaction: one commit per batch.
      storage.root.transactionSync(() => {
        for (let i = base; i < Math.min(count, base + BATCH); i++) {
          void resources.create(rt.name, {
            id: `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
            originalResourceId: `vm-${i}`,
            creator: 'bench:bench',
            userId: null,
            projectId: null,
            startedAt: startedAt(i),
            endedAt: null,
            attrs: {
              flavor: FLAVORS[i % FLAVORS.length]!,
              host: `compute-${i % HOSTS}`,
              display_name: `vm-${i}`,
              vcpus: 1 << (i % 4),
              booted_at: startedAt(i) + 30_000_000,
            },
          });
        }
      });
    }
    console.log(`created ${count} resources in ${Math.round(performance.now() - t)} ms`);
    t = performance.now();
    const updatedAt = Date.now() * 1000;
    for (let base = 0; base < count; base += BATCH) {
      storage.root.transactionSync(() => {
        for (let i = base; i < Math.min(count, base + BATCH); i += 10) {
          void resources.update(rt.name, `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`, { attrs: { vcpus: 16 } });
        }
      });
    }
    console.log(`updated ${count / 10} resources in ${Math.round(performance.now() - t)} ms`);

    type Case = [name: string, filter: unknown, options?: { history?: boolean; sort?: string[] }];
    const half = iso(startedAt(count / 2));
    const cases: Case[] = [
      ['flavor = m1.small and started_at >= (half)', { and: [{ '=': { flavor: 'm1.small' } }, { '>=': { started_at: iso(startedAt(count / 2)) } }] }],
      ['flavor = m1.small and started_at >= (first)', { and: [{ '=': { flavor: 'm1.small' } }, { '>=': { started_at: iso(startedAt(0)) } }] }],
      ['host = compute-7 and vcpus >= 4', { and: [{ '=': { host: 'compute-7' } }, { '>=': { vcpus: 4 } }] }],
      ['flavor = m1.small and started_at >= (last 1%)', { and: [{ '=': { flavor: 'm1.small' } }, { '>=': { started_at: iso(startedAt(count * 0.99)) } }] }],
      ['display_name = (none) and started_at >= (first)', { and: [{ '=': { display_name: 'nope' } }, { '>=': { started_at: iso(startedAt(0)) } }] }],
      ['display_name = (one) and started_at >= (first)', { and: [{ '=': { display_name: `vm-${count - 7}` } }, { '>=': { started_at: iso(startedAt(0)) } }] }],
      ['started_at >= (half)', { '>=': { started_at: half } }],
      ['flavor in (tiny, large) and vcpus >= 4', { and: [{ in: { flavor: ['m1.tiny', 'm1.large'] } }, { '>=': { vcpus: 4 } }] }],
      ['host = compute-1 or host = compute-2', { or: [{ '=': { host: 'compute-1' } }, { '=': { host: 'compute-2' } }] }],
      ['flavor = m1.small and started_at >= (half), sort started_at:desc', { and: [{ '=': { flavor: 'm1.small' } }, { '>=': { started_at: half } }] }, { sort: ['started_at:desc'] }],
      ['history: host = compute-0 and revision_end >= (updates)', { and: [{ '=': { host: 'compute-0' } }, { '>=': { revision_end: iso(updatedAt) } }] }, { history: true }],
      ['history: display_name = (one)', { '=': { display_name: 'vm-70' } }, { history: true }],
      ['history: vcpus = 16 and started_at >= (last 1%)', { and: [{ '=': { vcpus: 16 } }, { '>=': { started_at: iso(startedAt(count * 0.99)) } }] }, { history: true }],
    ];
    const rows = [];
    for (const [name, raw, options] of cases) {
      const filter = validateResourceQuery(raw, { resourceId: (v) => v }) as QueryNode;
      const history = options?.history ?? false;
      const sorts = parseResourceSorts(options?.sort ?? DEFAULT_RESOURCE_SORT, rt, history);
      const page = () => index.list(rt.name, { filter, history, sorts, limit: PAGE });
      let n = (await page()).length;
      const times: number[] = [];
      const deadline = performance.now() + 3000;
      for (let k = 0; k < 200 && (k < 5 || performance.now() < deadline); k++) {
        t = performance.now();
        n = (await page()).length;
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      rows.push({
        filter: name,
        'page size': n,
        'p50 ms': Number(percentile(times, 50).toFixed(2)),
        'p95 ms': Number(percentile(times, 95).toFixed(2)),
        runs: times.length,
      });
    }
    console.table(rows);
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run(Number(process.argv[2] ?? 100_000));
