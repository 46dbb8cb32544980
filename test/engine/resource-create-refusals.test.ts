// Creating resources and metrics in one transaction (engine/resources.ts
// createAndExtend, create, update): a taken resource id or metric name
// anywhere in the write refuses it whole, with nothing of it stored, and
// the index stays usable for the next write.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkStorage } from '../../engine/check.js';
import { entryCount } from '../../engine/db-stats.js';
import type { LmdbIndexStore } from '../../engine/drivers/lmdb/index-store.js';
import { Engine } from '../../engine/engine.js';
import { NamedMetricAlreadyExists, ResourceAlreadyExists } from '../../engine/errors.js';
import type { MetricSpec, NewResource } from '../../engine/resources.js';

let dir: string;
let engine: Engine;
const lmdb = () => (engine.index as LmdbIndexStore).resources;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gnocchi-create-refusals-'));
  engine = await Engine.open({ dataDir: dir, defaultArchivePolicies: true, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });
  await lmdb().createType({ name: 'a', state: 'creating', attributes: [] });
});
afterEach(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

const id = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
const metrics = (...names: string[]) => new Map<string, MetricSpec>(names.map((n) => [n, { kind: 'new', archivePolicyName: 'low', unit: null }]));
const resource = (i: number, ...names: string[]): NewResource => ({
  id: id(i),
  originalResourceId: `r${i}`,
  creator: 'c',
  userId: null,
  projectId: null,
  endedAt: null,
  attrs: {},
  metrics: metrics(...names),
});

/** Entries of every database a creation writes. */
function counts(): number[] {
  const s = engine.storage;
  return [s.resources.db, s.metrics.db, s.resourcesByRevisionStart, s.resourceValues].map((db) => entryCount(db));
}

describe('a write naming something taken', () => {
  it.each([
    ['a resource id taken before', [resource(2, 'x'), resource(1, 'y')], [], ResourceAlreadyExists],
    ['a resource id twice in the write', [resource(2, 'x'), resource(2, 'y')], [], ResourceAlreadyExists],
    ['a metric name the resource extended has', [resource(2, 'x')], [{ id: id(1), metrics: metrics('z', 'm') }], NamedMetricAlreadyExists],
  ] as const)('is refused whole: %s', async (_case, created, extended, refusal) => {
    await lmdb().create('a', resource(1, 'm'));
    const before = counts();
    await expect(lmdb().createAndExtend('a', created, extended)).rejects.toThrow(refusal);
    expect(counts()).toEqual(before);
    expect(lmdb().get('a', id(2))).toBeUndefined();
    expect([...lmdb().metricsOf(id(1)).keys()]).toEqual(['m']);
    // The next write goes through.
    await lmdb().createAndExtend('a', [resource(3, 'x')], [{ id: id(1), metrics: metrics('z') }]);
    expect([...lmdb().metricsOf(id(1)).keys()]).toEqual(['m', 'z']);
    expect([...lmdb().metricsOf(id(3)).keys()]).toEqual(['x']);
    expect(checkStorage(engine.storage).faults).toEqual([]);
  });

  it('one by one too: create refuses a taken id, update a taken name', async () => {
    await lmdb().create('a', resource(1, 'm'));
    await expect(lmdb().create('a', resource(1, 'n'))).rejects.toThrow(ResourceAlreadyExists);
    await expect(lmdb().update('a', id(1), { metrics: metrics('m') }, true)).rejects.toThrow(NamedMetricAlreadyExists);
    expect([...lmdb().metricsOf(id(1)).keys()]).toEqual(['m']);
    expect(entryCount(engine.storage.metrics.db)).toBe(1);
  });
});
