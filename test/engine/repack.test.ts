// The compacting copy that fills pages (engine/repack.ts): every database
// copied record for record, dupSort ones with their dups, into pages filled
// in key order, where inserts at random places left them partly empty; the
// copy opens as a data directory of its own.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { repackEnvironment } from '../../engine/repack.js';
import { dbPath, openStorage, PAGE_SIZE, rawDatabase, type Storage } from '../../engine/storage.js';
import { prng } from '../reliability/harness.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gnocchi-repack-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const uuid = (next: () => number) =>
  Array.from({ length: 16 }, () => Math.floor(next() * 256).toString(16).padStart(2, '0'))
    .join('')
    .replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');

/** 2,000 500-byte chunks of 400 metrics in random order, and value index keys with 1 to 300 dups each. */
async function fill(storage: Storage): Promise<void> {
  const next = prng(11);
  const metrics = Array.from({ length: 400 }, () => uuid(next));
  await storage.root.transaction(() => {
    for (let round = 0; round < 5; round++) {
      for (const id of metrics) void storage.stateChunks.put([id, 60, 1_000 * round], Buffer.alloc(500, round + 1));
    }
    for (let k = 0; k < 40; k++) {
      const key = Buffer.from(`key-${k}-${'x'.repeat(k)}`);
      for (let d = 0; d < 1 + ((k * 37) % 300); d++) void storage.resourceValues.put(key, Buffer.from(uuid(next).replace(/-/g, '').slice(0, 24).padEnd(24, '0')));
    }
  });
}

/** Every database's records as hex, by name, read through a raw environment. */
function records(path: string): Record<string, string[]> {
  const env = open({ path, readOnly: true, maxDbs: 64 });
  try {
    const out: Record<string, string[]> = {};
    for (const name of [...env.getKeys()].map(String)) {
      const db = rawDatabase(env, name);
      out[name] = [...db.getRange()].map(({ key, value }) => `${key.toString('hex')}=${value.toString('hex')}`);
    }
    return out;
  } finally {
    void env.close();
  }
}

/** state_chunks' leaf pages and their share taken by its values and LMDB's 10 bytes a node (keys left out). */
function leafFill(storage: Storage): { pages: number; fill: number } {
  const stats = storage.stateChunks.getStats() as { treeLeafPageCount: number };
  let bytes = 0;
  for (const key of storage.stateChunks.getKeys()) bytes += storage.stateChunks.get(key)!.length + 10;
  return { pages: stats.treeLeafPageCount, fill: bytes / (stats.treeLeafPageCount * PAGE_SIZE) };
}

describe('repackEnvironment', () => {
  it('copies every record, dups too, into filled pages, and the copy opens as a data directory', async () => {
    const source = join(dir, 'source');
    const writer = openStorage(source);
    await fill(writer);
    await writer.close();
    const storage = openStorage(source, { readOnly: true });
    const before = leafFill(storage);
    const target = join(dir, 'target');
    mkdirSync(dbPath(target), { recursive: true });
    let copied = 0;
    const bytes = await repackEnvironment(storage, dbPath(target), { task: () => ({ advance: (n = 1) => (copied += n), finish: () => {} }) });
    await storage.close();
    expect(bytes).toBeGreaterThan(0);

    const want = records(dbPath(source));
    expect(want.state_chunks).toHaveLength(2_000);
    expect(records(dbPath(target))).toEqual(want);
    expect(copied).toBe(Object.values(want).reduce((n, r) => n + r.length, 0));

    const copy = openStorage(target);
    try {
      const after = leafFill(copy);
      // Random inserts split pages in halves; appended in order they fill.
      expect(before.fill).toBeLessThan(0.7);
      expect(after.fill).toBeGreaterThan(0.85);
      expect(after.pages).toBeLessThan(before.pages);
      expect(copy.resourceValues.getValuesCount(Buffer.from(`key-3-xxx`))).toBe(1 + 3 * 37);
      expect(copy.stateChunks.get([[...copy.stateChunks.getKeys()][0]![0], 60, 4_000])).toEqual(Buffer.alloc(500, 5));
    } finally {
      await copy.close();
    }
  });
});
