// The engine's own key limit (engine/key-limit.ts): 1978 bytes of encoded
// key in every database, whatever the page size its directory was made
// with (LMDB's own limit is 4026 at 8 KB pages), checked where lmdb-js
// checks its own (writes, the end of a range), while a lookup of a longer
// key finds nothing instead of failing.
import { randomUUID } from 'node:crypto';
import { open } from 'lmdb';
import { describe, expect, it } from 'vitest';
import { MAX_STORAGE_KEY_BYTES, StorageKeyTooLong } from '../../engine/key-limit.js';
import type { ResourceRecord } from '../../engine/resource-search.js';
import { dbPath, openStorage, type Storage } from '../../engine/storage.js';
import { tempDirs } from '../temp-dirs.js';

const U = '0000db83-68ff-5923-8857-1c374bafaf18';
const RESOURCE: ResourceRecord = { id: U, type: 'generic', originalResourceId: U, creator: 'c', userId: null, projectId: null, startedAt: 0, endedAt: null, revisionStart: 0, attrs: {} };
const a = (n: number) => 'a'.repeat(n);

const dataDir = tempDirs('gnocchi-key-limit-');

/** Storage in a directory first made with `pageSize` pages (LMDB keeps them whatever openStorage asks). */
async function storageWithPages(pageSize: 4096 | 8192): Promise<Storage> {
  const dir = dataDir();
  await open({ path: dbPath(dir), maxDbs: 64, pageSize }).close();
  const storage = openStorage(dir);
  expect((storage.root.getStats() as { pageSize: number }).pageSize).toBe(pageSize);
  return storage;
}

/** A write of a key of the database, its encoded size what the name's length makes it. */
type Write = (s: Storage, n: number) => Promise<unknown>;

const WRITES: [string, Write, number][] = [
  ['an archive policy, by its name alone', (s, n) => s.policies.put(a(n), { name: a(n) }), MAX_STORAGE_KEY_BYTES],
  ['a rule, by its name alone', (s, n) => s.rules.put(a(n), { name: a(n) }), MAX_STORAGE_KEY_BYTES],
  ['a resource type, by its name alone', (s, n) => s.resourceTypes.put(a(n), { name: a(n) }), MAX_STORAGE_KEY_BYTES],
  // As its key in metrics_by_resource, before format 10: the resource's UUID (tag and 16 bytes) and a separator before the name.
  ['a resource metric\'s name', (s, n) => Promise.resolve(s.resources.putIfAbsent(randomUUID(), RESOURCE, new Map([[a(n), U]]))), MAX_STORAGE_KEY_BYTES - 18],
  // The type's name, a separator, revision_start (9 bytes), a separator, the UUID.
  ['a resource, by its type and revision_start', (s, n) => s.resourcesByRevisionStart.put([a(n), 1, U], true), MAX_STORAGE_KEY_BYTES - 28],
];

describe.each([8192, 4096] as const)('in a directory of %i-byte pages', (pageSize) => {
  it.each(WRITES)('stores %s up to the limit and refuses one byte more', async (_what, write, longest) => {
    const storage = await storageWithPages(pageSize);
    try {
      await expect(write(storage, longest)).resolves.toBe(true);
      expect(() => write(storage, longest + 1)).toThrow(StorageKeyTooLong);
    } finally {
      await storage.close();
    }
  });

  it('refuses removes and range ends over the limit, as lmdb-js its own, and finds nothing at a longer key', async () => {
    const storage = await storageWithPages(pageSize);
    try {
      const long = a(MAX_STORAGE_KEY_BYTES + 1);
      expect(() => storage.policies.remove(long)).toThrow(StorageKeyTooLong);
      expect(() => storage.policies.getRange({ end: long })).toThrow(StorageKeyTooLong);
      expect(() => storage.policies.getCount({ start: 'a', end: long })).toThrow(StorageKeyTooLong);
      expect(storage.policies.get(long)).toBeUndefined();
      expect(storage.policies.doesExist(long)).toBe(false);
      expect([...storage.policies.getRange({ start: long })]).toEqual([]);
    } finally {
      await storage.close();
    }
  });
});
