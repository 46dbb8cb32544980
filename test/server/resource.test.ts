// Expected answers follow Gnocchi 4.4 (rest/api.py resource controllers and
// its resource.yaml / resource-type.yaml / history.yaml / search.yaml tests).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN, createPolicy, json, startTestApp, USER, type TestApp } from './helpers.js';

const RID = '75c44741-cc60-4033-804e-2d3098c7d2e9';
const PATCH = { ...ADMIN, 'content-type': 'application/json-patch+json' };

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
  await createPolicy(t.app, { name: 'low', definition: [{ granularity: '1 second', points: 60 }] });
});
afterEach(async () => {
  await t.close();
});

const post = (body: unknown, headers = USER, type = 'generic') => json(t.app, 'POST', `/v1/resource/${type}`, body, headers);

describe('resource types', () => {
  it('lists generic, creates, patches and deletes a type', async () => {
    expect((await json(t.app, 'GET', '/v1/resource_type')).body).toEqual([{ name: 'generic', attributes: {}, state: 'active' }]);
    const created = await json(t.app, 'POST', '/v1/resource_type', { name: 'box', attributes: { size: { type: 'number', min: 0 } } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ name: 'box', attributes: { size: { type: 'number', required: true, min: 0, max: null } }, state: 'active' });
    expect((await post({ id: 'b1', size: 2 }, USER, 'box')).status).toBe(201);
    const patched = await json(t.app, 'PATCH', '/v1/resource_type/box', [
      { op: 'add', path: '/attributes/color', value: { type: 'string', required: true, options: { fill: 'red' } } },
      { op: 'remove', path: '/attributes/size' },
    ], PATCH);
    expect(patched.status).toBe(200);
    expect(Object.keys(patched.body.attributes)).toEqual(['color']);
    const r = await json(t.app, 'GET', '/v1/resource/box/b1', undefined, USER);
    expect(r.body.color).toBe('red');
    expect(r.body.size).toBeUndefined();
    const inUse = await json(t.app, 'DELETE', '/v1/resource_type/box');
    expect(inUse.status).toBe(400);
    expect(inUse.body.description).toBe('Resource type box is still in use');
    expect((await json(t.app, 'DELETE', '/v1/resource/box/b1', undefined, USER)).status).toBe(204);
    expect((await json(t.app, 'DELETE', '/v1/resource_type/box')).status).toBe(204);
    expect((await json(t.app, 'DELETE', '/v1/resource_type/box')).status).toBe(404);
  });

  it.each<[string, unknown, number, string | RegExp]>([
    ['as non-admin', { name: 'x' }, 403, /^""$/],
    ['twice', { name: 'generic' }, 409, 'Resource type generic already exists'],
    ['with a reserved attribute', { name: 'x', attributes: { id: { type: 'uuid' } } }, 400, /name id is invalid/],
  ])('refuses a type %s', async (_n, body, status, message) => {
    const res = await json(t.app, 'POST', '/v1/resource_type', body, _n === 'as non-admin' ? USER : ADMIN);
    expect(res.status).toBe(status);
    expect(JSON.stringify(res.body.description)).toMatch(message);
  });

  it('refuses removing an unknown attribute and other ops', async () => {
    const rm = await json(t.app, 'PATCH', '/v1/resource_type/generic', [{ op: 'remove', path: '/attributes/nope' }], PATCH);
    expect(rm.status).toBe(400);
    expect(rm.body.description).toBe("can't remove a non-existent object 'nope'");
    const replace = await json(t.app, 'PATCH', '/v1/resource_type/generic', [{ op: 'replace', path: '/attributes/x', value: {} }], PATCH);
    expect(replace.body.description).toMatchObject({ cause: 'Invalid input', detail: ['0', 'op'] });
  });
});

describe('resources', () => {
  it('creates with a transformed id, ETag and Location', async () => {
    const res = await post({ id: '1.2.3.4', started_at: '2014-01-03T02:02:02.000000', user_id: 'u', project_id: 'p' }, { ...USER, host: 'h' });
    expect(res.status).toBe(201);
    expect(res.body.id).toBe('a9c729cc-d1b0-5e6b-b5ba-8b5a7f45f1fc');
    expect(res.body.original_resource_id).toBe('1.2.3.4');
    expect(res.headers.location).toBe('http://h/v1/resource/generic/a9c729cc-d1b0-5e6b-b5ba-8b5a7f45f1fc');
    expect(res.headers.etag).toMatch(/^"[0-9a-f]{40}"$/);
    expect(Object.keys(res.body)).toHaveLength(13);
    expect(res.body).toMatchObject({ started_at: '2014-01-03T02:02:02+00:00', creator: 'foobar', created_by_user_id: 'foobar', metrics: {} });
    const byName = await json(t.app, 'GET', '/v1/resource/generic/1.2.3.4', undefined, USER);
    expect(byName.body.id).toBe(res.body.id);
  });

  it.each<[string, unknown, number, unknown]>([
    ['no id', { user_id: 'u' }, 400, { cause: 'Invalid input', reason: "required key not provided @ data['id']", detail: ['id'] }],
    ['a slash', { id: 'a/b' }, 400, { cause: 'Invalid input', reason: "'/' is not supported in resource id for dictionary value @ data['id']", detail: ['id'] }],
    ['an unknown key', { id: RID, foo: 1 }, 400, { cause: 'Invalid input', reason: "extra keys not allowed @ data['foo']", detail: ['foo'] }],
    ['ended before started', { id: RID, started_at: '2014-12-15', ended_at: '2001-12-15' }, 400, 'Start timestamp cannot be after end timestamp'],
    ['an unknown metric', { id: RID, metrics: { cpu: 'f3d41b77-0cc1-4f0b-b94a-1d5be9c0e3ea' } }, 400, 'Metric f3d41b77-0cc1-4f0b-b94a-1d5be9c0e3ea does not exist'],
    ['an unknown policy', { id: RID, metrics: { cpu: { archive_policy_name: 'nope' } } }, 400, 'Archive policy nope does not exist'],
    ['no policy rule', { id: RID, metrics: { cpu: {} } }, 400, 'No archive policy name specified and no archive policy rule found matching the metric name cpu'],
    ['a slash in a metric name', { id: RID, metrics: { 'a/b': { archive_policy_name: 'low' } } }, 400, "'/' is not supported in metric name"],
  ])('refuses a resource with %s and stores nothing', async (_n, body, status, description) => {
    const res = await post(body);
    expect(res.status).toBe(status);
    expect(res.body.description).toEqual(description);
    expect((await json(t.app, 'GET', '/v1/resource/generic', undefined, USER)).body).toEqual([]);
    expect((await json(t.app, 'GET', '/v1/metric', undefined, USER)).body).toEqual([]);
  });

  it('patches into a new revision, keeps history and answers conditional requests', async () => {
    const created = await post({ id: RID, user_id: 'a' });
    const etag = created.headers.etag as string;
    const same = await json(t.app, 'PATCH', `/v1/resource/generic/${RID}`, { user_id: 'a' }, USER);
    expect(same.body.revision_start).toBe(created.body.revision_start);
    const cached = await t.app.inject({ method: 'GET', url: `/v1/resource/generic/${RID}`, headers: { ...USER, 'if-none-match': etag } });
    expect(cached.statusCode).toBe(304);
    const patched = await json(t.app, 'PATCH', `/v1/resource/generic/${RID}`, { user_id: 'b', metrics: { cpu: { archive_policy_name: 'low' } } }, USER);
    expect(patched.status).toBe(200);
    expect(patched.body.user_id).toBe('b');
    expect(patched.body.revision_start).not.toBe(created.body.revision_start);
    expect(Object.keys(patched.body.metrics)).toEqual(['cpu']);
    const stale = await json(t.app, 'PATCH', `/v1/resource/generic/${RID}`, { user_id: 'c' }, { ...USER, 'if-match': etag });
    expect(stale.status).toBe(412);
    const history = await json(t.app, 'GET', `/v1/resource/generic/${RID}/history?sort=revision_end:asc-nullslast`, undefined, USER);
    expect(history.body.map((r: { user_id: string }) => r.user_id)).toEqual(['a', 'b']);
    expect(history.body[0].revision_end).toBe(patched.body.revision_start);
    expect(history.body[1].revision_end).toBeNull();
    const page = await json(t.app, 'GET', `/v1/resource/generic/${RID}/history?limit=1`, undefined, USER);
    expect(page.headers.link).toMatch(/marker=75c44741-cc60-4033-804e-2d3098c7d2e9%401/);
    expect((await json(t.app, 'PATCH', `/v1/resource/generic/${RID}`, { id: 'x' }, USER)).body.description.reason).toBe(
      "extra keys not allowed @ data['id']",
    );
  });

  it('lists revisions with revision_end before type, as Gnocchi orders a history row', async () => {
    await post({ id: RID });
    const keys = (body: Record<string, unknown>) => Object.keys(body).filter((k) => k === 'type' || k === 'revision_end');
    expect(keys((await json(t.app, 'GET', `/v1/resource/generic/${RID}`, undefined, USER)).body)).toEqual(['type', 'revision_end']);
    expect(keys((await json(t.app, 'GET', `/v1/resource/generic/${RID}/history`, undefined, USER)).body[0])).toEqual(['revision_end', 'type']);
    expect(keys((await json(t.app, 'GET', '/v1/resource/generic?history=true', undefined, USER)).body[0])).toEqual(['revision_end', 'type']);
    expect(keys((await json(t.app, 'GET', '/v1/resource/generic', undefined, USER)).body[0])).toEqual(['type', 'revision_end']);
  });

  it('handles named metrics and deletes them with the resource', async () => {
    await post({ id: RID, metrics: { cpu: { archive_policy_name: 'low' } } });
    const added = await json(t.app, 'POST', `/v1/resource/generic/${RID}/metric`, { mem: { archive_policy_name: 'low' } }, USER);
    expect(added.status).toBe(200);
    expect(added.body.map((m: { name: string }) => m.name).sort()).toEqual(['cpu', 'mem']);
    const dup = await json(t.app, 'POST', `/v1/resource/generic/${RID}/metric`, { mem: { archive_policy_name: 'low' } }, USER);
    expect(dup.status).toBe(409);
    expect(dup.body.description).toBe('Named metric mem already exists');
    const push = await json(t.app, 'POST', `/v1/resource/generic/${RID}/metric/cpu/measures`, [{ timestamp: '2015-03-06T14:33:57', value: 43.1 }], USER);
    expect(push.status).toBe(202);
    const read = await json(t.app, 'GET', `/v1/resource/generic/${RID}/metric/cpu/measures?refresh=true`, undefined, USER);
    expect(read.body).toEqual([['2015-03-06T14:33:57+00:00', 1.0, 43.1]]);
    expect((await json(t.app, 'GET', `/v1/resource/generic/${RID}/metric/nope/measures`, undefined, USER)).body.description).toBe(
      'Metric nope does not exist',
    );
    expect((await json(t.app, 'DELETE', `/v1/resource/generic/${RID}`, undefined, USER)).status).toBe(204);
    expect((await json(t.app, 'GET', '/v1/metric', undefined, USER)).body).toEqual([]);
  });

  it('batch-deletes by filter and refuses an empty one', async () => {
    for (const [id, started] of [['a', '2014-08-04'], ['b', '2014-08-04'], ['c', '2015-01-01']]) {
      await post({ id, started_at: started });
    }
    expect((await json(t.app, 'DELETE', '/v1/resource/generic', '', USER)).status).toBe(400);
    expect((await json(t.app, 'DELETE', '/v1/resource/generic', { and: [] }, USER)).status).toBe(400);
    expect((await json(t.app, 'DELETE', '/v1/resource/generic', { eq: { started_at: '2014-08-04' } }, USER)).body).toEqual({ deleted: 2 });
    const remaining = await json(t.app, 'GET', '/v1/resource/generic', undefined, USER);
    expect(remaining.body.map((r: { original_resource_id: string }) => r.original_resource_id)).toEqual(['c']);
  });
});

describe('search and listing', () => {
  beforeEach(async () => {
    await json(t.app, 'POST', '/v1/resource_type', { name: 'host', attributes: { name: { type: 'string' }, cpus: { type: 'number', required: false } } });
    await post({ id: 'h1', name: 'web1', cpus: 4, started_at: '2014-01-01' }, USER, 'host');
    await post({ id: 'h2', name: 'web2', cpus: 8, started_at: '2014-01-02' }, USER, 'host');
    await post({ id: 'g1', started_at: '2014-01-03', project_id: 'p' });
  });
  const search = (type: string, body: unknown, query = '') => json(t.app, 'POST', `/v1/search/resource/${type}${query}`, body, USER);
  const names = (res: { body: { original_resource_id: string }[] }) => res.body.map((r) => r.original_resource_id);

  it.each<[string, string, unknown, string, string[]]>([
    ['everything', 'generic', {}, '', ['h1', 'h2', 'g1']],
    ['a type', 'host', {}, '', ['h1', 'h2']],
    ['typed range and equality', 'host', { and: [{ '>=': { cpus: '5' } }, { like: { name: 'web%' } }] }, '', ['h2']],
    ['STRING form', 'host', '', '?filter=' + encodeURIComponent('cpus < 5 or name = "web2"'), ['h1', 'h2']],
    ['not in', 'generic', '', '?filter=' + encodeURIComponent('not project_id in [p]'), []],
    ['ne matches null', 'generic', { ne: { project_id: 'x' } }, '', ['h1', 'h2', 'g1']],
    ['sorted and paged', 'generic', {}, '?sort=started_at:desc&limit=2', ['g1', 'h2']],
  ])('%s', async (_n, type, body, query, expected) => {
    const res = await search(type, body, query);
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(expected);
  });

  it('shows a type attributes only on its listing or with details', async () => {
    const generic = await json(t.app, 'GET', '/v1/resource/generic', undefined, USER);
    expect(generic.body[0].name).toBeUndefined();
    const details = await json(t.app, 'GET', '/v1/resource/generic?details=true', undefined, USER);
    expect(details.body[0].name).toBe('web1');
    const attrs = await json(t.app, 'GET', '/v1/resource/host?attrs=id&attrs=name', undefined, USER);
    expect(Object.keys(attrs.body[0]).sort()).toEqual(['id', 'name']);
  });

  it('pages with a marker and a Link header', async () => {
    const first = await json(t.app, 'GET', '/v1/resource/generic?limit=1', undefined, USER);
    expect(first.headers.link).toContain('sort=revision_start%3Aasc&sort=started_at%3Aasc');
    const rest = await json(t.app, 'GET', `/v1/resource/generic?marker=${first.body[0].id}`, undefined, USER);
    expect(names(rest)).toEqual(['h2', 'g1']);
    expect((await json(t.app, 'GET', '/v1/resource/generic?marker=nope', undefined, USER)).body.description).toBe(
      "Invalid pagination: `Invalid marker: `nope''",
    );
  });

  it('searches history', async () => {
    await json(t.app, 'PATCH', '/v1/resource/host/h1', { name: 'db1' }, USER);
    const res = await search('host', { '=': { name: 'web1' } }, '?history=true');
    expect(res.body).toHaveLength(1);
    expect(res.body[0].revision_end).not.toBeNull();
    expect(await search('host', { '=': { name: 'web1' } }).then((r) => r.body)).toEqual([]);
  });

  it.each<[string, unknown, string, unknown]>([
    ['an unknown type', {}, 'nope', 'Resource type nope does not exist'],
    ['an unknown attribute', { '=': { foo: 1 } }, 'generic', 'Resource type generic has no foo attribute'],
    ['a badly typed value', { '=': { started_at: 'bar' } }, 'generic', "Invalid value: `bar' for field `started_at'"],
    ['an empty in', { in: { id: [] } }, 'generic', { cause: 'Invalid input', reason: "length of value must be at least 1 for dictionary value @ data['in']['id']", detail: ['in', 'id'] }],
  ])('refuses %s', async (_n, body, type, description) => {
    const res = await search(type, body);
    expect(res.status).toBe(type === 'nope' ? 404 : 400);
    expect(res.body.description).toEqual(description);
  });

  it('refuses a malformed STRING query', async () => {
    const res = await search('generic', '', '?filter=' + encodeURIComponent('id == foobar'));
    expect(res.status).toBe(400);
    expect(res.body.description).toMatch(/^Invalid filter: Expected/);
  });
});

describe('batch measures by resource', () => {
  it('creates missing metrics from rules and refuses unknown resources', async () => {
    await json(t.app, 'POST', '/v1/archive_policy_rule', { name: 'r', metric_pattern: 'auto.*', archive_policy_name: 'low' });
    await post({ id: RID });
    const ok = await json(t.app, 'POST', '/v1/batch/resources/metrics/measures?create_metrics=true', {
      [RID]: { 'auto.a': [{ timestamp: '2015-03-06T14:33:57', value: 1 }] },
    }, USER);
    expect(ok.status).toBe(202);
    const unknown = await json(t.app, 'POST', '/v1/batch/resources/metrics/measures?create_metrics=true', {
      foobar: { 'auto.a': [{ timestamp: '2015-03-06T14:33:57', value: 1 }] },
    }, USER);
    expect(unknown.body.description).toEqual({
      cause: 'Unknown resources',
      detail: [{ resource_id: '2fbfbb20-8d56-5e1e-afb9-b3007da11fdf', original_resource_id: 'foobar' }],
    });
    const noCreate = await json(t.app, 'POST', '/v1/batch/resources/metrics/measures', {
      [RID]: { 'auto.b': [{ timestamp: '2015-03-06T14:33:57', value: 1 }] },
    }, USER);
    expect(noCreate.body.description).toBe(`Unknown metrics: ${RID}/auto.b`);
  });
});
