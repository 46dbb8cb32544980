// Listings in the default order walk resources_by_revision_start and stop
// once the page is full (engine/resources.ts): the pages must be exactly
// those of a full scan, through updates, deletes, markers, the generic type
// and a data directory written before the index existed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'lmdb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LmdbIndexStore } from '../../engine/drivers/lmdb/index-store.js';
import { Engine } from '../../engine/engine.js';
import { DEFAULT_RESOURCE_SORT, parseResourceSorts, type Revision } from '../../engine/resources.js';
import type { ResourceTypeRecord } from '../../engine/resource-type.js';
import { validateResourceQuery, type QueryNode } from '../../formats/resource-query.js';

let dir: string;
let engine: Engine;
/** The LMDB resource index itself: these tests pin its query plans, synchronously. */
const lmdb = () => (engine.index as LmdbIndexStore).resources;

const open = () =>
  Engine.open({ dataDir: dir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gnocchi-list-index-'));
  engine = await open();
});
afterEach(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

const id = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
const query = (raw: unknown) => validateResourceQuery(raw, { resourceId: (v) => v }) as QueryNode;

async function populate(): Promise<ResourceTypeRecord> {
  const rt = await lmdb().createType({
    name: 'box',
    state: 'creating',
    attributes: [{ name: 'flavor', type: 'string', required: true, minLength: 0, maxLength: 255 }],
  });
  for (let i = 0; i < 60; i++) {
    await lmdb().create(i % 4 === 0 ? 'generic' : 'box', {
      id: id(i),
      originalResourceId: `r${i}`,
      creator: 'u:p',
      userId: null,
      projectId: null,
      startedAt: 1_000_000 * ((i * 7) % 13),
      endedAt: null,
      attrs: i % 4 === 0 ? {} : { flavor: ['a', 'b', 'c'][i % 3]! },
    });
  }
  for (let i = 1; i < 60; i += 5) if (i % 4 !== 0) await lmdb().update('box', id(i), { attrs: { flavor: 'b' } });
  for (let i = 2; i < 60; i += 9) await lmdb().delete('generic', id(i));
  return rt;
}

/** What a full scan answers: every current resource, filtered, sorted by (revision_start, started_at, id). */
function expected(type: string, keep: (r: Revision) => boolean): string[] {
  const all: Revision[] = [];
  for (let i = 0; i < 60; i++) {
    const r = lmdb().get(type, id(i));
    if (r !== undefined) all.push({ ...r, revision: -1, revisionEnd: null });
  }
  return all
    .filter(keep)
    .sort((a, b) => a.revisionStart - b.revisionStart || a.startedAt - b.startedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((r) => r.id);
}

function pages(type: string, filter: QueryNode | undefined, limit: number): string[] {
  const rt = lmdb().getType(type);
  const sorts = parseResourceSorts(DEFAULT_RESOURCE_SORT, rt, false);
  const out: string[] = [];
  let marker: string | undefined;
  for (;;) {
    const page = lmdb().list(type, { filter, history: false, sorts, limit, marker });
    out.push(...page.map((r) => r.id));
    if (page.length < limit) return out;
    marker = page[page.length - 1]!.id;
  }
}

describe('default-order listing through resources_by_revision_start', () => {
  it('answers what a full scan answers, page by page', async () => {
    await populate();
    const bFilter = query({ and: [{ '=': { flavor: 'b' } }, { '>=': { started_at: '1970-01-01T00:00:03' } }] });
    const bKeep = (r: Revision) => r.attrs.flavor === 'b' && r.startedAt >= 3_000_000;
    for (const limit of [1, 4, 7, 100]) {
      expect(pages('box', undefined, limit)).toEqual(expected('box', () => true));
      expect(pages('generic', undefined, limit)).toEqual(expected('generic', () => true));
      expect(pages('box', bFilter, limit)).toEqual(expected('box', bKeep));
    }
    expect(expected('box', bKeep).length).toBeGreaterThan(3);
  });

  it('answers started_at ranges through the value index under any sort', async () => {
    await populate();
    const cases: [unknown, (r: Revision) => boolean][] = [
      [{ '>=': { started_at: '1970-01-01T00:00:05' } }, (r) => r.startedAt >= 5e6],
      [{ '>': { started_at: '1970-01-01T00:00:05' } }, (r) => r.startedAt > 5e6],
      [{ '<': { started_at: '1970-01-01T00:00:05' } }, (r) => r.startedAt < 5e6],
      [{ '<=': { started_at: '1970-01-01T00:00:05' } }, (r) => r.startedAt <= 5e6],
      [{ '=': { started_at: '1970-01-01T00:00:05' } }, (r) => r.startedAt === 5e6],
      [{ and: [{ '>': { started_at: '1970-01-01T00:00:02' } }, { '<=': { started_at: '1970-01-01T00:00:09' } }, { '!=': { flavor: 'a' } }] },
        (r) => r.startedAt > 2e6 && r.startedAt <= 9e6 && r.attrs.flavor !== 'a'],
      [{ or: [{ '>': { started_at: '1970-01-01T00:00:09' } }, { '=': { flavor: 'a' } }] }, (r) => r.startedAt > 9e6 || r.attrs.flavor === 'a'],
    ];
    const rt = lmdb().getType('box');
    const sorts = parseResourceSorts(['started_at:desc'], rt, false);
    for (const [raw, keep] of cases) {
      const filter = query(raw);
      expect(pages('box', filter, 4)).toEqual(expected('box', keep));
      const want = expected('box', keep)
        .map((i) => lmdb().get('box', i)!)
        .sort((a, b) => b.startedAt - a.startedAt || (a.id < b.id ? -1 : 1))
        .map((r) => r.id);
      const got = lmdb().list('box', { filter, history: false, sorts, limit: 1000 }).map((r) => r.id);
      expect(got).toEqual(want);
    }
  });

  it('reads a rare value through its index under a wide started_at range', async () => {
    const rt = await populate();
    const { storage } = engine;
    storage.root.transactionSync(() => {
      for (let i = 100; i < 3100; i++) {
        void lmdb().create(rt.name, {
          id: id(i), originalResourceId: `r${i}`, creator: 'u:p', userId: null, projectId: null,
          startedAt: 100_000_000 + i, endedAt: null, attrs: { flavor: i % 50 === 0 ? 'rare' : 'c' },
        });
      }
    });
    const filter = query({ and: [{ '=': { flavor: 'rare' } }, { '>=': { started_at: '1970-01-01T00:01:40.002900+00:00' } }] });
    const all: string[] = [];
    for (let i = 0; i < 3100; i++) {
      const r = lmdb().get('box', id(i));
      if (r?.attrs.flavor === 'rare' && r.startedAt >= 100_000_000 + 2900) all.push(r.id);
    }
    expect(all.length).toBe(4);
    expect(pages('box', filter, 3)).toEqual(all);
  });

  it('walks revision_start ranges wider than the candidates it sorts from their least bound, generic merging the types', async () => {
    const rt = await populate();
    const { storage } = engine;
    storage.root.transactionSync(() => {
      for (let i = 100; i < 6100; i++) {
        void lmdb().create(i % 3 === 0 ? 'generic' : rt.name, {
          id: id(i), originalResourceId: `r${i}`, creator: 'u:p', userId: null, projectId: null,
          startedAt: 0, endedAt: null, attrs: i % 3 === 0 ? {} : { flavor: 'c' },
        });
      }
    });
    const starts = [...storage.resources.getRange()].map(({ value }) => (value as Revision).revisionStart).sort((a, b) => a - b);
    const at = (n: number) => new Date(starts[n]! / 1000).toISOString();
    const cases: [type: string, raw: unknown, keep: (r: Revision) => boolean][] = [
      ['generic', { '>=': { revision_start: at(200) } }, (r) => r.revisionStart >= Math.floor(starts[200]! / 1000) * 1000],
      ['box', { '>': { revision_start: at(100) } }, (r) => r.revisionStart > Math.floor(starts[100]! / 1000) * 1000],
      ['generic', { or: [{ '>=': { revision_start: at(5000) } }, { '>=': { revision_start: at(300) } }] }, (r) => r.revisionStart >= Math.floor(starts[300]! / 1000) * 1000],
    ];
    for (const [type, raw, keep] of cases) {
      const all = [...storage.resources.getRange()]
        .map(({ value }) => ({ ...(value as Revision), revision: -1, revisionEnd: null }))
        .filter((r) => (type === 'generic' || r.type === type) && keep(r))
        .sort((a, b) => a.revisionStart - b.revisionStart || a.startedAt - b.startedAt || (a.id < b.id ? -1 : 1))
        .map((r) => r.id);
      expect(all.length).toBeGreaterThan(3000);
      expect(pages(type, query(raw), 997)).toEqual(all);
    }
  });

  it('builds the index for a data directory written before it', async () => {
    await populate();
    const before = pages('generic', undefined, 5);
    // Simulate an older release's data: no index entries, no marker in meta.
    const { storage } = engine;
    await storage.root.transaction(() => {
      for (const db of [storage.resourcesByRevisionStart, storage.resourceValues, storage.resourceHistoryValues] as Database[]) {
        for (const key of [...db.getKeys()]) void db.remove(key);
      }
      void storage.meta.remove('resourcesByRevisionStart');
      void storage.meta.remove('resourcesByValue');
    });
    await engine.close();
    engine = await open();
    expect(pages('generic', undefined, 5)).toEqual(before);
    expect(pages('box', undefined, 3)).toEqual(expected('box', () => true));
    const filter = query({ '>=': { started_at: '1970-01-01T00:00:05' } });
    expect(pages('box', filter, 3)).toEqual(expected('box', (r) => r.startedAt >= 5e6));
  });
});
