/**
 * bench/search.bench.ts against the PostgreSQL index: the same 100,000
 * resources (every 10th updated once) and the same searches, through
 * PostgresIndexStore, on a PostgreSQL this bench starts
 * (scripts/cluster/start-postgres.sh, on a free loopback port, in a
 * temporary directory) and stops. Reports ms per page (p50, p95), to set
 * beside search.bench.ts's figures.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/search-postgres.js [count]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PostgresIndexStore } from '../engine/drivers/postgres/index-store.js';
import { DEFAULT_RESOURCE_SORT, parseResourceSorts, type NewResource } from '../engine/resources.js';
import { validateResourceQuery, type QueryNode } from '../formats/resource-query.js';

const FLAVORS = ['m1.tiny', 'm1.small', 'm1.medium', 'm1.large', 'm1.xlarge'];
const HOSTS = 20;
const BATCH = 5_000;
const PAGE = 100;
const T0 = Date.UTC(2024, 0, 1) * 1000;
const startedAt = (i: number) => T0 + i * 60_000_000;
const iso = (us: number) => new Date(us / 1000).toISOString();
const id = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
const SCRIPTS = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', 'scripts', 'cluster');

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

function resource(i: number): NewResource {
  return {
    id: id(i),
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
  };
}

export async function run(count = 100_000): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gnocchi-search-pg-'));
  const port = await freePort();
  const url = execFileSync(join(SCRIPTS, 'start-postgres.sh'), [dir, String(port)], { encoding: 'utf8' }).trim();
  let store: PostgresIndexStore | undefined;
  try {
    store = await PostgresIndexStore.open(url);
    const rt = await store.createType({
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
      const batch = [];
      for (let i = base; i < Math.min(count, base + BATCH); i++) batch.push(resource(i));
      await store.createAndExtend(rt.name, batch, []);
    }
    console.log(`created ${count} resources in ${Math.round(performance.now() - t)} ms`);
    t = performance.now();
    const updatedAt = Date.now() * 1000;
    for (let i = 0; i < count; i += 10) await store.update(rt.name, id(i), { attrs: { vcpus: 16 } });
    console.log(`updated ${count / 10} resources in ${Math.round(performance.now() - t)} ms`);
    execFileSync('psql', [url, '-qc', 'VACUUM ANALYZE']);

    type Case = [name: string, filter: unknown, options?: { history?: boolean; sort?: string[] }];
    const half = iso(startedAt(count / 2));
    const cases: Case[] = [
      ['flavor = m1.small and started_at >= (half)', { and: [{ '=': { flavor: 'm1.small' } }, { '>=': { started_at: half } }] }],
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
      const page = async () => (await store!.list(rt.name, { filter, history, sorts, limit: PAGE })).length;
      let n = await page();
      const times: number[] = [];
      const deadline = performance.now() + 3000;
      for (let k = 0; k < 200 && (k < 5 || performance.now() < deadline); k++) {
        t = performance.now();
        n = await page();
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
    await store?.close();
    execFileSync(join(SCRIPTS, 'stop.sh'), [dir]);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run(Number(process.argv[2] ?? 100_000));
