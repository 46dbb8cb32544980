// The index keeps decoded metric records and archive policies in memory
// (engine/index.ts): what it answers must stay what LMDB holds through every
// write of a record, including a write that fails and rolls back.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Engine } from '../../engine/engine.js';
import type { MetricRecord } from '../../engine/index.js';
import type { MetricSpec, NewResource } from '../../engine/resources.js';

let engine: Engine;
let dataDir: string;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-metric-cache-'));
  engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });
  await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: 1e6, points: 60, timespan: 60e6 }], aggregationMethods: ['mean'] });
});

afterEach(async () => {
  await engine.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const resource = (id: string, metrics: [string, MetricSpec][]): NewResource => ({
  id,
  originalResourceId: id,
  creator: 'x',
  userId: null,
  projectId: null,
  endedAt: null,
  attrs: {},
  metrics: new Map(metrics),
});

/** The cached answer, and what a fresh read of the stored record gives. */
async function lookups(id: string): Promise<[MetricRecord | undefined, unknown]> {
  return [await engine.index.getMetric(id), engine.storage.metrics.get(id)];
}

describe('cached metric records', () => {
  it('follow a metric attached to, detached from and deleted with resources', async () => {
    const r1 = '00000000-0000-4000-8000-000000000001';
    const r2 = '00000000-0000-4000-8000-000000000002';
    await engine.index.create('generic', resource(r1, [['cpu', { kind: 'new', archivePolicyName: 'p', unit: null }]]));
    const id = (await engine.index.metricsOf(r1)).get('cpu')!;
    expect(await engine.index.getMetric(id)).toMatchObject({ resourceId: r1, name: 'cpu' });

    await engine.index.create('generic', resource(r2, [['load', { kind: 'existing', id }]]));
    let [cached, stored] = await lookups(id);
    expect(cached).toMatchObject({ resourceId: r2, name: 'load' });
    expect(cached).toEqual(stored);

    await engine.index.update('generic', r2, { metrics: new Map() });
    [cached, stored] = await lookups(id);
    expect(cached).toMatchObject({ resourceId: null });
    expect(cached).toEqual(stored);

    await engine.index.update('generic', r1, { metrics: new Map([['cpu', { kind: 'existing', id }]]) });
    await engine.index.delete('generic', r1);
    expect(await lookups(id)).toEqual([undefined, undefined]);
  });

  it('are left as stored by a resource write that fails', async () => {
    const r = '00000000-0000-4000-8000-000000000003';
    await engine.index.create('generic', resource(r, [['b', { kind: 'new', archivePolicyName: 'p', unit: null }]]));
    const m = await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null });
    await engine.index.getMetric(m.id);
    // Attaches m as `a`, reads it again (as changed) for `b`, which another
    // metric holds: the write fails and is rolled back.
    const metrics = new Map<string, MetricSpec>([['a', { kind: 'existing', id: m.id }], ['b', { kind: 'existing', id: m.id }]]);
    await expect(engine.index.update('generic', r, { metrics }, true)).rejects.toThrow();
    const [cached, stored] = await lookups(m.id);
    expect(cached).toEqual(m);
    expect(stored).toEqual(m);
  });

  it('are the records a resource write stored, kept once it committed: read back without reading LMDB', async () => {
    const r = '00000000-0000-4000-8000-000000000004';
    const id = engine.newMetricId();
    await engine.index.createAndExtend('generic', [resource(r, [['cpu', { kind: 'new', archivePolicyName: 'p', unit: null, id }]])], []);
    const reads = vi.spyOn(engine.storage.metrics, 'get');
    const cached = await engine.index.getMetric(id);
    expect(reads).not.toHaveBeenCalled();
    reads.mockRestore();
    expect(cached).toStrictEqual(engine.storage.metrics.get(id));
  });

  it('are not kept from a resource write that fails, and read back as stored when kept', async () => {
    const taken = '00000000-0000-4000-8000-000000000005';
    const r = '00000000-0000-4000-8000-000000000006';
    await engine.index.create('generic', resource(taken, []));
    const lost = engine.newMetricId();
    const created = [resource(r, [['a', { kind: 'new', archivePolicyName: 'p', unit: null, id: lost }]]), resource(taken, [])];
    await expect(engine.index.createAndExtend('generic', created, [])).rejects.toThrow();
    expect(await lookups(lost)).toEqual([undefined, undefined]);

    // A field left undefined (not what the type says) reads back as it was.
    const id = engine.newMetricId();
    const unit = undefined as unknown as null;
    await engine.index.createAndExtend('generic', [resource(r, [['b', { kind: 'new', archivePolicyName: 'p', unit, id }]])], []);
    const [cached, stored] = await lookups(id);
    expect(cached).toHaveProperty('unit', undefined);
    expect(cached).toStrictEqual(stored);
  });

  it('have a version that moves on after every write that may change them, and none while one is pending', async () => {
    const version = () => engine.index.metricRecordsVersion!();
    const before = version();
    expect(before).toBeTypeOf('number');
    const m = await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null });
    const created = version();
    expect(created).not.toBe(before);
    const deleting = engine.deleteMetric(m.id);
    expect(version()).toBeUndefined();
    await deleting;
    expect([undefined, before, created]).not.toContain(version());
    const failed = version();
    await expect(engine.index.update('generic', '00000000-0000-4000-8000-000000000007', { metrics: new Map() })).rejects.toThrow();
    expect(version()).not.toBe(failed);
  });

  it('forget a deleted metric, read again and again while the deletion commits', async () => {
    const m = await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null });
    expect(await engine.index.getMetric(m.id)).toEqual(m);
    let deleted = false;
    const deleting = engine.deleteMetric(m.id).then(() => (deleted = true));
    while (!deleted) {
      await engine.index.getMetric(m.id);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await deleting;
    expect(await lookups(m.id)).toEqual([undefined, undefined]);
  });
});

describe('cached archive policies', () => {
  const lookup = async (name: string) => [await engine.index.getPolicy(name), engine.storage.policies.get(name)];

  it('follow updates, a refused update and a deletion, read again and again while each commits', async () => {
    const readWhile = async (write: Promise<unknown>) => {
      let done = false;
      const settled = write.then(() => (done = true), () => (done = true));
      while (!done) {
        await engine.index.getPolicy('p');
        await new Promise((resolve) => setImmediate(resolve));
      }
      await settled;
      return write;
    };
    expect(await engine.index.getPolicy('p')).toMatchObject({ backWindow: 0 });
    await readWhile(engine.index.updatePolicy('p', (current) => ({ ...current, backWindow: 2 })));
    let [cached, stored] = await lookup('p');
    expect(cached).toMatchObject({ backWindow: 2 });
    expect(cached).toEqual(stored);

    const refused = readWhile(engine.index.updatePolicy('p', () => {
      throw new Error('refused');
    }));
    await expect(refused).rejects.toThrow('refused');
    [cached, stored] = await lookup('p');
    expect(cached).toMatchObject({ backWindow: 2 });
    expect(cached).toEqual(stored);

    await readWhile(engine.index.deletePolicy('p'));
    expect(await lookup('p')).toEqual([undefined, undefined]);
    await engine.index.createPolicy({ name: 'p', backWindow: 5, definition: [{ granularity: 1e6, points: 60, timespan: 60e6 }], aggregationMethods: ['max'] });
    expect((await lookup('p'))[0]).toMatchObject({ backWindow: 5, aggregationMethods: ['max'] });
  });
});
