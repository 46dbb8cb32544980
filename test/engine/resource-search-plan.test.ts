// Searches answered through the value indexes (engine/search-plan.ts) must
// answer exactly what a plain scan answers: every revision filtered by the
// compiled query, sorted, paged. Pins that through NULLs, updates (history),
// attribute patches (add with fill, remove) and deletions, for current and
// history searches, several sorts and marker paging; and that the indexes
// kept up by those writes are exactly what a rebuild on open makes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LmdbIndexStore } from '../../engine/drivers/lmdb/index-store.js';
import { Engine } from '../../engine/engine.js';
import { compareRevisions, DEFAULT_RESOURCE_SORT, parseResourceSorts, type Revision } from '../../engine/resources.js';
import { decodeKey, entryTarget } from '../../engine/resource-index-keys.js';
import { IndexNames } from '../../engine/resource-index-names.js';
import { compileQuery, type ResourceRecord } from '../../engine/resource-search.js';
import { planSearch } from '../../engine/search-plan.js';
import { validateResourceQuery, type QueryNode } from '../../formats/resource-query.js';

let dir: string;
let engine: Engine;
/** The LMDB resource index itself: these tests pin its query plans, synchronously. */
const lmdb = () => (engine.index as LmdbIndexStore).resources;

const open = () =>
  Engine.open({ dataDir: dir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });
const id = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
const uuid = (i: number) => `11111111-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
const S = 1_000_000;
const N = 240;
const NAMES = ['alpha', 'beta', 'Beta', 'gamma', 'alpha beta', '', 'é', '😀x', '\u0001ctl', 'x'.repeat(230) + 'a', 'x'.repeat(230) + 'b'];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gnocchi-search-plan-'));
  engine = await open();
  const resources = lmdb();
  await resources.createType({
    name: 'box',
    state: 'creating',
    attributes: [
      { name: 'name', type: 'string', required: false, minLength: 0, maxLength: 255 },
      { name: 'size', type: 'number', required: false, min: null, max: null },
      { name: 'on', type: 'bool', required: false },
      { name: 'seen', type: 'datetime', required: false },
      { name: 'ref', type: 'uuid', required: false },
      { name: 'doomed', type: 'string', required: false, minLength: 0, maxLength: 255 },
    ],
  });
  for (let i = 0; i < N; i++) {
    const generic = i % 7 === 0;
    await resources.create(generic ? 'generic' : 'box', {
      id: id(i),
      originalResourceId: `r${i % 50}`,
      creator: `u${i % 3}:p${i % 4}`,
      userId: i % 5 === 0 ? null : `user${i % 6}`,
      projectId: i % 9 === 0 ? null : `proj${i % 2}`,
      startedAt: S * ((i * 37) % 101),
      endedAt: i % 4 === 0 ? null : S * (200 + (i % 13)),
      attrs: generic
        ? {}
        : {
            name: i % 11 === 0 ? null : NAMES[i % NAMES.length]!,
            size: i % 8 === 0 ? null : [-2.5, -0, 0, 1, 3, 1e6][i % 6]!,
            on: i % 6 === 0 ? null : i % 2 === 0,
            seen: i % 10 === 0 ? null : S * (i % 17),
            ref: i % 3 === 0 ? null : uuid(i % 5),
            doomed: `d${i % 3}`,
          },
    });
  }
  for (let i = 1; i < N; i += 3) {
    if (i % 7 === 0) continue;
    await resources.update('box', id(i), { attrs: { size: i % 5, name: NAMES[(i + 1) % NAMES.length]! } });
    if (i % 2 === 0) await resources.update('box', id(i), { endedAt: null, userId: null });
  }
  await resources.updateTypeAttributes('box', [{ def: { name: 'tier', type: 'number', required: false, min: null, max: null }, fill: 2 }], ['doomed']);
  await resources.update('box', id(5), { attrs: { tier: 7 } });
  for (let i = 0; i < N; i += 13) await resources.delete('generic', id(i));
});

afterAll(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every revision of `type`, read straight from the stored records. */
function allRevisions(type: string, history: boolean): Revision[] {
  const { storage } = engine;
  const out: Revision[] = [];
  for (const { value } of storage.resources.getRange()) {
    const r = value as ResourceRecord;
    if (type === 'generic' || r.type === type) out.push({ ...r, revision: -1, revisionEnd: null });
  }
  if (history) {
    for (const { value } of storage.resourceHistory.getRange()) {
      const r = value as Revision;
      if (type === 'generic' || r.type === type) out.push(r);
    }
  }
  return out;
}

const key = (r: Revision) => `${r.id}@${r.revision}`;

function scan(type: string, filter: QueryNode, history: boolean, sort: string[]): string[] {
  const rt = lmdb().getType(type);
  const match = compileQuery(filter, rt);
  return allRevisions(type, history)
    .filter((r) => match(r) === true)
    .sort(compareRevisions(parseResourceSorts(sort, rt, history)))
    .map(key);
}

function pages(type: string, filter: QueryNode, history: boolean, sort: string[], limit: number): string[] {
  const sorts = parseResourceSorts(sort, lmdb().getType(type), history);
  const out: string[] = [];
  let marker: string | undefined;
  for (;;) {
    const page = lmdb().list(type, { filter, history, sorts, limit, marker });
    out.push(...page.map(key));
    if (page.length < limit) return out;
    const last = page[page.length - 1]!;
    marker = history ? `${last.id}@${last.revision}` : last.id;
  }
}

const ts = (s: number) => new Date(s * 1000).toISOString();
const BOX: [string, unknown][] = [
  ['string =', { '=': { name: 'alpha' } }],
  ['string = empty', { '=': { name: '' } }],
  ['string = non-BMP', { '=': { name: '😀x' } }],
  ['string = control char', { '=': { name: '\u0001ctl' } }],
  ['string = long, shared prefix', { '=': { name: 'x'.repeat(230) + 'b' } }],
  ['string > long prefix', { '>': { name: 'x'.repeat(230) + 'a' } }],
  ['string <', { '<': { name: 'beta' } }],
  ['string >= non-ASCII', { '>=': { name: 'é' } }],
  ['string <= above the BMP start', { '<=': { name: '\ue000' } }],
  ['string = null', { '=': { name: null } }],
  ['string != null', { '!=': { name: null } }],
  ['string != value', { '!=': { name: 'alpha' } }],
  ['string like prefix', { like: { name: 'al%' } }],
  ['string like escaped', { like: { name: 'alpha\\ %' } }],
  ['string like suffix', { like: { name: '%a' } }],
  ['string in with null', { in: { name: ['beta', null, 'gamma', 'nope'] } }],
  ['string in only null', { in: { name: [null] } }],
  ['number =', { '=': { size: 1 } }],
  ['number = zero (and -0)', { '=': { size: 0 } }],
  ['number = -0', { '=': { size: '-0' } }],
  ['number <', { '<': { size: 0.5 } }],
  ['number >=', { '>=': { size: 3 } }],
  ['number > null', { '>': { size: null } }],
  ['number like', { like: { size: '1%' } }],
  ['number in', { in: { size: [1, 3, 1e6] } }],
  ['bool = true', { '=': { on: true } }],
  ['bool = false', { '=': { on: false } }],
  ['bool = null', { '=': { on: null } }],
  ['bool = string', { '=': { on: 'true' } }],
  ['bool >= false', { '>=': { on: false } }],
  ['bool like', { like: { on: 'tr%' } }],
  ['datetime range', { and: [{ '>=': { seen: ts(3) } }, { '<': { seen: ts(9) } }] }],
  ['datetime like', { like: { seen: '1970-01-01T00:00:0%' } }],
  ['uuid =', { '=': { ref: uuid(2) } }],
  ['uuid = other spelling', { '=': { ref: uuid(3).toUpperCase() } }],
  ['uuid like', { like: { ref: '11111111-%' } }],
  ['patched attribute fill', { '=': { tier: 2 } }],
  ['patched attribute updated', { '>': { tier: 2 } }],
  ['and, equality and range', { and: [{ '=': { name: 'beta' } }, { '>=': { started_at: ts(20) } }] }],
  ['and, nothing matches', { and: [{ '=': { name: 'nope' } }, { '>=': { started_at: ts(0) } }] }],
  ['and with not', { and: [{ not: { '=': { name: 'alpha' } } }, { '<': { size: 2 } }] }],
  ['or of indexable', { or: [{ '=': { name: 'gamma' } }, { '>': { size: 100 } }, { '=': { seen: null } }] }],
  ['or with unindexable', { or: [{ '=': { name: 'gamma' } }, { '!=': { size: 1 } }] }],
  ['not', { not: { '=': { on: true } } }],
  ['id in and attribute', { and: [{ in: { id: [id(1), id(2), id(4), id(999)] } }, { '!=': { size: 3 } }] }],
  ['or of id and attribute', { or: [{ '=': { id: id(8) } }, { '=': { name: 'beta' } }] }],
];
const GENERIC: [string, unknown][] = [
  ['user_id =', { '=': { user_id: 'user1' } }],
  ['user_id = null', { '=': { user_id: null } }],
  ['project_id in', { in: { project_id: ['proj0', 'nope'] } }],
  ['creator like', { like: { creator: 'u1:%' } }],
  ['created_by_user_id', { '=': { created_by_user_id: 'u2' } }],
  ['created_by_project_id', { '=': { created_by_project_id: 'p1' } }],
  ['original_resource_id', { '=': { original_resource_id: 'r7' } }],
  ['started_at range', { and: [{ '>': { started_at: ts(10) } }, { '<=': { started_at: ts(60) } }] }],
  ['ended_at = null', { '=': { ended_at: null } }],
  ['ended_at >=', { '>=': { ended_at: ts(205) } }],
  ['lifespan', { '>': { lifespan: '1 minute' } }],
  ['type', { '=': { type: 'box' } }],
  ['revision_end = null', { '=': { revision_end: null } }],
  ['revision_end >=', { '>=': { revision_end: ts(0) } }],
  ['revision_start >', { '>': { revision_start: ts(0) } }],
];

const SORTS = [DEFAULT_RESOURCE_SORT, ['started_at:desc'], ['user_id:asc-nullsfirst', 'ended_at:desc-nullslast']];
const BOX_SORTS = [...SORTS, ['size:desc', 'name:asc']];

describe('planned searches answer what a scan answers', () => {
  const cases: [string, string, unknown, string[][]][] = [
    ...BOX.map(([name, q]) => ['box', name, q, BOX_SORTS] as [string, string, unknown, string[][]]),
    ...GENERIC.flatMap(([name, q]) => [
      ['box', name, q, SORTS] as [string, string, unknown, string[][]],
      ['generic', name, q, SORTS] as [string, string, unknown, string[][]],
    ]),
  ];
  it.each(cases)('%s: %s', (type, _name, raw, sorts) => {
    const filter = validateResourceQuery(raw, { resourceId: (v) => v }) as QueryNode;
    for (const history of [false, true]) {
      for (const sort of sorts) {
        const want = scan(type, filter, history, sort);
        expect(pages(type, filter, history, sort, 1000)).toEqual(want);
        expect(pages(type, filter, history, sort, 7)).toEqual(want);
      }
    }
  });

  it('has data where the filters match', () => {
    const filter = validateResourceQuery({ '=': { name: 'beta' } }, { resourceId: (v) => v }) as QueryNode;
    expect(scan('box', filter, false, DEFAULT_RESOURCE_SORT).length).toBeGreaterThan(5);
    expect(scan('box', filter, true, DEFAULT_RESOURCE_SORT).length).toBeGreaterThan(scan('box', filter, false, DEFAULT_RESOURCE_SORT).length);
    expect(allRevisions('box', false).some((r) => r.attrs.doomed !== undefined)).toBe(false);
  });

  it('deletes by filter what the scan selects', async () => {
    const filter = validateResourceQuery({ and: [{ '=': { name: 'gamma' } }, { '<': { size: 2 } }] }, { resourceId: (v) => v }) as QueryNode;
    const want = scan('box', filter, false, DEFAULT_RESOURCE_SORT);
    expect(want.length).toBeGreaterThan(0);
    expect(await lmdb().deleteMatching('box', filter)).toBe(want.length);
    expect(pages('box', filter, false, DEFAULT_RESOURCE_SORT, 1000)).toEqual([]);
    expect(pages('box', filter, true, DEFAULT_RESOURCE_SORT, 1000)).toEqual(scan('box', filter, true, DEFAULT_RESOURCE_SORT));
  });
});

describe('default-order pages over many candidates', () => {
  // Above SORT_CANDIDATES_MAX candidates the listing first walks every
  // resource, then narrows the candidates with the other conjuncts.
  const M = 12_000;
  beforeAll(async () => {
    const { storage } = engine;
    const resources = lmdb();
    await resources.createType({
      name: 'bulk',
      state: 'creating',
      attributes: [
        { name: 'kind', type: 'string', required: true, minLength: 0, maxLength: 255 },
        { name: 'n', type: 'number', required: true, min: null, max: null },
      ],
    });
    storage.root.transactionSync(() => {
      for (let i = 0; i < M; i++) {
        void resources.create('bulk', {
          id: `22222222-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
          originalResourceId: `b${i}`,
          creator: 'u:p',
          userId: null,
          projectId: null,
          startedAt: S * i,
          endedAt: null,
          attrs: { kind: i % 1000 === 999 ? 'rare' : i % 2 === 0 ? 'even' : 'odd', n: i % 7 },
        });
      }
      for (let i = 0; i < M; i += 4) void resources.update('bulk', `22222222-0000-4000-8000-${i.toString(16).padStart(12, '0')}`, { attrs: { n: 3 } });
    });
  });

  it.each<[string, unknown]>([
    ['dense matches', { and: [{ '=': { kind: 'even' } }, { '>=': { started_at: ts(0) } }] }],
    ['matches only late in revision order', { and: [{ '=': { kind: 'even' } }, { '>=': { started_at: ts(M - 800) } }, { '<': { n: 3 } }] }],
    ['sparse, wide range', { and: [{ '=': { kind: 'rare' } }, { '>=': { started_at: ts(0) } }] }],
    ['union of large branches', { or: [{ '=': { kind: 'odd' } }, { '=': { n: 0 } }] }],
    ['late range alone', { '>=': { started_at: ts(M - 3000) } }],
  ])('%s', (_name, raw) => {
    const filter = validateResourceQuery(raw, { resourceId: (v) => v }) as QueryNode;
    const want = scan('bulk', filter, false, DEFAULT_RESOURCE_SORT);
    expect(want.length).toBeGreaterThan(0);
    expect(pages('bulk', filter, false, DEFAULT_RESOURCE_SORT, 1000)).toEqual(want);
    expect(pages('bulk', filter, false, DEFAULT_RESOURCE_SORT, 100).slice(0, 300)).toEqual(want.slice(0, 300));
    // Other orders and history read every candidate, narrowed first.
    for (const [history, sort] of [[false, ['started_at:desc']], [true, DEFAULT_RESOURCE_SORT]] as const) {
      expect(pages('bulk', filter, history, [...sort], 2000)).toEqual(scan('bulk', filter, history, [...sort]));
    }
  });
});

describe('access path choice', () => {
  const rt = {
    name: 't',
    state: 'active' as const,
    attributes: [
      { name: 'a', type: 'string' as const, required: true },
      { name: 'b', type: 'number' as const, required: true },
    ],
  };
  /** Estimates a range by its field: a holds 10 per value, b 1000, started_at 50. */
  const estimate = (range: { field: string }) => ({ a: 10, b: 1000, started_at: 50 })[range.field] ?? 1e6;
  const plan = (raw: unknown) => {
    const p = planSearch(validateResourceQuery(raw, { resourceId: (v) => v })!, { type: rt, estimate });
    return p === undefined ? 'scan' : p.accesses.map((x) => (x.kind === 'ids' ? `ids ${x.ids.length}` : x.range.field)).join(' + ');
  };
  it.each<[unknown, string]>([
    [{ and: [{ '>=': { b: 1 } }, { '=': { a: 'x' } }, { '<': { started_at: '2024-01-01' } }] }, 'a'],
    [{ and: [{ '!=': { a: 'x' } }, { '>': { b: 1 } }] }, 'b'],
    [{ and: [{ '>': { b: null } }, { '=': { a: 'x' } }] }, ''],
    [{ or: [{ '=': { a: 'x' } }, { '<': { started_at: '2024-01-01' } }] }, 'a + started_at'],
    [{ or: [{ '=': { a: 'x' } }, { not: { '=': { b: 1 } } }] }, 'scan'],
    [{ in: { a: ['x', null, 'y'] } }, 'a + a'],
    [{ in: { id: ['i', 'j'] } }, 'ids 2'],
    [{ like: { a: 'pre%' } }, 'a'],
    [{ like: { a: '%suffix' } }, 'scan'],
    [{ like: { b: '1%' } }, 'scan'],
    [{ '!=': { a: null } }, 'scan'],
    // NULL is filed by absence, except revision_end, which resources_by_revision_start answers.
    [{ '=': { a: null } }, 'scan'],
    [{ and: [{ '=': { a: null } }, { '>': { b: 1 } }] }, 'b'],
    [{ '=': { revision_end: null } }, 'revision_end'],
    [{ '=': { lifespan: '1h' } }, 'scan'],
    [{ '=': { created_by_user_id: 'u' } }, 'creator'],
  ])('%j reads %s', (raw, want) => {
    expect(plan(raw)).toBe(want);
  });
});

describe('rebuilding the value indexes on open', () => {
  it('makes exactly the entries the writes kept up', async () => {
    const { storage } = engine;
    // Codes are given anew by a rebuild: entries compare by their names.
    const entries = () => {
      const names = new IndexNames(engine.storage.meta).refresh();
      return [engine.storage.resourceValues, engine.storage.resourceHistoryValues].map((db, history) =>
        [...db.getRange()]
          .map(({ key, value }) => {
            const { typeCode, fieldCode, value: v } = decodeKey(key);
            return JSON.stringify([names.typeName(typeCode), names.fieldName(fieldCode), v, entryTarget(key, value, history === 1)]);
          })
          .sort(),
      );
    };
    const kept = entries();
    expect(kept[0]!.length).toBeGreaterThan(1000);
    expect(kept[1]!.length).toBeGreaterThan(1000);
    storage.root.transactionSync(() => {
      for (const db of [storage.resourceValues, storage.resourceHistoryValues]) for (const key of [...db.getKeys()]) void db.remove(key);
      void storage.meta.remove('resourcesByValue');
    });
    await engine.close();
    engine = await open();
    expect(entries()).toEqual(kept);
  });
});
