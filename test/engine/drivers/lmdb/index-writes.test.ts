// The LMDB index's writes of policies, rules and metrics (engine/index.ts)
// leave nothing written when they fail, whatever they wrote before the
// failure: what the IndexStore contract promises (drivers/index-store.ts).
// lmdb-js commits an async transaction's writes made before its callback
// threw; these writes run where a throw rolls them back.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ArchivePolicy } from '../../../../engine/archive-policy.js';
import { LmdbIndexStore } from '../../../../engine/drivers/lmdb/index-store.js';
import { StorageKeyTooLong } from '../../../../engine/key-limit.js';
import { openStorage, type Storage } from '../../../../engine/storage.js';
import { MetricRecords } from '../../../../engine/metric-records.js';

let dir: string;
let storage: Storage;
let store: LmdbIndexStore;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gnocchi-index-writes-'));
  storage = openStorage(dir);
  store = new LmdbIndexStore(storage);
  await store.createPolicy(policy('low'));
  await store.createRule({ name: 'r', metricPattern: 'x*', archivePolicyName: 'low' });
});
afterEach(async () => {
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
});

function policy(name: string): ArchivePolicy {
  return { name, backWindow: 0, definition: [{ granularity: 60_000_000, points: 60, timespan: 3_600_000_000 }], aggregationMethods: ['mean'] };
}

/** One byte over the storage key limit as a policy's or rule's name (engine/key-limit.ts). */
const TOO_LONG = 'a'.repeat(1979);

/** Every entry of every database of the environment. */
function contents(): unknown[] {
  return Object.entries(storage).flatMap(([name, db]) => {
    const raw = (db instanceof MetricRecords ? db.db : db) as Partial<Storage['meta']>;
    return typeof raw.getRange === 'function' && name !== 'root' ? [[name, [...raw.getRange()]]] : [];
  });
}

/** A write that fails after one of its writes: [what it writes first, the write]. */
const CASES: [string, () => Promise<unknown>][] = [
  ['a policy, before a policy name too long', () => store.ensurePolicies([policy('high'), policy(TOO_LONG)], [])],
  ['a policy, before a rule name too long', () => store.ensurePolicies([policy('high')], [{ name: TOO_LONG, metricPattern: 'y*', archivePolicyName: 'high' }])],
  ['the rule under its new name or without its old one', () => store.renameRule('r', TOO_LONG)],
];

describe('a failed index write leaves nothing written', () => {
  it.each(CASES)('%s', async (_written, write) => {
    const before = contents();
    await expect(write()).rejects.toBeInstanceOf(StorageKeyTooLong);
    await storage.root.committed;
    expect(contents()).toEqual(before);
  });
});
