// The value index's layout (engine/resource-index-keys.ts): each revision
// filed once under its own type, a value shared by many revisions stored as
// one key with a dup each, ids that are not UUIDs kept apart, a deleted
// type's code freed, NULL filed by absence, a started_at that is the
// revision_start and the common creator filed by resources_by_revision_start
// alone; and a data directory of a layout before it (msgpack keys, generic
// fields also under `generic`; NULL entries; every started_at; every
// creator) rebuilt on open, the old databases dropped.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkStorage } from '../../engine/check.js';
import { entryCount } from '../../engine/db-stats.js';
import type { LmdbIndexStore } from '../../engine/drivers/lmdb/index-store.js';
import { Engine } from '../../engine/engine.js';
import { entryBytes, rangeBounds, type StoredValue } from '../../engine/resource-index-keys.js';
import { IndexNames } from '../../engine/resource-index-names.js';
import { RevisionMark } from '../../engine/revision-start-index.js';
import { DEFAULT_RESOURCE_SORT, parseResourceSorts, type NewResource } from '../../engine/resources.js';
import type { ResourceRecord } from '../../engine/resource-search.js';
import { validateResourceQuery, type QueryNode } from '../../formats/resource-query.js';

let dir: string;
let engine: Engine;
const lmdb = () => (engine.index as LmdbIndexStore).resources;
const open = () =>
  Engine.open({ dataDir: dir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gnocchi-value-index-'));
  engine = await open();
  for (const name of ['a', 'b']) {
    await lmdb().createType({ name, state: 'creating', attributes: [{ name: 'tier', type: 'string', required: false, minLength: 0, maxLength: 255 }] });
  }
});
afterEach(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

const id = (type: string, i: number) => `00000000-0000-4000-8000-${type === 'a' ? 'a' : type === 'b' ? 'b' : '0'}${i.toString(16).padStart(11, '0')}`;
const resource = (rid: string, attrs: NewResource['attrs']): NewResource => ({
  id: rid,
  originalResourceId: rid,
  creator: 'c:p',
  userId: null,
  projectId: 'shared',
  startedAt: 1_000_000,
  endedAt: null,
  attrs,
});

/** 150 resources of a and of b, 50 generic ones, all of project `shared`, tier gold; 20 of a then silver. */
async function populate(): Promise<void> {
  for (const [type, n] of [['a', 150], ['b', 150], ['generic', 50]] as const) {
    for (let i = 0; i < n; i++) await lmdb().create(type, resource(id(type, i), type === 'generic' ? {} : { tier: 'gold' }));
  }
  for (let i = 0; i < 20; i++) await lmdb().update('a', id('a', i), { attrs: { tier: 'silver' } });
}

const query = (raw: unknown) => validateResourceQuery(raw, { resourceId: (v) => v }) as QueryNode;

/**
 * Rewrites the current resources' index entries as an older layout had
 * them: resources_by_revision_start's value `mark(r)`, and an entry of
 * `field` with `valueOf(r)` where it gives one; meta claims `versions`.
 */
function asOlderLayout(
  mark: (r: ResourceRecord) => unknown,
  field: string,
  valueOf: (r: ResourceRecord) => StoredValue | undefined,
  versions: { resourcesByValue: number; resourcesByRevisionStart: number },
): void {
  const { storage } = engine;
  const names = new IndexNames(storage.meta).refresh();
  storage.root.transactionSync(() => {
    for (const { key } of [...storage.resourcesByRevisionStart.getRange()]) {
      const [type, revisionStart, rid] = key as [string, number, string];
      const r = lmdb().get(type, rid)!;
      void storage.resourcesByRevisionStart.put(key, mark(r));
      const value = valueOf(r);
      if (value === undefined) continue;
      const entry = entryBytes(names.typeCode(type)!, names.internField(field), value, { id: rid, revision: -1, revisionStart });
      void storage.resourceValues.put(entry.key, entry.dup);
    }
    for (const [name, version] of Object.entries(versions)) void storage.meta.put(name, version);
  });
}

function search(type: string, raw: unknown, history = false): string[] {
  const sorts = parseResourceSorts(DEFAULT_RESOURCE_SORT, lmdb().getType(type), history);
  return lmdb()
    .list(type, { filter: query(raw), history, sorts, limit: 10_000 })
    .map((r) => `${r.id}@${r.revision}`)
    .sort();
}

const SEARCHES: [type: string, filter: unknown, history: boolean][] = [
  ['generic', { '=': { project_id: 'shared' } }, false],
  ['a', { '=': { project_id: 'shared' } }, false],
  ['b', { '=': { tier: 'gold' } }, false],
  ['a', { '=': { tier: 'gold' } }, true],
  ['a', { '=': { tier: 'silver' } }, false],
  ['generic', { '=': { ended_at: null } }, true],
  ['a', { '=': { user_id: null } }, false],
  ['b', { like: { creator: 'c:%' } }, false],
  ['generic', { '>=': { started_at: '1970-01-01T00:00:01' } }, false],
  // Current revisions' revision_start and revision_end come from resources_by_revision_start.
  ['generic', { '>=': { revision_start: '1970-01-01T00:00:01' } }, false],
  ['a', { '<=': { revision_start: '2100-01-01T00:00:00' } }, true],
  ['a', { '=': { revision_end: null } }, false],
  ['generic', { '=': { revision_end: null } }, true],
  ['generic', { '<': { revision_end: '2100-01-01T00:00:00' } }, true],
  ['b', { or: [{ '=': { revision_start: null } }, { '>': { revision_end: '1970-01-01T00:00:00' } }, { '=': { tier: 'gold' } }] }, true],
];

describe('values shared by many revisions', () => {
  it('are one key under each type, with a dup per revision', async () => {
    await populate();
    const { storage } = engine;
    const names = new IndexNames(storage.meta).refresh();
    const dups = (type: string, field: string, value: string | null) => {
      const key = entryBytes(names.typeCode(type)!, names.fieldCode(field)!, value, { id: id(type, 0), revision: -1, revisionStart: 0 }).key;
      return storage.resourceValues.getValuesCount(key);
    };
    const keys = (type: string, field: string) => {
      // A field filed by no revision has no code yet.
      const fieldCode = names.fieldCode(field);
      return fieldCode === undefined ? 0 : storage.resourceValues.getKeysCount(rangeBounds(names.typeCode(type)!, fieldCode, { field, nulls: false }));
    };
    expect([dups('a', 'project_id', 'shared'), dups('b', 'project_id', 'shared'), dups('generic', 'project_id', 'shared')]).toEqual([150, 150, 50]);
    expect([keys('a', 'project_id'), keys('b', 'project_id'), keys('generic', 'project_id')]).toEqual([1, 1, 1]);
    // One field code for `tier` whatever the type, the type's code apart.
    expect([dups('a', 'tier', 'gold'), dups('a', 'tier', 'silver'), dups('b', 'tier', 'gold')]).toEqual([130, 20, 150]);
    // NULL is filed by absence.
    expect([keys('a', 'user_id'), keys('b', 'ended_at')]).toEqual([0, 0]);
    // resources_by_revision_start answers revision_start and revision_end of current revisions.
    expect([keys('a', 'revision_start'), keys('generic', 'revision_end')]).toEqual([0, 0]);
    // Each revision filed once: 3 generic fields not NULL and not its creator, the common one (6 for a closed
    // one, which files its creator), and its type's attribute.
    expect(keys('a', 'creator')).toBe(0);
    expect(entryCount(storage.resourceValues)).toBe(350 * 3 + 300);
    expect(entryCount(storage.resourceHistoryValues)).toBe(20 * 7);
  });

  it.each(SEARCHES)('answer a search of %s for %j (history %s) as a scan does', async (type, filter, history) => {
    await populate();
    const want = search(type, { not: { not: filter } }, history);
    expect(want.length).toBeGreaterThanOrEqual(20);
    expect(search(type, filter, history)).toEqual(want);
  });
});

describe('resources created together (a collector write)', () => {
  it('are filed as resources created one by one are, ids that are not UUIDs too', async () => {
    // Runs of shared values broken by changes and by an id that is not a UUID (whose keys hold it) in their midst.
    const uuids = Array.from({ length: 40 }, (_, i) => ({
      ...resource(id('a', i), i % 4 === 0 ? {} : { tier: i % 2 === 0 ? 'gold' : 'silver' }),
      startedAt: 1_000_000 + Math.floor(i / 3),
    }));
    const created = [...uuids.slice(0, 20), resource('legacy-2', { tier: 'gold' }), ...uuids.slice(20)];
    await lmdb().createAndExtend('a', created, []);
    expect(checkStorage(engine.storage).faults).toEqual([]);
    // 3 generic fields not NULL each (the creator the common one), and a tier on all but the 10 of every fourth UUID.
    expect(entryCount(engine.storage.resourceValues)).toBe(41 * 3 + 31);
    expect(search('a', { '=': { tier: 'gold' } })).toHaveLength(10 + 1);
    expect(search('a', { '=': { tier: null } })).toHaveLength(10);
    expect(search('generic', { '=': { project_id: 'shared' } })).toHaveLength(41);
    expect(search('a', { '=': { user_id: null } })).toContain('legacy-2@-1');
  });
});

describe('a started_at that is the revision_start', () => {
  const started = (r: NewResource): NewResource => ({ ...r, startedAt: undefined });
  /**
   * a: 30 created without a started_at (it is then their revision_start), 10 of them changed since (a new
   * revision_start); b: 10 with a started_at of their own; generic: 10 without, created together as a
   * collector's are.
   */
  async function populateStarts(): Promise<void> {
    for (let i = 0; i < 30; i++) await lmdb().create('a', started(resource(id('a', i), { tier: 'gold' })));
    for (let i = 0; i < 10; i++) await lmdb().update('a', id('a', i), { attrs: { tier: 'silver' } });
    for (let i = 0; i < 10; i++) await lmdb().create('b', resource(id('b', i), { tier: 'gold' }));
    await lmdb().createAndExtend('generic', Array.from({ length: 10 }, (_, i) => started(resource(id('generic', i), {}))), []);
  }
  /** A resource's started_at as a query gives it, to the microsecond. */
  const startedAt = (type: string, i: number) => {
    const us = lmdb().get(type, id(type, i))!.startedAt;
    return `${new Date(Math.floor(us / 1000)).toISOString().slice(0, 23)}${String(us % 1000).padStart(3, '0')}Z`;
  };
  const startedAtEntries = () => {
    const names = new IndexNames(engine.storage.meta).refresh();
    let n = 0;
    for (const type of ['a', 'b', 'generic']) {
      for (const _ of engine.storage.resourceValues.getRange(rangeBounds(names.typeCode(type)!, names.fieldCode('started_at')!, { field: 'started_at', nulls: false }))) n++;
    }
    return n;
  };
  /** Each resource's mark: whether it started at its revision_start (the creator is the common one for all). */
  const flags = () =>
    [...engine.storage.resourcesByRevisionStart.getRange()].map(({ key, value }) => `${(key as unknown[])[2]}:${(value as number) === (RevisionMark.StartedAtRevision | RevisionMark.CommonCreator)}`).sort();
  const startSearches = (): [type: string, filter: unknown, history: boolean][] => [
    ['a', { '>=': { started_at: startedAt('a', 15) } }, false],
    ['a', { '<': { started_at: startedAt('a', 15) } }, false],
    ['a', { '=': { started_at: startedAt('a', 3) } }, false],
    ['a', { '=': { started_at: startedAt('a', 20) } }, true],
    ['a', { and: [{ '>': { started_at: startedAt('a', 5) } }, { '<=': { started_at: startedAt('a', 25) } }] }, false],
    ['generic', { '>=': { started_at: '1970-01-01T00:00:00' } }, false],
    ['generic', { '>=': { started_at: '1970-01-01T00:00:00' } }, true],
    ['generic', { in: { started_at: [startedAt('a', 12), startedAt('generic', 4), '1970-01-01T00:00:01'] } }, false],
    ['b', { or: [{ '=': { started_at: '1970-01-01T00:00:01' } }, { '=': { tier: 'silver' } }] }, false],
  ];

  it('files it once, in resources_by_revision_start, until the resource changes', async () => {
    await populateStarts();
    // The 10 changed a and the 10 b keep their own entry; the 20 other a and the 10 generic have none.
    expect(startedAtEntries()).toBe(20);
    const want = [
      ...Array.from({ length: 30 }, (_, i) => `${id('a', i)}:${i >= 10}`),
      ...Array.from({ length: 10 }, (_, i) => `${id('b', i)}:false`),
      ...Array.from({ length: 10 }, (_, i) => `${id('generic', i)}:true`),
    ].sort();
    expect(flags()).toEqual(want);
    expect(checkStorage(engine.storage).faults).toEqual([]);
  });

  it('answers searches of started_at as a scan does', async () => {
    await populateStarts();
    for (const [type, filter, history] of startSearches()) {
      const want = search(type, { not: { not: filter } }, history);
      expect(want.length, JSON.stringify(filter)).toBeGreaterThan(0);
      expect(search(type, filter, history), JSON.stringify(filter)).toEqual(want);
    }
  });

  it('is told apart by check: a mark that does not hold, a started_at entry missing', async () => {
    await populateStarts();
    const { storage } = engine;
    const changed = lmdb().get('a', id('a', 0))!;
    const unchanged = lmdb().get('a', id('a', 20))!;
    storage.root.transactionSync(() => {
      void storage.resourcesByRevisionStart.put(['a', unchanged.revisionStart, unchanged.id], RevisionMark.CommonCreator);
      const names = new IndexNames(storage.meta).refresh();
      const entry = entryBytes(names.typeCode('a')!, names.fieldCode('started_at')!, changed.startedAt, { id: changed.id, revision: -1, revisionStart: changed.revisionStart });
      void storage.resourceValues.remove(entry.key, entry.dup);
    });
    const faults = checkStorage(storage).faults.map((f) => `${f.kind} ${f.db}`).sort();
    expect(faults).toEqual(['index-mismatch resources_by_revision_start', 'index-missing resource_values']);
  });

  it('of a directory that filed it for every resource (value index 4) is dropped on open, searches unchanged', async () => {
    await populateStarts();
    const searches = startSearches();
    const before = searches.map(([type, filter, history]) => search(type, filter, history));
    asOlderLayout(() => true, 'started_at', (r) => r.startedAt, { resourcesByValue: 4, resourcesByRevisionStart: 3 });
    expect(startedAtEntries()).toBe(50);
    await engine.close();
    engine = await open();
    expect(startedAtEntries()).toBe(20);
    expect(flags().filter((f) => f.endsWith(':true'))).toHaveLength(30);
    expect(searches.map(([type, filter, history]) => search(type, filter, history))).toEqual(before);
    expect(checkStorage(engine.storage).faults).toEqual([]);
  });
});

describe('the common creator', () => {
  /** a: 20 by d:q (the first filed: the common creator), 30 by c:p, 10 by c:x; 5 of d:q's and 5 of c:p's changed since; generic: 10 by d:q created together. */
  async function populateCreators(): Promise<void> {
    const by = (type: string, from: number, n: number, creator: string) => Array.from({ length: n }, (_, i) => ({ ...resource(id(type, from + i), type === 'a' ? { tier: 'gold' } : {}), creator }));
    for (const r of [...by('a', 0, 20, 'd:q'), ...by('a', 20, 30, 'c:p'), ...by('a', 50, 10, 'c:x')]) await lmdb().create('a', r);
    for (const i of [0, 1, 2, 3, 4, 20, 21, 22, 23, 24]) await lmdb().update('a', id('a', i), { attrs: { tier: 'silver' } });
    await lmdb().createAndExtend('generic', by('generic', 0, 10, 'd:q'), []);
  }
  const creatorDups = (history: boolean, creator: string) => {
    const names = new IndexNames(engine.storage.meta).refresh();
    const db = history ? engine.storage.resourceHistoryValues : engine.storage.resourceValues;
    let n = 0;
    for (const type of ['a', 'generic']) {
      n += db.getValuesCount(entryBytes(names.typeCode(type)!, names.fieldCode('creator')!, creator, { id: id(type, 0), revision: history ? 1 : -1, revisionStart: 0 }).key);
    }
    return n;
  };
  const CREATOR_SEARCHES: [type: string, filter: unknown, history: boolean][] = [
    ['a', { '=': { creator: 'd:q' } }, false],
    ['a', { '=': { creator: 'd:q' } }, true],
    ['a', { '=': { creator: 'c:p' } }, false],
    ['generic', { like: { creator: 'd:%' } }, false],
    ['a', { in: { creator: ['d:q', 'c:x'] } }, false],
    ['a', { in: { creator: ['d:q', 'd:q'] } }, true],
    ['a', { '>=': { creator: 'c:q' } }, false],
    ['a', { '<': { creator: 'd' } }, true],
    ['generic', { '=': { created_by_user_id: 'd' } }, true],
    ['a', { '=': { created_by_user_id: 'c' } }, false],
    ['a', { and: [{ '=': { creator: 'd:q' } }, { '=': { tier: 'gold' } }] }, false],
    ['generic', { or: [{ '=': { creator: 'c:x' } }, { '=': { creator: 'd:q' } }] }, true],
  ];

  it("is the first creator filed: its resources' current revisions have no creator entry, but a mark", async () => {
    await populateCreators();
    expect(new IndexNames(engine.storage.meta).refresh().commonCreator()).toBe('d:q');
    expect([creatorDups(false, 'd:q'), creatorDups(false, 'c:p'), creatorDups(false, 'c:x')]).toEqual([0, 30, 10]);
    // Closed revisions keep their creator.
    expect([creatorDups(true, 'd:q'), creatorDups(true, 'c:p')]).toEqual([5, 5]);
    const marked = [...engine.storage.resourcesByRevisionStart.getRange()].filter(({ value }) => ((value as number) & RevisionMark.CommonCreator) !== 0);
    expect(marked).toHaveLength(30);
    expect(checkStorage(engine.storage).faults).toEqual([]);
  });

  it.each(CREATOR_SEARCHES)('answers a search of %s for %j (history %s) as a scan does', async (type, filter, history) => {
    await populateCreators();
    const want = search(type, { not: { not: filter } }, history);
    expect(want.length).toBeGreaterThan(0);
    expect(search(type, filter, history)).toEqual(want);
  });

  it('is told apart by check: a mark without it, an entry for it', async () => {
    await populateCreators();
    const { storage } = engine;
    const common = lmdb().get('a', id('a', 10))!;
    storage.root.transactionSync(() => {
      void storage.resourcesByRevisionStart.put(['a', common.revisionStart, common.id], RevisionMark.StartedAtRevision);
      const names = new IndexNames(storage.meta).refresh();
      const other = lmdb().get('generic', id('generic', 3))!;
      const entry = entryBytes(names.typeCode('generic')!, names.fieldCode('creator')!, 'd:q', { id: other.id, revision: -1, revisionStart: other.revisionStart });
      void storage.resourceValues.put(entry.key, entry.dup);
    });
    const faults = checkStorage(storage).faults.map((f) => `${f.kind} ${f.db}`).sort();
    expect(faults).toEqual(['index-extra resource_values', 'index-mismatch resources_by_revision_start']);
  });

  it('of a directory that filed every creator (value index 5) is the most common one once rebuilt on open, searches unchanged', async () => {
    await populateCreators();
    // c:p the most common now: 45 resources against d:q's 30.
    for (let i = 60; i < 75; i++) await lmdb().create('a', { ...resource(id('a', i), { tier: 'gold' }), creator: 'c:p' });
    const before = CREATOR_SEARCHES.map(([type, filter, history]) => search(type, filter, history));
    const { storage } = engine;
    // That layout: a creator entry for every current revision (d:q's were left out), whether the resource started at its
    // revision_start as the mark, no common creator.
    asOlderLayout((r) => r.startedAt === r.revisionStart, 'creator', (r) => (r.creator === 'd:q' ? r.creator : undefined), {
      resourcesByValue: 5,
      resourcesByRevisionStart: 4,
    });
    const { creator: _, ...dictionary } = storage.meta.get('resourceValueNames') as { creator?: string };
    await storage.meta.put('resourceValueNames', dictionary);
    expect(creatorDups(false, 'd:q')).toBe(30);
    await engine.close();
    engine = await open();
    expect(new IndexNames(engine.storage.meta).refresh().commonCreator()).toBe('c:p');
    expect([creatorDups(false, 'd:q'), creatorDups(false, 'c:p'), creatorDups(false, 'c:x')]).toEqual([30, 0, 10]);
    expect([creatorDups(true, 'd:q'), creatorDups(true, 'c:p')]).toEqual([5, 5]);
    expect(CREATOR_SEARCHES.map(([type, filter, history]) => search(type, filter, history))).toEqual(before);
    expect(checkStorage(engine.storage).faults).toEqual([]);
  });
});

describe('the estimate of a range of current and closed revisions', () => {
  it('counts both, whichever way each is counted (natively past 1,000)', async () => {
    // 1,200 current revisions of project `shared` and 5 closed ones: an `and` caps the project's count at the
    // creator's 1,205, so its current entries are counted natively and its closed ones stepped through.
    await lmdb().createAndExtend('a', Array.from({ length: 1200 }, (_, i) => resource(id('a', i), { tier: 'gold' })), []);
    for (let i = 0; i < 5; i++) await lmdb().update('a', id('a', i), { attrs: { tier: 'silver' } });
    const filter = { and: [{ '=': { creator: 'c:p' } }, { '=': { project_id: 'shared' } }] };
    expect(search('a', filter, true)).toHaveLength(1205);
  });
});

describe('ids that are not UUIDs', () => {
  it('are found, updated and deleted like the others', async () => {
    await populate();
    const odd = ['legacy-1', 'LEGACY-ÜNICODE-😀'];
    for (const rid of odd) await lmdb().create('a', resource(rid, { tier: 'gold' }));
    await lmdb().update('a', odd[0]!, { attrs: { tier: 'silver' } });
    expect(search('a', { '=': { tier: 'gold' } }).filter((at) => !at.startsWith('0000'))).toEqual([`${odd[1]}@-1`]);
    expect(search('a', { '=': { tier: 'silver' } }).filter((at) => !at.startsWith('0000'))).toEqual([`${odd[0]}@-1`]);
    expect(search('generic', { '=': { project_id: 'shared' } }, true).filter((at) => !at.startsWith('0000'))).toHaveLength(3);
    expect(search('a', { '=': { user_id: null } }).filter((at) => !at.startsWith('0000'))).toHaveLength(2);
    expect(search('a', { '>=': { started_at: '1970-01-01T00:00:01' } })).toHaveLength(152);
    expect(checkStorage(engine.storage).faults).toEqual([]);
    const before = entryCount(engine.storage.resourceValues);
    for (const rid of odd) await lmdb().delete('a', rid);
    expect(entryCount(engine.storage.resourceValues)).toBe(before - 2 * 4);
    expect(entryCount(engine.storage.resourceHistoryValues)).toBe(20 * 7);
  });
});

describe('a deleted type', () => {
  it('leaves no entry, and its code to the next type', async () => {
    await lmdb().createType({ name: 'c', state: 'creating', attributes: [{ name: 'tier', type: 'string', required: false, minLength: 0, maxLength: 255 }] });
    await lmdb().create('c', resource(id('generic', 1), { tier: 'gold' }));
    await lmdb().update('c', id('generic', 1), { attrs: { tier: 'silver' } });
    const code = new IndexNames(engine.storage.meta).refresh().typeCode('c');
    expect(code).toBeDefined();
    await lmdb().delete('c', id('generic', 1));
    await lmdb().deleteType('c');
    expect(new IndexNames(engine.storage.meta).refresh().typeCode('c')).toBeUndefined();
    await lmdb().createType({ name: 'd', state: 'creating', attributes: [{ name: 'tier', type: 'string', required: false, minLength: 0, maxLength: 255 }] });
    await lmdb().create('d', resource(id('generic', 2), { tier: 'gold' }));
    expect(new IndexNames(engine.storage.meta).refresh().typeCode('d')).toBe(code);
    expect(search('d', { '=': { tier: 'gold' } })).toEqual([`${id('generic', 2)}@-1`]);
    expect(search('generic', { '=': { project_id: 'shared' } }, true)).toEqual([`${id('generic', 2)}@-1`]);
    expect(checkStorage(engine.storage).faults).toEqual([]);
  });
});

describe('a data directory of the layout before', () => {
  it('of NULL entries (value index 3) loses them on open, searches unchanged', async () => {
    await populate();
    const before = SEARCHES.map(([type, filter, history]) => search(type, filter, history));
    const { storage } = engine;
    const complete = entryCount(storage.resourceValues);
    const names = new IndexNames(storage.meta).refresh();
    storage.root.transactionSync(() => {
      for (let i = 0; i < 150; i++) {
        const target = { id: id('a', i), revision: -1, revisionStart: storage.resources.get(id('a', i))!.revisionStart };
        for (const field of ['user_id', 'ended_at']) {
          const entry = entryBytes(names.typeCode('a')!, names.internField(field), null, target);
          void storage.resourceValues.put(entry.key, entry.dup);
        }
      }
      void storage.meta.put('resourcesByValue', 3);
    });
    expect(entryCount(storage.resourceValues)).toBe(complete + 300);
    await engine.close();
    engine = await open();
    expect(entryCount(engine.storage.resourceValues)).toBe(complete);
    expect(SEARCHES.map(([type, filter, history]) => search(type, filter, history))).toEqual(before);
    expect(checkStorage(engine.storage).faults).toEqual([]);
  });

  it('is rebuilt on open: the old databases dropped, the new ones complete, searches unchanged', async () => {
    await populate();
    const before = SEARCHES.map(([type, filter, history]) => search(type, filter, history));
    const { storage } = engine;
    const complete = [entryCount(storage.resourceValues), entryCount(storage.resourceHistoryValues)];
    // An older release's directory: its value index databases, msgpack keys, a marker of version 1, none of the new entries.
    const old = storage.root.openDB({ name: 'resources_by_value', encoding: 'msgpack' });
    const oldHistory = storage.root.openDB({ name: 'resource_history_by_value', encoding: 'msgpack' });
    storage.root.transactionSync(() => {
      void old.put(['a', 'tier', 1, 'gold', id('a', 30)], 1);
      void old.put(['generic', 'project_id', 1, 'shared', id('a', 30)], 1);
      void oldHistory.put(['a', 'tier', 1, 'gold', id('a', 0), 1], 1);
      for (const db of [storage.resourceValues, storage.resourceHistoryValues]) for (const key of [...db.getKeys()]) void db.remove(key);
      void storage.meta.remove('resourceValueNames');
      void storage.meta.put('resourcesByValue', 1);
    });
    await engine.close();
    engine = await open();
    const dbs = [...engine.storage.root.getKeys()].map(String);
    expect(dbs).not.toContain('resources_by_value');
    expect(dbs).not.toContain('resource_history_by_value');
    expect(dbs).toContain('resource_values');
    expect([entryCount(engine.storage.resourceValues), entryCount(engine.storage.resourceHistoryValues)]).toEqual(complete);
    expect(SEARCHES.map(([type, filter, history]) => search(type, filter, history))).toEqual(before);
    expect(checkStorage(engine.storage).faults).toEqual([]);
  });
});
