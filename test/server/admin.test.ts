// The admin commands through the compiled `gnocchi-ts` (dist/server/main.js,
// built by `npm test`'s pretest), on data written by a real server process.
import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage, type Storage } from '../../engine/storage.js';
import { call, freePort, MAIN, ROOT, type Server as ProcessServer } from './process-helpers.js';
const SCRATCH = mkdtempSync(join(tmpdir(), 'gnocchi-ts-admin-test-'));
const RESOURCE_ID = '5a301761-f78b-46e2-8900-8b4f6fe6675a';
/** Points per metric, 5 s apart: four 1 h splits at 1 s, three sealed, the open one with a frozen chunk. */
const POINTS = 2000;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function gnocchi(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { cwd: ROOT, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : null, stdout, stderr });
    });
  });
}

/** A server on a data directory of the test's choosing, stopped gracefully (its data then complete on disk). */
interface Server extends ProcessServer {
  stop(): Promise<void>;
}

const servers: Server[] = [];

/** `node dist/server/main.js --port P ...`: no subcommand, as CI starts it. */
async function startServer(dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<Server> {
  const port = await freePort();
  const args = [MAIN, '--host', '127.0.0.1', '--port', String(port), '--data-dir', dataDir, '--workers', '0', '--processing-interval', '20'];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const server: Server = {
    child,
    url: `http://127.0.0.1:${port}`,
    dir: dataDir,
    output: () => out,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  servers.push(server);
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${out}`);
    try {
      if ((await fetch(`${server.url}/`)).status === 200) return server;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not answer in 20 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function points(n: number, from = Date.UTC(2024, 0, 1)): { timestamp: string; value: number }[] {
  return Array.from({ length: n }, (_, i) => ({ timestamp: new Date(from + 5000 * i).toISOString(), value: (i % 17) * 1.5 }));
}

/** Every granularity of every method, pending measures processed first. */
async function measures(s: Server, metricId: string): Promise<unknown> {
  const out: Record<string, unknown> = {};
  for (const method of ['mean', 'max']) {
    const res = await call(s, 'GET', `/v1/metric/${metricId}/measures?aggregation=${method}&refresh=true`);
    expect(res.status).toBe(200);
    out[method] = res.body;
  }
  return out;
}

/** A stopped copy of the fixture's data, to damage or rewrite. */
function copyOf(dir: string, name: string): string {
  const to = join(SCRATCH, name);
  cpSync(dir, to, { recursive: true });
  return to;
}

const first = <T>(records: Iterable<T>): T => {
  for (const r of records) return r;
  throw new Error('no such record');
};

async function withStorage(dataDir: string, change: (storage: Storage) => void): Promise<void> {
  const storage = openStorage(dataDir);
  try {
    change(storage);
  } finally {
    await storage.close();
  }
}

const fixtureDir = join(SCRATCH, 'fixture');
let fixture: Server;
let metricIds: string[];
let expected: unknown[];

beforeAll(async () => {
  fixture = await startServer(fixtureDir);
  const policy = await call(fixture, 'POST', '/v1/archive_policy', {
    name: 'fine',
    definition: [{ granularity: '1s', timespan: '1 day' }],
    aggregation_methods: ['mean', 'max'],
  });
  expect(policy.status).toBe(201);
  const resource = await call(fixture, 'POST', '/v1/resource/generic', {
    id: RESOURCE_ID,
    project_id: 'p1',
    user_id: 'u1',
    metrics: { temp: { archive_policy_name: 'fine' } },
  });
  expect(resource.status).toBe(201);
  const standalone = await call(fixture, 'POST', '/v1/metric', { archive_policy_name: 'fine', name: 'standalone' });
  expect(standalone.status).toBe(201);
  metricIds = [resource.body.metrics.temp, standalone.body.id];
  for (const id of metricIds) expect((await call(fixture, 'POST', `/v1/metric/${id}/measures`, points(POINTS))).status).toBe(202);
  expected = [];
  for (const id of metricIds) expected.push(await measures(fixture, id));
}, 60_000);

afterAll(async () => {
  for (const s of servers) await s.stop();
  rmSync(SCRATCH, { recursive: true, force: true });
});

describe('gnocchi-ts without a subcommand', () => {
  it('serves, as `node dist/server/main.js --port P` did', async () => {
    expect((await call(fixture, 'GET', '/v1/archive_policy/fine')).status).toBe(200);
  });

  it('lists the subcommands in --help and describes each in SUB --help', async () => {
    const help = await gnocchi(['--help']);
    expect(help.code).toBe(0);
    for (const sub of ['serve', 'check', 'stats', 'backup', 'restore', 'compact']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${sub} `, 'm'));
      const own = await gnocchi([sub, '--help']);
      expect(own.code).toBe(0);
      expect(own.stdout).toContain(`Usage: gnocchi-ts ${sub === 'serve' ? '[serve]' : sub}`);
    }
  });
});

describe('gnocchi-ts check', () => {
  it('exits 0 with a summary on a clean directory while its server runs', async () => {
    const run = await gnocchi(['check', '--data-dir', fixtureDir]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/clean \(records read: metrics 2, .*splits 4, metric_state 2, resources 1, .*\)/);
  });
});

describe('gnocchi-ts stats', () => {
  it('gives counts and points consistent with what was written', async () => {
    const run = await gnocchi(['stats', '--data-dir', fixtureDir, '--json']);
    expect(run.code).toBe(0);
    const stats = JSON.parse(run.stdout);
    expect(stats).toMatchObject({ metrics: 2, resources: 1, splits: 4 });
    // One row per point: at 1 s, points 5 s apart never share a period.
    expect(stats.points.sealedRows + stats.points.openRows).toBe(2 * POINTS);
    expect(stats.points.sealedRows).toBe(2 * 2 * 720);
    expect(stats.storedPoints).toBe(stats.points.sealedRows + stats.points.openRows + stats.points.tailPoints);
    expect(stats.bytesPerPoint).toBeCloseTo((stats.usedPages * stats.pageSize) / stats.storedPoints, 6);
    expect(stats.freePages).toBe(stats.filePages - stats.usedPages);
    expect(stats.incoming, 'every measure processed: no incoming segment left').toEqual({ segments: 0, bytes: 0 });
    const byName = new Map(stats.databases.map((d: { name: string }) => [d.name, d]));
    expect(byName.get('splits')).toMatchObject({ records: 4 });
    expect(byName.get('metrics')).toMatchObject({ records: 2 });
    // Each open split's frozen rows are one small chunk, inline in its state.
    expect(byName.get('state_chunks')).toMatchObject({ records: 0 });
  });

  it('prints the per-database table', async () => {
    const run = await gnocchi(['stats', '--data-dir', fixtureDir]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^database +records +key bytes +value bytes +depth +branch +leaf +overflow +page bytes +share$/m);
    expect(run.stdout).toMatch(/^splits +4 /m);
    expect(run.stdout).toMatch(/^stored points \d+: sealed split rows 2880, /m);
  });
});

describe('gnocchi-ts backup and restore', () => {
  const backupFile = join(SCRATCH, 'backups', 'fixture.mdb');
  const restoredDir = join(SCRATCH, 'restored');

  it("copies a server's data while it takes pushes; restored, the data answers the same", async () => {
    const busy = await call(fixture, 'POST', '/v1/metric', { archive_policy_name: 'fine' });
    let pushing = true;
    const pushes = (async () => {
      for (let i = 0; pushing; i++) {
        expect((await call(fixture, 'POST', `/v1/metric/${busy.body.id}/measures`, points(50, Date.UTC(2024, 1, 1) + 250_000 * i))).status).toBe(202);
      }
    })();
    const run = await gnocchi(['backup', '--data-dir', fixtureDir, '--to', backupFile]);
    pushing = false;
    await pushes;
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`backed up ${fixtureDir} to ${backupFile}`);

    expect((await gnocchi(['restore', '--from', backupFile, '--data-dir', restoredDir])).code).toBe(0);
    expect((await gnocchi(['check', '--data-dir', restoredDir])).code).toBe(0);
    const restored = await startServer(restoredDir);
    for (const [i, id] of metricIds.entries()) expect(await measures(restored, id)).toEqual(expected[i]);
    expect((await call(restored, 'GET', `/v1/metric/${busy.body.id}`)).status).toBe(200);
    await restored.stop();
  });

  it('keeps the measures accepted but not yet processed when the backup is taken', async () => {
    // A reorder window of an hour: nothing is processed before the backup.
    const held = await startServer(join(SCRATCH, 'held'), { GNOCCHI_REORDER_WINDOW: '3600000' });
    const metric = await call(held, 'POST', '/v1/metric', { archive_policy_name: 'low' });
    expect((await call(held, 'POST', `/v1/metric/${metric.body.id}/measures`, points(50))).status).toBe(202);
    const waiting = JSON.parse((await gnocchi(['stats', '--data-dir', held.dir, '--json'])).stdout);
    expect(waiting.incoming.segments).toBe(1);
    expect(waiting.incoming.bytes).toBeGreaterThan(50 * 16);
    const file = join(SCRATCH, 'backups', 'held.mdb');
    expect((await gnocchi(['backup', '--data-dir', held.dir, '--to', file])).code).toBe(0);
    const expected = (await measures(held, metric.body.id)) as { mean: unknown[] };
    expect(expected.mean.length).toBeGreaterThan(0);
    await held.stop();

    const dir = join(SCRATCH, 'held-restored');
    expect((await gnocchi(['restore', '--from', file, '--data-dir', dir])).code).toBe(0);
    const restored = await startServer(dir);
    expect(await measures(restored, metric.body.id)).toEqual(expected);
    await restored.stop();
  });

  it('backup refuses to overwrite its file unless --force', async () => {
    const refused = await gnocchi(['backup', '--data-dir', fixtureDir, '--to', backupFile]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('exists: give --force to replace it');
    expect((await gnocchi(['backup', '--data-dir', fixtureDir, '--to', backupFile, '--force'])).code).toBe(0);
  });

  it('restore refuses a directory that holds data unless --force', async () => {
    const refused = await gnocchi(['restore', '--from', backupFile, '--data-dir', restoredDir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('already holds data');
    expect((await gnocchi(['restore', '--from', backupFile, '--data-dir', restoredDir, '--force'])).code).toBe(0);
    expect((await gnocchi(['check', '--data-dir', restoredDir])).code).toBe(0);
  });

  it('restore refuses a file that is not a backup, leaving the directory as it was', async () => {
    const junk = join(SCRATCH, 'junk.mdb');
    writeFileSync(junk, Buffer.alloc(64 * 1024, 7));
    const run = await gnocchi(['restore', '--from', junk, '--data-dir', restoredDir, '--force']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('is not a gnocchi-ts backup: not an LMDB data file');
    expect((await gnocchi(['check', '--data-dir', restoredDir])).code).toBe(0);
  });
});

describe('gnocchi-ts compact', () => {
  it('refuses while a server has the directory open', async () => {
    const run = await gnocchi(['compact', '--data-dir', fixtureDir]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`is open in process ${fixture.child.pid}\\b`));
  });

  it('reports the bytes saved; the compacted directory answers the same and passes check', async () => {
    await fixture.stop();
    const dir = copyOf(fixtureDir, 'compacted');
    const run = await gnocchi(['compact', '--data-dir', dir]);
    expect(run.code).toBe(0);
    const [, before, after] = /\[(\d+) -> (\d+) bytes\]/.exec(run.stdout)!;
    expect(Number(after)).toBeLessThan(Number(before));
    expect(run.stdout).toMatch(/before, .* after, .* saved \(\d+\.\d%\)/);
    expect((await gnocchi(['check', '--data-dir', dir])).code).toBe(0);
    const compacted = await startServer(dir);
    for (const [i, id] of metricIds.entries()) expect(await measures(compacted, id)).toEqual(expected[i]);
    await compacted.stop();
  });
});

describe('gnocchi-ts check on damaged data', () => {
  const faults: { damage: string; change: (s: Storage) => void; fault: RegExp }[] = [
    {
      damage: "a sealed split's bytes",
      change: (s) => {
        const { key, value } = first(s.splits.getRange());
        const bytes = Buffer.from(value);
        bytes[bytes.length - 20]! ^= 0xff;
        s.splits.putSync(key, bytes);
      },
      fault: /^FAULT split-corrupt splits \[.*\]: split checksum mismatch/m,
    },
    {
      damage: 'a metric state deleted',
      change: (s) => s.states.removeSync(first(s.states.getKeys())),
      fault: /^FAULT state-missing metric_state ".*": the metric has sealed splits but no state/m,
    },
    {
      damage: 'a resource_values key removed',
      change: (s) => s.resourceValues.removeSync(first(s.resourceValues.getKeys())),
      fault: /^FAULT index-missing resource_values \[.*\]: no entry/m,
    },
    {
      damage: 'a resources_by_revision_start entry for no resource',
      change: (s) => s.resourcesByRevisionStart.putSync(['generic', 1, '00000000-0000-0000-0000-000000000000'], true),
      fault: /^FAULT index-extra resources_by_revision_start \["generic",1,"00000000-0000-0000-0000-000000000000"\]/m,
    },
    {
      damage: 'a metric whose policy is gone',
      change: (s) => s.policies.removeSync('fine'),
      fault: /^FAULT metric-policy-missing metrics ".*": archive policy fine does not exist/m,
    },
  ];

  it.each(faults)('exits 1 and names the fault for $damage', async ({ damage, change, fault }) => {
    await fixture.stop();
    const dir = copyOf(fixtureDir, `damaged-${damage.replace(/\W+/g, '-')}`);
    await withStorage(dir, change);
    const run = await gnocchi(['check', '--data-dir', dir]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(fault);
    expect(run.stdout).toMatch(/^check .*: \d+ faults? /m);
  });

  it('exits 2 on a directory that is not a data directory', async () => {
    const empty = join(SCRATCH, 'empty');
    mkdirSync(empty);
    const foreign = join(SCRATCH, 'foreign');
    const env = open({ path: join(foreign, 'db') });
    await env.put('something', 'else');
    await env.close();
    for (const dir of [empty, foreign, join(SCRATCH, 'missing')]) {
      const run = await gnocchi(['check', '--data-dir', dir]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('is not a gnocchi-ts data directory');
    }
    expect(existsSync(join(SCRATCH, 'missing'))).toBe(false);
  });
});

describe('progress', () => {
  it('prints periodic lines when stderr is not a terminal', async () => {
    await fixture.stop();
    const run = await gnocchi(['check', '--data-dir', fixtureDir], { GNOCCHI_PROGRESS_INTERVAL: '0' });
    expect(run.code).toBe(0);
    const lines = run.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines.slice(0, -1)) expect(line).toMatch(/^checking: \d+\/\d+ \(\d+\.\d%\), \d+\/s$/);
    expect(lines.at(-1)).toMatch(/^checking: (\d+)\/\1 \(100\.0%\), \d+\/s, finished in \d+\.\d s$/);
  });

  it('is logged by the server while it rebuilds a missing index at start', async () => {
    await fixture.stop();
    const dir = copyOf(fixtureDir, 'rebuild');
    await withStorage(dir, (s) => s.meta.removeSync('resourcesByValue'));
    const server = await startServer(dir, { GNOCCHI_PROGRESS_INTERVAL: '0' });
    await server.stop();
    expect(server.output()).toMatch(/^building resource_values: 1\/1 \(100\.0%\), \d+\/s, finished in /m);
    expect((await gnocchi(['check', '--data-dir', dir])).code).toBe(0);
  });

  it('is logged by the server while it upgrades a format 1 directory at start', async () => {
    await fixture.stop();
    const dir = copyOf(fixtureDir, 'format1');
    await withStorage(dir, (s) => {
      s.meta.putSync('format', 1);
      // Format 1's pending measures: per metric, n float64 timestamps (µs) then n values.
      const old = new Float64Array([Date.UTC(2024, 0, 2) * 1000, 42]);
      s.incoming.putSync([metricIds[1]!, 1e9], Buffer.from(old.buffer));
    });
    const server = await startServer(dir, { GNOCCHI_PROGRESS_INTERVAL: '0' });
    await server.stop();
    expect(server.output()).toMatch(/^upgrading to format \d+: (\d+)\/\1 \(100\.0%\), \d+\/s, finished in /m);
    expect((await gnocchi(['check', '--data-dir', dir])).code).toBe(0);
  });
});
