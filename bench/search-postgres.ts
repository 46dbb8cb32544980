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
import pg from 'pg';
import { PostgresIndexStore } from '../engine/drivers/postgres/index-store.js';
import { percentile } from './harness.js';
import { resourceId, serverResource, serverType, timeSearches } from './search-workload.js';

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

export async function run(count = 100_000): Promise<void> {
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

    await timeSearches(store, rt, count, updatedAt);
    await timeRoundTrip(url);
  } finally {
    await store?.close();
    execFileSync(join(SCRIPTS, 'stop.sh'), [dir]);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run(Number(process.argv[2] ?? 100_000));
