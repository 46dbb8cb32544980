// New metric ids are canonical UUIDs that sort in the order the metrics were
// created, so that the databases keyed by them fill their pages: a
// database keyed by such ids takes fewer LMDB pages than one keyed by
// random UUIDs for the same records.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { newMetricId } from '../../engine/metric-id.js';
import { idKeyed } from '../../engine/storage.js';

const CANONICAL_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const RECORDS = 5_000;
/** A metric record's size in format 7 (bench:footprint p60: 50 bytes). */
const VALUE = Buffer.alloc(50, 1);

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Leaf pages of a database keyed as `metrics` is, after RECORDS puts of ids from `next` (one at a time: splits as separate transactions would make them). */
async function leafPages(next: () => string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'gnocchi-metric-id-'));
  dirs.push(dir);
  const root = open({ path: dir, maxDbs: 2 });
  try {
    const db = root.openDB<Buffer, string>({ ...idKeyed('metrics'), encoding: 'binary' });
    root.transactionSync(() => {
      for (let i = 0; i < RECORDS; i++) db.putSync(next(), VALUE);
    });
    return (db.getStats() as { treeLeafPageCount: number }).treeLeafPageCount;
  } finally {
    await root.close();
  }
}

describe('newMetricId', () => {
  it('gives canonical version 7 UUIDs, each after the one before in text order', () => {
    const ids = Array.from({ length: 10_000 }, newMetricId);
    for (const id of ids) expect(id).toMatch(CANONICAL_V7);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
  });

  it('fills the pages of a database keyed by it: at most 4/5 of the leaf pages random ids take (~70% measured)', async () => {
    const ordered = await leafPages(newMetricId);
    const random = await leafPages(randomUUID);
    expect(ordered).toBeLessThanOrEqual(0.8 * random);
  });
});
