/**
 * The LMDB index in a directory of its own, for the contract suite: the
 * reference the PostgreSQL index is held to.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IndexStore } from '../../../engine/drivers/index-store.js';
import { LmdbIndexStore } from '../../../engine/drivers/lmdb/index-store.js';
import { openStorage } from '../../../engine/storage.js';

export function openLmdbIndexStore(): { store: IndexStore; close: () => Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), 'gnocchi-index-contract-'));
  const storage = openStorage(dir);
  return {
    store: new LmdbIndexStore(storage),
    close: async () => {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
