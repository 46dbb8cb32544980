/**
 * The LMDB index (engine/index.ts, engine/resources.ts) seen through the
 * IndexStore interface, for the contract suite: the reference the
 * PostgreSQL index is held to.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Index } from '../../../engine/index.js';
import type { IndexStore } from '../../../engine/drivers/index-store.js';
import { ResourceIndex } from '../../../engine/resources.js';
import { openStorage } from '../../../engine/storage.js';

export function openLmdbIndexStore(): { store: IndexStore; close: () => Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), 'gnocchi-index-contract-'));
  const storage = openStorage(dir);
  const index = new Index(storage);
  const resources = new ResourceIndex(storage, index);
  const sync = <A extends unknown[], R>(f: (...a: A) => R) => async (...a: A): Promise<Awaited<R>> => f(...a) as Awaited<R>;
  const store: IndexStore = {
    getPolicy: sync((n) => index.getPolicy(n)),
    policiesChanging: sync(() => index.policiesChanging()),
    listPolicies: sync(() => index.listPolicies()),
    createPolicy: (p) => index.createPolicy(p),
    ensurePolicies: (p, r) => index.ensurePolicies(p, r),
    updatePolicy: (n, u) => index.updatePolicy(n, u),
    deletePolicy: (n) => index.deletePolicy(n),
    getRule: sync((n) => index.getRule(n)),
    listRules: sync(() => index.listRules()),
    createRule: (r) => index.createRule(r),
    renameRule: (n, m) => index.renameRule(n, m),
    deleteRule: (n) => index.deleteRule(n),
    policyNameForMetric: sync((n) => index.policyNameForMetric(n)),
    getMetric: sync((id) => index.getMetric(id)),
    getMetrics: sync((ids) => new Map(ids.flatMap((id) => {
      const m = index.getMetric(id);
      return m === undefined ? [] : [[id, m] as const];
    }))),
    createMetric: (m) => index.createMetric(m),
    deleteMetric: (id) => index.deleteMetric(id),
    listMetrics: sync((o) => index.listMetrics(o)),
    findType: sync((n) => resources.findType(n)),
    getType: sync((n) => resources.getType(n)),
    listTypes: sync(() => resources.listTypes()),
    createType: (t) => resources.createType(t),
    deleteType: (n) => resources.deleteType(n),
    updateTypeAttributes: (n, a, r) => resources.updateTypeAttributes(n, a, r),
    get: sync((t, id) => resources.get(t, id)),
    getResources: sync((ids) => new Map(ids.flatMap((id) => {
      const r = resources.get('generic', id);
      return r === undefined ? [] : [[id, r] as const];
    }))),
    metricsOf: sync((id) => resources.metricsOf(id)),
    metricsOfResources: sync((ids) => new Map(ids.map((id) => [id, resources.metricsOf(id)]))),
    metricByName: sync((r, n) => resources.metricByName(r, n)),
    create: (t, i) => resources.create(t, i),
    createAndExtend: (t, c, e) => resources.createAndExtend(t, c, e),
    update: (t, id, c, a) => resources.update(t, id, c, a),
    delete: (t, id) => resources.delete(t, id),
    deleteMatching: (t, f) => resources.deleteMatching(t, f),
    firstRevisionStart: sync((id) => resources.firstRevisionStart(id)),
    list: sync((t, o) => resources.list(t, o)),
  };
  return {
    store,
    close: async () => {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
