// Searches through HTTP over the value indexes (engine/search-plan.ts):
// index-backed filters across type patches, updates (history) and deletes,
// and `like` on non-text attributes, which matches the value's JSON text
// instead of converting the pattern to the attribute's type.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN, json, startTestApp, USER, type TestApp } from './helpers.js';

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp({ maxLimit: 1000 });
  await json(t.app, 'POST', '/v1/resource_type', {
    name: 'vm',
    attributes: {
      flavor: { type: 'string' },
      vcpus: { type: 'number', required: false },
      on: { type: 'bool', required: false },
      booted: { type: 'datetime', required: false },
      image: { type: 'uuid', required: false },
    },
  }, ADMIN);
  const vms = [
    { id: 'a', flavor: 'small', vcpus: 1, on: true, booted: '2024-01-01T10:00:00', image: '75c44741-cc60-4033-804e-2d3098c7d2e9' },
    { id: 'b', flavor: 'small', vcpus: 2.5, on: false, booted: '2024-02-01T10:00:00' },
    { id: 'c', flavor: 'large', vcpus: 12 },
    { id: 'd', flavor: 'large', vcpus: 2, on: true, booted: '2024-01-15T00:00:00.5' },
  ];
  for (const vm of vms) expect((await json(t.app, 'POST', '/v1/resource/vm', vm, USER)).status).toBe(201);
});
afterEach(async () => {
  await t.close();
});

const search = async (body: unknown, query = ''): Promise<string[]> => {
  const res = await json(t.app, 'POST', `/v1/search/resource/vm${query}`, body, USER);
  expect(res.status).toBe(200);
  return res.body.map((r: { original_resource_id: string }) => r.original_resource_id).sort();
};

describe('like on typed attributes', () => {
  it.each<[string, unknown, string[]]>([
    ['number, integral', { like: { vcpus: '1%' } }, ['a', 'c']],
    ['number, fraction', { like: { vcpus: '2._' } }, ['b']],
    ['number given as a number', { like: { vcpus: 2 } }, ['d']],
    ['datetime as ISO 8601', { like: { booted: '2024-01-%' } }, ['a', 'd']],
    ['datetime with microseconds', { like: { booted: '%.500000+00:00' } }, ['d']],
    ['bool', { like: { on: 'tr%' } }, ['a', 'd']],
    ['bool given as a bool', { like: { on: false } }, ['b']],
    ['uuid, partial', { like: { image: '75c44741-%' } }, ['a']],
    ['null pattern', { like: { vcpus: null } }, []],
  ])('%s', async (_name, filter, want) => {
    expect(await search(filter)).toEqual(want);
  });
});

describe('indexed searches', () => {
  it('find resources by the started_at they were created with, which is their revision_start, before and after a change', async () => {
    const startedAt = async (id: string) => {
      const res = await json(t.app, 'GET', `/v1/resource/vm/${id}`, undefined, USER);
      expect(res.body.started_at).toBe(res.body.revision_start);
      return res.body.started_at as string;
    };
    const [a, c] = [await startedAt('a'), await startedAt('c')];
    expect(await search({ '=': { started_at: a } })).toEqual(['a']);
    expect(await search({ '>=': { started_at: c } })).toEqual(['c', 'd']);
    expect(await search({ and: [{ '<': { started_at: c } }, { '=': { flavor: 'small' } }] })).toEqual(['a', 'b']);
    await json(t.app, 'PATCH', '/v1/resource/vm/a', { vcpus: 4 }, USER);
    expect(await search({ '=': { started_at: a } })).toEqual(['a']);
    expect(await search({ '=': { started_at: a } }, '?history=true')).toEqual(['a', 'a']);
    expect(await search({ '>=': { started_at: c } })).toEqual(['c', 'd']);
  });

  it('find resources by creator, the first to create (whose resources resource_values leaves to resources_by_revision_start) or another', async () => {
    for (const vm of [{ id: 'e', flavor: 'small' }, { id: 'f', flavor: 'large' }]) expect((await json(t.app, 'POST', '/v1/resource/vm', vm, ADMIN)).status).toBe(201);
    const byAdmin = async (body: unknown, query = '') => {
      const res = await json(t.app, 'POST', `/v1/search/resource/vm${query}`, body, ADMIN);
      expect(res.status).toBe(200);
      return res.body.map((r: { original_resource_id: string }) => r.original_resource_id).sort();
    };
    expect(await byAdmin({ '=': { creator: 'foobar' } })).toEqual(['a', 'b', 'c', 'd']);
    expect(await byAdmin({ '=': { creator: 'admin' } })).toEqual(['e', 'f']);
    expect(await byAdmin({ like: { creator: 'foo%' } })).toEqual(['a', 'b', 'c', 'd']);
    expect(await byAdmin({ in: { creator: ['foobar', 'admin'] } })).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(await byAdmin({ '>': { creator: 'b' } })).toEqual(['a', 'b', 'c', 'd']);
    expect(await byAdmin({ and: [{ '=': { creator: 'foobar' } }, { '=': { flavor: 'large' } }] })).toEqual(['c', 'd']);
    await json(t.app, 'PATCH', '/v1/resource/vm/a', { vcpus: 4 }, USER);
    expect(await byAdmin({ '=': { creator: 'foobar' } }, '?history=true')).toEqual(['a', 'a', 'b', 'c', 'd']);
    expect((await json(t.app, 'DELETE', '/v1/resource/vm/b', undefined, USER)).status).toBe(204);
    expect(await byAdmin({ or: [{ '=': { creator: 'foobar' } }, { '=': { flavor: 'small' } }] })).toEqual(['a', 'c', 'd', 'e']);
  });

  it('follow patches, updates and deletes', async () => {
    expect(await search({ and: [{ '=': { flavor: 'small' } }, { '>=': { vcpus: 2 } }] })).toEqual(['b']);
    await json(t.app, 'PATCH', '/v1/resource/vm/a', { flavor: 'large', vcpus: 4 }, USER);
    expect(await search({ '=': { flavor: 'large' } })).toEqual(['a', 'c', 'd']);
    expect(await search({ '=': { flavor: 'small' } }, '?history=true')).toEqual(['a', 'b']);
    expect(await search({ in: { vcpus: [1, 4, null] } }, '?history=true')).toEqual(['a', 'a']);

    const patch = await json(t.app, 'PATCH', '/v1/resource_type/vm', [
      { op: 'add', path: '/attributes/zone', value: { type: 'string', required: false, options: { fill: 'z1' } } },
      { op: 'remove', path: '/attributes/on' },
    ], { ...ADMIN, 'content-type': 'application/json-patch+json' });
    expect(patch.status).toBe(200);
    expect(await search({ '=': { zone: 'z1' } })).toEqual(['a', 'b', 'c', 'd']);
    expect(await search({ '=': { zone: 'z1' } }, '?history=true')).toEqual(['a', 'a', 'b', 'c', 'd']);
    const gone = await json(t.app, 'POST', '/v1/search/resource/vm', { '=': { on: true } }, USER);
    expect(gone.status).toBe(400);

    expect((await json(t.app, 'DELETE', '/v1/resource/vm/c', undefined, USER)).status).toBe(204);
    expect(await search({ or: [{ '=': { flavor: 'large' } }, { '<': { vcpus: 3 } }] })).toEqual(['a', 'b', 'd']);
    expect(await search({ '>': { vcpus: null } })).toEqual([]);
    expect(await search({ '!=': { vcpus: null } })).toEqual(['a', 'b', 'd']);
  });

  it('pages a planned search in the default order', async () => {
    const filter = { '>=': { vcpus: 1 } };
    const first = await json(t.app, 'POST', '/v1/search/resource/vm?limit=2', filter, USER);
    expect(first.body.map((r: { original_resource_id: string }) => r.original_resource_id)).toEqual(['a', 'b']);
    const rest = await json(t.app, 'POST', `/v1/search/resource/vm?limit=2&marker=${first.body[1].id}`, filter, USER);
    expect(rest.body.map((r: { original_resource_id: string }) => r.original_resource_id)).toEqual(['c', 'd']);
  });
});
