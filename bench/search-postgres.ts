/**
 * bench/search.bench.ts against the PostgreSQL index: the same 100,000
 * resources (every 10th updated once) and the same searches, through
 * PostgresIndexStore, on a PostgreSQL this bench starts
 * (scripts/cluster/start-postgres.sh, on a free loopback port, in a
 * temporary directory) and stops. Reports ms per page (p50, p95) beside
 * LMDB's (search.bench.ts's index, loaded and timed first in this process):
 * for PostgreSQL both uncached, each run after a write to the searched type
 * (which drops its cached searches on every node), and repeated, each run
 * answered by this node's cache.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/search-postgres.js [count]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { PostgresIndexStore } from '../engine/drivers/postgres/index-store.js';
import type { ResourceTypeRecord } from '../engine/resource-type.js';
import { percentile } from './harness.js';
import { loadLmdb } from './search.bench.js';
import { resourceId, searchCases, serverResource, serverType, timeRuns, type SearchCase } from './search-workload.js';

const BATCH = 5_000;
const SCRIPTS = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', 'scripts', 'cluster');

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

/**
 * The floor under any search answered by PostgreSQL: a query that reads
 * nothing, on a connection of its own. The LMDB index answers a point
 * lookup in-process, in less time than this.
 */
async function timeRoundTrip(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const times: number[] = [];
    for (let k = 0; k < 500; k++) {
      const t = performance.now();
      await client.query('SELECT 1');
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    console.log(`round trip, SELECT 1: p50 ${percentile(times, 50).toFixed(3)} ms, p95 ${percentile(times, 95).toFixed(3)} ms`);
  } finally {
    await client.end();
  }
}

const p50 = (times: number[]) => Number(percentile(times, 50).toFixed(3));
const p95 = (times: number[]) => Number(percentile(times, 95).toFixed(3));

/** p50 ms of each search page on the LMDB index, by search name. */
async function timeLmdb(count: number): Promise<Map<string, number>> {
  const { index, rt, updatedAt, close } = await loadLmdb(count);
  try {
    const out = new Map<string, number>();
    for (const { name, ...options } of searchCases(rt, count, updatedAt)) {
      await index.list(rt.name, options);
      out.set(name, p50(await timeRuns(() => index.list(rt.name, options))));
    }
    return out;
  } finally {
    await close();
  }
}

/**
 * A resource of the searched type that no search matches (started before
 * the first, on no searched host, flavor or name): creating and deleting it
 * in turn is a write to the type that leaves every answer as it was.
 */
function scratchWriter(store: PostgresIndexStore, rt: ResourceTypeRecord): () => Promise<unknown> {
  const r = serverResource(0);
  const scratch = {
    ...r,
    id: resourceId(0xffff_ffff_ff),
    originalResourceId: 'scratch',
    startedAt: r.startedAt! - 3_600_000_000,
    attrs: { flavor: 'scratch', host: 'scratch', display_name: 'scratch', vcpus: 0, booted_at: null },
  };
  let present = false;
  return async () => {
    await (present ? store.delete(rt.name, scratch.id) : store.create(rt.name, scratch));
    present = !present;
  };
}

async function timePostgres(store: PostgresIndexStore, rt: ResourceTypeRecord, cases: SearchCase[], lmdb: Map<string, number>): Promise<void> {
  const write = scratchWriter(store, rt);
  const rows = [];
  for (const { name, ...options } of cases) {
    const page = () => store.list(rt.name, options);
    await write();
    const fresh = (await page()).map((r) => r.id);
    const cached = (await page()).map((r) => r.id);
    if (JSON.stringify(cached) !== JSON.stringify(fresh)) throw new Error(`${name}: the cached answer differs from PostgreSQL's`);
    const uncached = await timeRuns(page, write);
    await page();
    const hits = await timeRuns(page);
    const reference = lmdb.get(name)!;
    rows.push({
      search: name,
      rows: fresh.length,
      'LMDB p50': reference,
      'uncached p50': p50(uncached),
      'uncached p95': p95(uncached),
      'cached p50': p50(hits),
      'cached p95': p95(hits),
      'uncached/LMDB': Number((p50(uncached) / reference).toPrecision(2)),
      'cached/LMDB': Number((p50(hits) / reference).toPrecision(2)),
    });
  }
  console.log('ms per page of 100; uncached: each run after a write to the type; cached: repeated');
  console.table(rows);
}

export async function run(count = 100_000): Promise<void> {
  console.log('LMDB:');
  const lmdb = await timeLmdb(count);
  console.log('PostgreSQL:');
  const dir = mkdtempSync(join(tmpdir(), 'gnocchi-search-pg-'));
  const port = await freePort();
  const url = execFileSync(join(SCRIPTS, 'start-postgres.sh'), [dir, String(port)], { encoding: 'utf8' }).trim();
  let store: PostgresIndexStore | undefined;
  try {
    store = await PostgresIndexStore.open(url);
    const rt = await store.createType(serverType());
    let t = performance.now();
    for (let base = 0; base < count; base += BATCH) {
      const batch = [];
      for (let i = base; i < Math.min(count, base + BATCH); i++) batch.push(serverResource(i));
      await store.createAndExtend(rt.name, batch, []);
    }
    console.log(`created ${count} resources in ${Math.round(performance.now() - t)} ms`);
    t = performance.now();
    const updatedAt = Date.now() * 1000;
    for (let i = 0; i < count; i += 10) await store.update(rt.name, resourceId(i), { attrs: { vcpus: 16 } });
    console.log(`updated ${count / 10} resources in ${Math.round(performance.now() - t)} ms`);
    execFileSync('psql', [url, '-qc', 'VACUUM ANALYZE']);

    await timePostgres(store, rt, searchCases(rt, count, updatedAt), lmdb);
    await timeRoundTrip(url);
  } finally {
    await store?.close();
    execFileSync(join(SCRIPTS, 'stop.sh'), [dir]);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run(Number(process.argv[2] ?? 100_000));
