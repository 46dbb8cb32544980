/**
 * The PostgreSQL index's node-local cache of search answers (list()): two
 * nodes on one database, every write that changes a search seen at once by
 * the writer and after sync() by the other node; searches that cannot be
 * kept are not; nothing served while the listener is down; a fill that
 * raced an invalidation not kept; the bounds in rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { ANSWER_ROWS_MAX, ANSWERS_ROWS, CHANNEL, IndexCache } from '../../../engine/drivers/postgres/cache.js';
import { PostgresIndexStore } from '../../../engine/drivers/postgres/index-store.js';
import { EngineError } from '../../../engine/errors.js';
import { DEFAULT_RESOURCE_SORT, parseResourceSorts, type ListResourcesOptions, type NewResource } from '../../../engine/resources.js';
import type { ResourceTypeRecord } from '../../../engine/resource-type.js';
import type { QueryNode } from '../../../formats/resource-query.js';
import { postgresMissing, usePgHarness } from './pg-harness.js';
import { until } from './until.js';

const ID = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
const SERVER: ResourceTypeRecord = {
  name: 'server',
  state: 'creating',
  attributes: [
    { name: 'flavor', type: 'string', required: true, minLength: 0, maxLength: 255 },
    { name: 'vcpus', type: 'number', required: false, min: null, max: null },
  ],
};
const EMPTY: ResourceTypeRecord = { name: 'empty', state: 'creating', attributes: [] };
const T0 = Date.UTC(2024, 0, 1) * 1000;
const resource = (i: number, attrs: Record<string, string | number> = {}): NewResource => ({
  id: ID(i), originalResourceId: `r${i}`, creator: 'a:b', userId: null, projectId: null, startedAt: T0 + i, endedAt: null, attrs,
});
const eq = (field: string, value: string): QueryNode => ({ kind: 'compare', op: 'eq', field, value });
const sorts = (history: boolean) => parseResourceSorts(DEFAULT_RESOURCE_SORT, SERVER, history);
const search = (filter?: QueryNode, more: Partial<ListResourcesOptions> = {}): ListResourcesOptions => ({
  filter, history: false, sorts: sorts(more.history ?? false), limit: 100, ...more,
});

/** The searches each node repeats, by name: [type, options]. */
const SEARCHES: Record<string, [string, ListResourcesOptions]> = {
  server: ['server', search()],
  'server small': ['server', search(eq('flavor', 'small'))],
  'server history': ['server', search(undefined, { history: true })],
  'server after a marker': ['server', search(undefined, { marker: ID(1) })],
  generic: ['generic', search()],
  'generic history': ['generic', search(undefined, { history: true })],
  'empty type': ['empty', search()],
};

/** Each search's answer as text (or its typed error), to compare between nodes. */
async function reads(s: PostgresIndexStore): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [name, [type, options]] of Object.entries(SEARCHES)) {
    try {
      out[name] = (await s.list(type, options)).map((r) => `${r.id.slice(-2)}@${r.revision} ${r.type} ${r.userId} ${JSON.stringify(r.attrs)}`);
    } catch (err) {
      if (!(err instanceof EngineError)) throw err;
      out[name] = err.constructor.name;
    }
  }
  return out;
}

describe.skipIf(postgresMissing !== undefined)('PostgreSQL index search cache', () => {
  const harness = usePgHarness();

  it('keeps the searches of the writer and of another node exact through every write that changes them', async () => {
    const url = await harness.database();
    const a = await PostgresIndexStore.open(url);
    const b = await PostgresIndexStore.open(url);
    try {
      await a.createType(SERVER);
      await a.createType(EMPTY);
      await a.create('server', resource(1, { flavor: 'small', vcpus: 1 }));
      await a.create('server', resource(2, { flavor: 'large', vcpus: 2 }));
      await a.create('generic', resource(3));
      const writes: [string, () => Promise<unknown>][] = [
        ['create', () => a.create('server', resource(4, { flavor: 'small' }))],
        ['update, closing a revision', () => a.update('server', ID(1), { attrs: { flavor: 'large' } })],
        ['update through generic', () => a.update('generic', ID(2), { userId: 'u' })],
        ['create generic', () => a.create('generic', resource(5))],
        ['bulk create', () => a.createAndExtend('server', [resource(6, { flavor: 'small' })], [])],
        ['delete', () => a.delete('server', ID(4))],
        ['delete through generic', () => a.delete('generic', ID(6))],
        ['delete matching', () => a.deleteMatching('generic', eq('id', ID(5)))],
        ['add attribute', () => a.updateTypeAttributes('server', [{ def: { name: 'zone', type: 'string', required: false, minLength: 0, maxLength: 255 }, fill: 'z1' }], [])],
        ['remove attribute', () => a.updateTypeAttributes('server', [], ['zone'])],
        ['delete type', () => a.deleteType('empty')],
        ['create type', () => a.createType(EMPTY)],
      ];
      for (const [name, write] of writes) {
        const before = await reads(b);
        // The second time from b's cache, as from a's.
        expect(await reads(b), name).toEqual(before);
        expect(await reads(a), name).toEqual(before);
        await write();
        const fresh = await PostgresIndexStore.open(url);
        const truth = await reads(fresh).finally(() => fresh.close());
        expect(truth, `${name} changes a search`).not.toEqual(before);
        expect(await reads(a), `${name}, on the writer`).toEqual(truth);
        await b.sync();
        expect(await reads(b), `${name}, on another node`).toEqual(truth);
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('keeps a search unless it reads the clock or pages after a record of another type', async () => {
    const url = await harness.database();
    const store = await PostgresIndexStore.open(url);
    const raw = new pg.Client({ connectionString: url });
    await raw.connect();
    try {
      await store.createType(SERVER);
      // First in the default order (revision_start): every server resource is after it.
      await store.create('generic', resource(3));
      await store.create('server', resource(1, { flavor: 'small' }));
      await store.create('server', resource(2, { flavor: 'small' }));
      const cases: [string, string, ListResourcesOptions, boolean][] = [
        ['a filter', 'server', search(eq('flavor', 'small')), true],
        ['a page after a record of its type', 'server', search(undefined, { marker: ID(1) }), true],
        ['generic, after a record of any type', 'generic', search(undefined, { marker: ID(1) }), true],
        ['a time relative to now', 'server', search({ kind: 'compare', op: 'le', field: 'started_at', value: 'now' }), false],
        ['a time relative to now, in a list', 'server', search({ kind: 'compare', op: 'in', field: 'started_at', value: ['2024-01-01T00:00:00.000001+00:00', '-1 day'] }), false],
        ['a page after a record of another type', 'server', search(undefined, { marker: ID(3) }), false],
      ];
      for (const [n, [name, type, options, kept]] of cases.entries()) {
        const users = async () => (await store.list(type, options)).map((r) => r.userId);
        const before = await users();
        expect(before.length, name).toBeGreaterThan(0);
        await users();
        // Behind the cache's back: no notification.
        await raw.query('UPDATE resources SET user_id = $1', [`raw${n}`]);
        expect(await users(), name).toEqual(kept ? before : before.map(() => `raw${n}`));
      }
    } finally {
      await raw.end();
      await store.close();
    }
  });

  it('serves no search from the cache, nor fills it, while the listener is down', async () => {
    const url = await harness.database();
    const store = await PostgresIndexStore.open(url);
    const raw = new pg.Client({ connectionString: url });
    await raw.connect();
    const database = (await raw.query('SELECT current_database() AS d')).rows[0]!.d as string;
    // A database's connections are allowed or not from another one.
    const admin = new pg.Client({ connectionString: harness.engine.url });
    await admin.connect();
    const allow = (on: boolean) => admin.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS ${on}`);
    try {
      await store.create('generic', resource(1));
      const user = async () => (await store.list('generic', search()))[0]!.userId;
      await user();
      await user();
      // The listener cannot come back; the pool's open connection still answers.
      await allow(false);
      await raw.query("UPDATE resources SET user_id = 'u1'");
      await raw.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'", [database]);
      await until(async () => (await user()) === 'u1', 5_000);
      for (const u of ['u2', 'u3']) {
        await raw.query('UPDATE resources SET user_id = $1', [u]);
        expect(await user()).toBe(u);
      }
    } finally {
      await allow(true);
      await admin.end();
      await raw.end();
      await store.close();
    }
  });

  describe('IndexCache answers', () => {
    let cache: IndexCache;
    let raw: pg.Client;
    beforeAll(async () => {
      const url = await harness.database();
      cache = new IndexCache(url);
      await cache.start();
      raw = new pg.Client({ connectionString: url });
      await raw.connect();
    });
    afterAll(async () => {
      await raw?.end();
      await cache?.close();
    });
    /** Another node's write: its notification applied here once it returns. */
    const notified = async (...keys: string[]) => {
      const all = keys.length === 1 && keys[0] === '*';
      await raw.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify({ node: 'other', seq: 1, keys: all ? '*' : keys })]);
      await cache.sync();
    };
    const answer = (group: string, key: string, value: number, rows = 1) => cache.answer(group, key, async () => ({ value, rows }));

    it('keeps no fill that raced an invalidation, and drops a group with its key', async () => {
      await notified('*');
      const raced = await cache.answer('s:t', 'k', async () => {
        await notified('s:t');
        return { value: 1, rows: 1 };
      });
      expect(raced).toBe(1);
      expect(await answer('s:t', 'k', 2)).toBe(2);
      expect(await answer('s:t', 'k', 3)).toBe(2);
      expect(await answer('s:u', 'k', 4)).toBe(4);
      await notified('s:t');
      expect([await answer('s:t', 'k', 5), await answer('s:u', 'k', 6)]).toEqual([5, 4]);
    });

    it('keeps answers up to ANSWER_ROWS_MAX rows, ANSWERS_ROWS in all, the least recently used out first', async () => {
      await notified('*');
      const sizes: [number, boolean][] = [[ANSWER_ROWS_MAX, true], [ANSWER_ROWS_MAX + 1, false], [0, true]];
      for (const [rows, kept] of sizes) {
        await answer('s:t', `${rows}`, 1, rows);
        expect(await answer('s:t', `${rows}`, 2, rows), `${rows} rows`).toBe(kept ? 1 : 2);
      }
      await notified('*');
      const full = ANSWERS_ROWS / ANSWER_ROWS_MAX;
      for (let i = 0; i < full; i++) await answer('s:t', `k${i}`, i, ANSWER_ROWS_MAX);
      expect(cache.answerSize).toEqual({ answers: full, rows: ANSWERS_ROWS });
      // k0 used again: k1 is the least recently used.
      expect(await answer('s:t', 'k0', -1, ANSWER_ROWS_MAX)).toBe(0);
      await answer('s:u', 'new', 0, ANSWER_ROWS_MAX);
      expect(cache.answerSize).toEqual({ answers: full, rows: ANSWERS_ROWS });
      expect([await answer('s:t', 'k0', -1), await answer('s:t', 'k2', -1), await answer('s:t', 'k1', -1, ANSWER_ROWS_MAX + 1)]).toEqual([0, 2, -1]);
    });
  });
});
