/**
 * The engines harness itself, through the real clients the cluster drivers use (pg, ioredis): each
 * engine answers, keeps what it acknowledged across the restarts the failure tests will inflict, stops
 * without leaving a process or a directory behind, and two of a kind run side by side.
 */
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { engineMissing, isRunning, startPostgres, startRedis, type DownSignal, type Engine, type EngineKind } from './engines.js';

/** What a test needs of an engine: a write it acknowledges, and a read of everything acknowledged so far. */
interface Client {
  write(engine: Engine, value: string): Promise<void>;
  read(engine: Engine): Promise<string[]>;
}

async function withPg<T>(engine: Engine, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: engine.url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

async function withRedis<T>(engine: Engine, use: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(engine.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  await client.connect();
  try {
    return await use(client);
  } finally {
    client.disconnect();
  }
}

/** Committed rows of a table. */
const postgresClient: Client = {
  write: (engine, value) =>
    withPg(engine, async (c) => {
      await c.query('CREATE TABLE IF NOT EXISTS harness (id serial PRIMARY KEY, value text NOT NULL)');
      await c.query('INSERT INTO harness (value) VALUES ($1)', [value]);
    }),
  read: (engine) =>
    withPg(engine, async (c) => {
      const exists = await c.query(`SELECT to_regclass('harness') IS NOT NULL AS found`);
      if (!exists.rows[0].found) return [];
      return (await c.query<{ value: string }>('SELECT value FROM harness ORDER BY id')).rows.map((r) => r.value);
    }),
};

/** Entries of a stream, the shape incoming measures will take. */
const redisClient: Client = {
  write: (engine, value) =>
    withRedis(engine, async (r) => {
      await r.xadd('harness', '*', 'value', value);
    }),
  read: (engine) => withRedis(engine, async (r) => (await r.xrange('harness', '-', '+')).map(([, fields]) => fields[1]!)),
};

interface Down {
  label: string;
  down: (engine: Engine) => Promise<void>;
}

const downWith = (signal: DownSignal, what: string): Down => ({ label: `down(${signal}), ${what}`, down: (e) => e.down(signal) });
const KILL9: Down = { label: 'kill9(), a crash of every process', down: (e) => e.kill9() };

const ENGINES: { kind: EngineKind; start: () => Promise<Engine>; client: Client; downs: Down[] }[] = [
  {
    kind: 'postgresql',
    start: startPostgres,
    client: postgresClient,
    downs: [downWith('SIGINT', 'fast shutdown'), downWith('SIGQUIT', 'immediate stop'), KILL9],
  },
  { kind: 'redis', start: startRedis, client: redisClient, downs: [downWith('SIGTERM', 'shutdown'), KILL9] },
];

/** Whether something accepts TCP connections on the loopback port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

for (const { kind, start, client, downs } of ENGINES) {
  const missing = engineMissing(kind);
  if (missing !== undefined) console.warn(missing);

  describe.skipIf(missing !== undefined)(missing ?? `${kind} from the harness`, { timeout: 60_000 }, () => {
    let engine: Engine;
    beforeAll(async () => {
      engine = await start();
    });
    afterAll(() => engine?.stop());

    test('answers its client on the loopback port it was given', async () => {
      expect(engine.url).toContain(`127.0.0.1:${engine.port}`);
      expect(await listening(engine.port)).toBe(true);
      expect(engine.pids()).toContain(engine.pid);
      expect(engine.memory().rssKiB).toBeGreaterThan(0);
      await client.write(engine, 'first');
      expect(await client.read(engine)).toContain('first');
    });

    test.each(downs)('$label: leaves no process and no listener; start() brings back every acknowledged write on the same port', async ({ label, down }) => {
      await client.write(engine, `before ${label}`);
      const before = await client.read(engine);
      const { port, url } = engine;
      const pids = engine.pids();

      await down(engine);
      expect(engine.pid).toBeUndefined();
      expect(pids.filter(isRunning)).toEqual([]);
      expect(await listening(port)).toBe(false);

      await engine.start();
      expect([engine.port, engine.url]).toEqual([port, url]);
      expect(await client.read(engine)).toEqual(before);
    });

    test('restart() comes back as new processes with the same data', async () => {
      await client.write(engine, 'before restart');
      const before = await client.read(engine);
      const pid = engine.pid;
      await engine.restart();
      expect(engine.pid).not.toBe(pid);
      expect(await client.read(engine)).toEqual(before);
    });

    test('a second instance runs side by side on another port, with its own data', async () => {
      const other = await start();
      try {
        expect(other.port).not.toBe(engine.port);
        expect(other.dir).not.toBe(engine.dir);
        await client.write(other, 'other');
        expect(await client.read(other)).toEqual(['other']);
        expect(await client.read(engine)).not.toContain('other');
      } finally {
        await other.stop();
      }
    });

    test('stop() leaves no process and no directory, and may be called again', async () => {
      const doomed = await start();
      const pids = doomed.pids();
      expect(pids.length).toBeGreaterThan(0);
      await doomed.stop();
      expect(pids.filter(isRunning)).toEqual([]);
      expect(existsSync(doomed.dir)).toBe(false);
      expect(await listening(doomed.port)).toBe(false);
      await doomed.stop();
      await expect(doomed.start()).rejects.toThrow(/stopped for good/);
    });
  });
}

/** Creator pids of the System V shared memory segments (columns: key shmid perms size cpid ...). */
function shmCreators(): number[] {
  return readFileSync('/proc/sysvipc/shm', 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => Number(line.trim().split(/\s+/)[4]));
}

const pgMissing = engineMissing('postgresql');
describe.skipIf(pgMissing !== undefined)(pgMissing ?? 'PostgreSQL after a crash', { timeout: 60_000 }, () => {
  test('stop() after kill9() also removes the shared memory segment the killed postmaster left', async () => {
    const engine = await startPostgres();
    const postmaster = engine.pid!;
    try {
      await engine.kill9();
      expect(shmCreators()).toContain(postmaster);
    } finally {
      await engine.stop();
    }
    expect(shmCreators()).not.toContain(postmaster);
  });
});
