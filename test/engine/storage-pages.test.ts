// New data directories use 8 KB LMDB pages (engine/storage.ts): ~1 KB
// open-split chunks and ~150-byte metric states pack more to a page, and a
// page split leaves less unused; a directory made with other pages keeps
// them, as LMDB fixes the size when it creates the file.
import { open } from 'lmdb';
import { describe, expect, it } from 'vitest';
import { dbPath, openStorage } from '../../engine/storage.js';
import { tempDirs } from '../temp-dirs.js';

const dataDir = tempDirs('gnocchi-pages-');

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
