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
  } finally {
    await store?.close();
    execFileSync(join(SCRIPTS, 'stop.sh'), [dir]);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run(Number(process.argv[2] ?? 100_000));
