// A metric named on a resource leaves out of its record what the resource
// holds (its name, and its creator when it is the resource's): every read
// must still answer the whole record, through each way a metric is named,
// moved, detached and deleted, and records stored whole (format 11) read as
// they were (engine/metric-records.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { checkStorage } from '../../engine/check.js';
import { Engine } from '../../engine/engine.js';
import type { ListMetricsOptions, MetricRecord } from '../../engine/index.js';
import { CorruptMetricRecord, UnresolvedMetricRecord, type StoredMetric } from '../../engine/metric-records.js';
import type { MetricSpec, NewResource } from '../../engine/resources.js';
import { FORMAT_VERSION } from '../../engine/storage.js';

let engine: Engine;
let dataDir: string;

/** The engine on dataDir, processing left to the tests. */
const open = () => Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-metric-records-'));
  engine = await open();
  await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: 1e6, points: 60, timespan: 60e6 }], aggregationMethods: ['mean'] });
});

afterEach(async () => {
  await engine.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const R1 = '00000000-0000-4000-8000-000000000001';
const R2 = '00000000-0000-4000-8000-000000000002';
const STANDALONE = '00000000-0000-4000-8000-0000000000aa';
const KEYSTONE_CREATOR = `${'a'.repeat(32)}:${'b'.repeat(32)}`;

const NEW: MetricSpec = { kind: 'new', archivePolicyName: 'p', unit: 'ns' };

const resource = (id: string, creator: string, metrics: [string, MetricSpec][]): NewResource => ({
  id,
  originalResourceId: id,
  creator,
  userId: null,
  projectId: null,
  endedAt: null,
  attrs: {},
  metrics: new Map(metrics),
});

/** The record as stored, without the id its key holds. */
function stored(id: string): Omit<StoredMetric, 'id'> {
  const { id: _, ...rest } = engine.storage.metrics.getStored(id)!;
  return rest;
}

const idOf = async (resourceId: string, name: string) => (await engine.index.metricsOf(resourceId)).get(name)!;

describe('metric records named on a resource', () => {
  const cases: {
    what: string;
    /** Writes, answers the metric's id. */
    write: () => Promise<string>;
    record: Omit<MetricRecord, 'id'>;
    storedAs: Partial<StoredMetric>;
  }[] = [
    {
      what: 'created with its resource',
      write: async () => {
        await engine.index.create('generic', resource(R1, KEYSTONE_CREATOR, [['cpu', NEW]]));
        return idOf(R1, 'cpu');
      },
      record: { name: 'cpu', unit: 'ns', archivePolicyName: 'p', creator: KEYSTONE_CREATOR, resourceId: R1 },
      storedAs: { name: true, creator: true },
    },
    {
      what: 'added to an existing resource by an update',
      write: async () => {
        await engine.index.create('generic', resource(R1, 'x', []));
        await engine.index.update('generic', R1, { metrics: new Map([['mem', NEW]]) }, true);
        return idOf(R1, 'mem');
      },
      record: { name: 'mem', unit: 'ns', archivePolicyName: 'p', creator: 'x', resourceId: R1 },
      storedAs: { name: true, creator: true },
    },
    {
      what: 'created on a resource by another creator (POST /v1/metric)',
      write: async () => {
        await engine.index.create('generic', resource(R1, 'x', []));
        await engine.index.createMetric({ id: STANDALONE, name: 'disk', unit: null, archivePolicyName: 'p', creator: 'y', resourceId: R1 });
        return STANDALONE;
      },
      record: { name: 'disk', unit: null, archivePolicyName: 'p', creator: 'y', resourceId: R1 },
      storedAs: { name: true, creator: 'y' },
    },
    {
      what: 'created without a resource',
      write: async () => {
        await engine.index.createMetric({ id: STANDALONE, name: 'disk', unit: null, archivePolicyName: 'p', creator: 'y', resourceId: null });
        return STANDALONE;
      },
      record: { name: 'disk', unit: null, archivePolicyName: 'p', creator: 'y', resourceId: null },
      storedAs: { name: 'disk', creator: 'y' },
    },
    {
      what: 'moved to another resource under another name',
      write: async () => {
        await engine.index.create('generic', resource(R1, 'x', [['cpu', NEW]]));
        const id = await idOf(R1, 'cpu');
        await engine.index.create('generic', resource(R2, 'x', [['load', { kind: 'existing', id }]]));
        return id;
      },
      record: { name: 'load', unit: 'ns', archivePolicyName: 'p', creator: 'x', resourceId: R2 },
      storedAs: { name: true, creator: true },
    },
    {
      what: 'detached by an update naming other metrics',
      write: async () => {
        await engine.index.create('generic', resource(R1, 'x', [['cpu', NEW]]));
        const id = await idOf(R1, 'cpu');
        await engine.index.update('generic', R1, { metrics: new Map([['mem', NEW]]) });
        return id;
      },
      record: { name: 'cpu', unit: 'ns', archivePolicyName: 'p', creator: 'x', resourceId: null },
      storedAs: { name: 'cpu', creator: 'x' },
    },
    {
      what: 'renamed on its resource by an update',
      write: async () => {
        await engine.index.create('generic', resource(R1, 'x', [['cpu', NEW]]));
        const id = await idOf(R1, 'cpu');
        await engine.index.update('generic', R1, { metrics: new Map([['cpu.renamed', { kind: 'existing', id }]]) });
        return id;
      },
      record: { name: 'cpu.renamed', unit: 'ns', archivePolicyName: 'p', creator: 'x', resourceId: R1 },
      storedAs: { name: true, creator: true },
    },
  ];

  it.each(cases)('$what: read whole, stored with what its resource holds left out', async ({ write, record, storedAs }) => {
    const id = await write();
    expect(engine.storage.metrics.get(id)).toEqual({ id, ...record });
    expect(await engine.index.getMetric(id)).toEqual({ id, ...record });
    expect(await engine.index.listMetrics({ filter: { name: record.name! }, sorts: [], limit: 10 })).toEqual([{ id, ...record }]);
    expect(stored(id)).toMatchObject(storedAs);
    expect(checkStorage(engine.storage).faults).toEqual([]);
  });

  it.each<[string, Partial<ListMetricsOptions>, number]>([
    ['in id order', {}, 1],
    ['by unit, descending', { sorts: [{ key: 'unit', direction: 'desc' }] }, 1],
    ['filtered by name', { filter: { name: 'mem' } }, 3],
    ['by creator', { sorts: [{ key: 'creator', direction: 'asc' }] }, 3],
  ])('are listed %s whole, their resource read for the page alone unless a filter or an order needs it', async (_, options, reads) => {
    await engine.index.create('generic', resource(R1, 'x', [['cpu', NEW], ['mem', NEW], ['disk', NEW]]));
    const all = await engine.index.listMetrics({ filter: {}, sorts: [], limit: 10 });
    const owner = vi.spyOn(engine.storage.resources, 'owner');
    const page = await engine.index.listMetrics({ filter: {}, sorts: [], limit: 1, ...options });
    expect(page).toHaveLength(1);
    expect(all).toContainEqual(page[0]);
    expect(page[0]).toMatchObject({ creator: 'x', resourceId: R1 });
    expect(owner).toHaveBeenCalledTimes(reads);
  });

  it('saves the bytes of the name and the creator', async () => {
    const metric: MetricRecord = { id: STANDALONE, name: 'cpu.usage@region=r0', unit: null, archivePolicyName: 'p60', creator: KEYSTONE_CREATOR, resourceId: R1 };
    const size = async (ownerCreator: string | undefined) => {
      await engine.storage.metrics.put(STANDALONE, metric, ownerCreator);
      return engine.storage.metrics.db.getBinary(STANDALONE)!.length;
    };
    const whole = await size(undefined);
    // Each left out costs a byte (msgpack's true) instead of its string and its header.
    expect(whole - (await size(KEYSTONE_CREATOR))).toBe(19 + 1 + 65 + 2 - 2);
    expect(whole - (await size('another'))).toBe(19 + 1 - 1);
  });

  it('hold their archive policy\'s code, and read a record of format 13 that holds its name', async () => {
    const policy = 'ceilometer-low-rate';
    await engine.index.createPolicy({ name: policy, backWindow: 0, definition: [{ granularity: 1e6, points: 60, timespan: 60e6 }], aggregationMethods: ['mean'] });
    await engine.index.create('generic', resource(R1, 'x', [['cpu', { ...NEW, archivePolicyName: policy }]]));
    const id = await idOf(R1, 'cpu');
    const coded = engine.storage.metrics.db.getBinary(id)!.length;
    const metric = engine.storage.metrics.get(id)!;
    expect(metric.archivePolicyName).toBe(policy);
    // Format 13's record: the policy's name.
    engine.storage.metrics.db.putSync(id, engine.storage.metrics.getStored(id)!);
    expect(engine.storage.metrics.db.getBinary(id)!.length - coded, 'the name and its header, but a byte').toBe(policy.length);
    await engine.close();
    engine = await open();
    expect(await engine.index.getMetric(id)).toEqual(metric);
    expect(await engine.index.listMetrics({ filter: { archive_policy_name: policy }, sorts: [], limit: 10 })).toEqual([metric]);
    expect(checkStorage(engine.storage).faults).toEqual([]);
    engine.storage.metrics.db.putSync(id, { ...engine.storage.metrics.getStored(id)!, archivePolicyName: 0x7f });
    expect(() => engine.storage.metrics.get(id)).toThrow(CorruptMetricRecord);
  });

  it('are gone with their resource, whose deletion reads them first', async () => {
    await engine.index.create('generic', resource(R1, 'x', [['cpu', NEW], ['mem', NEW]]));
    const ids = [...(await engine.index.metricsOf(R1)).values()];
    // A process that has not read them yet.
    await engine.close();
    engine = await open();
    await engine.index.delete('generic', R1);
    for (const id of ids) expect(engine.storage.metrics.doesExist(id)).toBe(false);
    expect(checkStorage(engine.storage).faults).toEqual([]);
  });

  /** A resource's metric whose record is stored whole, as before format 12. */
  const storedWhole = async (): Promise<{ id: string; whole: MetricRecord }> => {
    await engine.index.create('generic', resource(R1, 'x', [['cpu', NEW]]));
    const id = await idOf(R1, 'cpu');
    const whole = engine.storage.metrics.get(id)!;
    engine.storage.metrics.db.putSync(id, whole);
    return { id, whole };
  };

  it('read a record stored whole (format 11) as it was', async () => {
    const { id, whole } = await storedWhole();
    expect(stored(id)).toMatchObject({ name: 'cpu', creator: 'x' });
    expect(engine.storage.metrics.get(id)).toEqual(whole);
    expect(checkStorage(engine.storage).faults).toEqual([]);
  });

  it('of a format 11 directory: stamped with the current format on open, read as they were, then stored the new way as renamed', async () => {
    const { id, whole } = await storedWhole();
    engine.storage.meta.putSync('format', 11);
    await engine.close();
    engine = await open();
    expect(engine.storage.meta.get('format')).toBe(FORMAT_VERSION);
    expect(stored(id)).toMatchObject({ name: 'cpu', creator: 'x' });
    expect(await engine.index.getMetric(id)).toEqual(whole);
    await engine.index.update('generic', R1, { metrics: new Map([['cpu.renamed', { kind: 'existing', id }]]) });
    expect(stored(id)).toMatchObject({ name: true, creator: true });
    expect(engine.storage.metrics.get(id)).toEqual({ ...whole, name: 'cpu.renamed' });
  });

  it('refuse a read the resource cannot answer, which check reports', async () => {
    await engine.index.create('generic', resource(R1, 'x', [['cpu', NEW]]));
    const id = await idOf(R1, 'cpu');
    engine.storage.resources.setMetrics(R1, new Map());
    expect(() => engine.storage.metrics.get(id)).toThrow(UnresolvedMetricRecord);
    expect(checkStorage(engine.storage).faults).toEqual([expect.objectContaining({ kind: 'index-missing', db: 'resources', key: [R1, null] })]);
  });
});
