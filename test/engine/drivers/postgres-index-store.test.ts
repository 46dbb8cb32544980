/**
 * What only the PostgreSQL index has: two nodes on one database (each
 * node's cached point reads follow the other's writes), PostgreSQL
 * stopping at once during writes (typed error meanwhile, no duplicate,
 * recovery without opening the store again), series drops that failed
 * tried again, and an older schema migrated.
 */
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import type { ArchivePolicy } from '../../../engine/archive-policy.js';
import { PostgresIndexStore } from '../../../engine/drivers/postgres/index-store.js';
import { EngineUnavailable } from '../../../engine/errors.js';
import { postgresMissing, usePgHarness } from './pg-harness.js';

const policy = (name: string, backWindow = 0): ArchivePolicy => ({
  name, backWindow, definition: [{ granularity: 60_000_000, points: 60, timespan: 3_600_000_000 }], aggregationMethods: ['mean'],
});
const ID = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
const resource = (i: number) => ({
  id: ID(i), originalResourceId: `r${i}`, creator: 'a:b', userId: null, projectId: null, startedAt: 1e15, endedAt: null, attrs: {},
});

describe.skipIf(postgresMissing !== undefined)('PostgresIndexStore', () => {
  const harness = usePgHarness();

  it('keeps two nodes\' cached point reads exact', async () => {
    const url = await harness.database();
    const deleted: string[] = [];
    const a = await PostgresIndexStore.open(url);
    const b = await PostgresIndexStore.open(url, { onMetricsDeleted: (ids) => void deleted.push(...ids) });
    try {
      await a.createPolicy(policy('p'));
      await a.create('generic', resource(1));
      await a.createMetric({ id: ID(10), name: 'cpu', unit: null, archivePolicyName: 'p', creator: 'a:b', resourceId: ID(1) });
      // Node b caches what it reads, absent records included.
      const reads = async () => ({
        policy: await b.getPolicy('p'),
        metric: await b.getMetric(ID(10)),
        missing: await b.getMetric(ID(11)),
        resource: await b.get('generic', ID(1)),
        named: await b.metricsOf(ID(1)),
        type: await b.findType('t'),
        rules: await b.listRules(),
      });
      const first = await reads();
      expect(first.metric?.name).toBe('cpu');
      expect(await reads()).toEqual(first);
      const writes: [string, () => Promise<unknown>, (r: Awaited<ReturnType<typeof reads>>) => void][] = [
        ['policy', () => a.updatePolicy('p', (x) => ({ ...x, backWindow: 5 })), (r) => expect(r.policy?.backWindow).toBe(5)],
        ['new metric', () => a.createMetric({ id: ID(11), name: null, unit: 'B', archivePolicyName: 'p', creator: 'a:b', resourceId: null }), (r) => expect(r.missing?.unit).toBe('B')],
        ['resource', () => a.update('generic', ID(1), { userId: 'u' }), (r) => expect(r.resource?.userId).toBe('u')],
        ['named metrics', () => a.update('generic', ID(1), { metrics: new Map([['mem', { kind: 'existing', id: ID(11) }]]) }, true), (r) => expect([...r.named.keys()]).toEqual(['cpu', 'mem'])],
        ['type', () => a.createType({ name: 't', state: 'creating', attributes: [] }), (r) => expect(r.type?.state).toBe('active')],
        ['rules', () => a.createRule({ name: 'all', metricPattern: '*', archivePolicyName: 'p' }), (r) => expect(r.rules.map((x) => x.name)).toEqual(['all'])],
        ['metric deleted', () => a.deleteMetric(ID(10)), (r) => expect(r.metric).toBeUndefined()],
      ];
      for (const [, write, check] of writes) {
        await reads();
        await write();
        // sync(): every notification committed before it is applied on b.
        await b.sync();
        check(await reads());
      }
      await b.delete('generic', ID(1));
      await a.sync();
      expect(await a.get('generic', ID(1))).toBeUndefined();
      expect(deleted).toEqual([ID(11)]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('survives an immediate stop of PostgreSQL during writes', async () => {
    const url = await harness.database();
    const store = await PostgresIndexStore.open(url);
    try {
      await store.createPolicy(policy('p'));
      await store.create('generic', resource(0));
      const created: number[] = [];
      const updated: number[] = [];
      const unavailable: number[] = [];
      let other = 0;
      let stop = false;
      const writer = (async () => {
        for (let i = 1; !stop; i++) {
          try {
            await store.create('generic', resource(i));
            created.push(i);
            await store.update('generic', ID(0), { userId: `u${i}` });
            updated.push(i);
          } catch (err) {
            if (err instanceof EngineUnavailable) unavailable.push(i);
            else other++;
            await new Promise((r) => setTimeout(r, 20));
          }
        }
      })();
      await new Promise((r) => setTimeout(r, 300));
      await harness.engine.down('SIGQUIT');
      await new Promise((r) => setTimeout(r, 500));
      await expect(store.getPolicy('nope')).rejects.toBeInstanceOf(EngineUnavailable);
      await harness.engine.start();
      // The pool and the listener come back by themselves.
      const deadline = Date.now() + 20_000;
      const recovered = () => updated.length > 0 && updated[updated.length - 1]! > (unavailable[unavailable.length - 1] ?? 0);
      while (Date.now() < deadline && !recovered()) {
        await new Promise((r) => setTimeout(r, 100));
      }
      stop = true;
      await writer;
      expect(recovered()).toBe(true);
      expect(other).toBe(0);
      expect(unavailable.length).toBeGreaterThan(0);
      const check = new pg.Client({ connectionString: url });
      await check.connect();
      try {
        const ids = (await check.query('SELECT id FROM resources')).rows.map((r) => r.id as string);
        expect(new Set(ids).size).toBe(ids.length);
        // Every acknowledged create is there; one whose COMMIT answer was lost may be too.
        for (const i of created) expect(ids).toContain(ID(i));
        expect(ids.length).toBeLessThanOrEqual(created.length + unavailable.length + 1);
        const revisions = (await check.query('SELECT revision, user_id FROM resource_history WHERE id = $1', [ID(0)])).rows;
        expect(new Set(revisions.map((r) => r.revision)).size).toBe(revisions.length);
        expect(revisions.length).toBeGreaterThanOrEqual(updated.length);
        expect(revisions.length).toBeLessThanOrEqual(updated.length + unavailable.length);
      } finally {
        await check.end();
      }
      // Cached reads are exact again once the listener is back.
      await store.sync();
      expect((await store.get('generic', ID(0)))?.userId).toBe(`u${updated[updated.length - 1]}`);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('tries a failed series drop again until it succeeds once, on any node', async () => {
    const url = await harness.database();
    const calls: string[][] = [];
    let failing = true;
    const a = await PostgresIndexStore.open(url, {
      onMetricsDeleted: (ids) => {
        calls.push([...ids].sort());
        if (failing) throw new EngineUnavailable('series store', 'down');
      },
    });
    const b = await PostgresIndexStore.open(url, { onMetricsDeleted: (ids) => void calls.push([...ids].sort()) });
    try {
      await a.createPolicy(policy('p'));
      await a.create('generic', resource(1));
      await a.createMetric({ id: ID(10), name: 'cpu', unit: null, archivePolicyName: 'p', creator: 'a:b', resourceId: ID(1) });
      await a.createMetric({ id: ID(11), name: null, unit: null, archivePolicyName: 'p', creator: 'a:b', resourceId: null });
      // The index's deletes commit and stand; the drops after them fail.
      await a.deleteMetric(ID(11));
      await a.delete('generic', ID(1));
      expect(await a.getMetric(ID(11))).toBeUndefined();
      expect(calls).toEqual([[ID(11)], [ID(10)]]);
      // Too recent for a retry yet: a drop may still be on its way.
      await b.retryDrops();
      expect(calls).toHaveLength(2);
      await b.retryDrops(0);
      expect(calls.slice(2)).toEqual([[ID(10), ID(11)]]);
      failing = false;
      await a.retryDrops(0);
      expect(calls).toHaveLength(3);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('migrates a version 1 schema, keeping its records', async () => {
    const url = await harness.database();
    const first = await PostgresIndexStore.open(url);
    await first.createPolicy(policy('kept'));
    await first.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query('DROP TABLE metrics_to_drop');
      await client.query('UPDATE schema_version SET version = 1');
      const store = await PostgresIndexStore.open(url);
      try {
        expect((await store.getPolicy('kept'))?.name).toBe('kept');
        await store.createMetric({ id: ID(20), name: null, unit: null, archivePolicyName: 'kept', creator: 'a:b', resourceId: null });
        await store.deleteMetric(ID(20));
      } finally {
        await store.close();
      }
      expect((await client.query('SELECT version FROM schema_version')).rows).toEqual([{ version: 2 }]);
      await client.query('UPDATE schema_version SET version = 3');
      await expect(PostgresIndexStore.open(url)).rejects.toThrow(/version 3; this release reads version 2 and older/);
    } finally {
      await client.end();
    }
  });
});
