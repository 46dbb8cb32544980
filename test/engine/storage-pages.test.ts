// New data directories use 8 KB LMDB pages (engine/storage.ts): ~1 KB
// open-split chunks and ~150-byte metric states pack more to a page, and a
// page split leaves less unused; a directory made with other pages keeps
// them, as LMDB fixes the size when it creates the file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { dbPath, openStorage } from '../../engine/storage.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'gnocchi-pages-'));
  dirs.push(d);
  return d;
}

const pageSize = (stats: unknown) => (stats as { pageSize: number }).pageSize;

describe('LMDB page size', () => {
  it('is 8 KB in a new data directory', async () => {
    const storage = openStorage(dataDir());
    try {
      expect(pageSize(storage.root.getStats())).toBe(8192);
    } finally {
      await storage.close();
    }
  });

  it('stays 4 KB in a directory an earlier release made, whose records read as written', async () => {
    const dir = dataDir();
    const before = open({ path: dbPath(dir), maxDbs: 64, pageSize: 4096 });
    const rules = before.openDB({ name: 'rules', encoding: 'msgpack' });
    await rules.put('r', { metricPattern: '*' });
    expect(pageSize(before.getStats())).toBe(4096);
    await before.close();
    const storage = openStorage(dir);
    try {
      expect(pageSize(storage.root.getStats())).toBe(4096);
      expect(storage.rules.get('r')).toEqual({ metricPattern: '*' });
    } finally {
      await storage.close();
    }
  });
});
