// Expected answers follow Gnocchi 4.4 (rest/api.py MetricsController and its
// metric.yaml / metric-list.yaml / pagination.yaml functional tests, checked
// against a running reference server with max_limit = 7).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, createMetric, createPolicy, json, startTestApp, USER, type TestApp } from './helpers.js';

const HOST = 'gnocchi.example:8041';
const ORIGIN = `http://${HOST}`;

const LOW = {
  name: 'low',
  back_window: 0,
  definition: [{ granularity: '0:05:00', points: 12, timespan: '1:00:00' }],
  aggregation_methods: ['count', 'max', 'mean', 'min', 'std', 'sum'],
};

async function startWithPolicies(overrides: Parameters<typeof startTestApp>[0] = {}): Promise<TestApp> {
  const app = await startTestApp(overrides);
  await createPolicy(app.app, { name: 'low', definition: [{ granularity: '5 minutes', points: 12 }] });
  await createPolicy(app.app, { name: 'high', definition: [{ granularity: '1 second', points: 60 }] });
  return app;
}

// One app for the file (with room to count every metric in one page); the
// listing tests get one of their own, with max_limit 7.
let t: TestApp;
beforeAll(async () => {
  t = await startWithPolicies({ maxLimit: 1000 });
});
afterAll(async () => {
  await t.close();
});

async function metricCount(): Promise<number> {
  return (await json(t.app, 'GET', '/v1/metric')).body.length;
}

const normalized = (metric: { archive_policy: { aggregation_methods: string[] } }) => ({
  ...metric,
  archive_policy: { ...metric.archive_policy, aggregation_methods: [...metric.archive_policy.aggregation_methods].sort() },
});

describe('POST /v1/metric', () => {
  it('creates a metric with a policy: 201, absolute Location, creation shape', async () => {
    const res = await json(t.app, 'POST', '/v1/metric', { archive_policy_name: 'low' }, { ...USER, host: HOST });
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(res.headers.location).toBe(`${ORIGIN}/v1/metric/${res.body.id}`);
    expect(res.body).toEqual({
      id: res.body.id,
      creator: 'foobar',
      name: null,
      unit: null,
      resource_id: null,
      archive_policy_name: 'low',
      created_by_user_id: 'foobar',
      created_by_project_id: '',
    });
  });

  it('creates a named metric with a unit', async () => {
    const res = await json(t.app, 'POST', '/v1/metric', { archive_policy_name: 'high', name: 'disk.io', unit: 'ns' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'disk.io', unit: 'ns', archive_policy_name: 'high', creator: 'admin' });
    const get = await json(t.app, 'GET', `/v1/metric/${res.body.id}`);
    expect(get.body).toMatchObject({ name: 'disk.io', unit: 'ns' });
  });

  it('accepts a unit of exactly 31 characters', async () => {
    const res = await json(t.app, 'POST', '/v1/metric', { archive_policy_name: 'low', unit: 'u'.repeat(31) });
    expect(res.status).toBe(201);
    expect(res.body.unit).toBe('u'.repeat(31));
  });

  it('takes the policy from a rule when created by name only', async () => {
    const rule = await json(t.app, 'POST', '/v1/archive_policy_rule', {
      name: 'disks',
      metric_pattern: 'disk.by-rule.*',
      archive_policy_name: 'high',
    });
    expect(rule.status).toBe(201);
    const res = await json(t.app, 'POST', '/v1/metric', { name: 'disk.by-rule.io' }, USER);
    expect(res.status).toBe(201);
    expect(res.body.archive_policy_name).toBe('high');
  });

  it.each<[string, unknown, unknown]>([
    ["'/' in the name", { archive_policy_name: 'low', name: 'a/b' }, "'/' is not supported in metric name"],
    [
      'a unit over 31 characters',
      { archive_policy_name: 'low', unit: 'u'.repeat(32) },
      {
        cause: 'Invalid input',
        reason: "length of value must be at most 31 for dictionary value @ data['unit']",
        detail: ['unit'],
      },
    ],
    ['an unknown policy', { archive_policy_name: 'nope' }, 'Archive policy nope does not exist'],
    [
      'an extra key',
      { archive_policy_name: 'low', foo: 1 },
      { cause: 'Invalid input', reason: "extra keys not allowed @ data['foo']", detail: ['foo'] },
    ],
    [
      'a name that is not a string',
      { archive_policy_name: 'low', name: 3 },
      { cause: 'Invalid input', reason: "expected str for dictionary value @ data['name']", detail: ['name'] },
    ],
    ['a body that is not an object', [], { cause: 'Invalid input', reason: 'expected a dictionary', detail: [] }],
  ])('refuses %s with 400', async (_name, body, description) => {
    const before = await metricCount();
    const res = await json(t.app, 'POST', '/v1/metric', body, USER);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, title: 'Bad Request', description });
    expect(await metricCount()).toBe(before);
  });

  it.each([
    ['name', { archive_policy_name: 'low', name: null }],
    ['unit', { archive_policy_name: 'low', unit: null }],
  ])('refuses a null %s with 400 "expected str"', async (key, body) => {
    const res = await json(t.app, 'POST', '/v1/metric', body, USER);
    expect(res.status).toBe(400);
    expect(res.body.description).toEqual({
      cause: 'Invalid input',
      reason: `expected str for dictionary value @ data['${key}']`,
      detail: [key],
    });
  });

  it('answers 401 without credentials', async () => {
    expect((await json(t.app, 'POST', '/v1/metric', { archive_policy_name: 'low' }, {})).status).toBe(401);
  });

  it('answers 415 to a wrong content type', async () => {
    const res = await json(t.app, 'POST', '/v1/metric', '{"archive_policy_name": "low"}', {
      ...USER,
      'content-type': 'text/plain',
    });
    expect(res.status).toBe(415);
  });
});

describe('GET /v1/metric/{id}', () => {
  it('shows the archive_policy object and resource: null (no resource_id key)', async () => {
    const id = await createMetric(t.app, { archive_policy_name: 'low', name: 'cpu' }, USER);
    const res = await json(t.app, 'GET', `/v1/metric/${id}`, undefined, USER);
    expect(res.status).toBe(200);
    expect(normalized(res.body)).toEqual({
      id,
      creator: 'foobar',
      name: 'cpu',
      unit: null,
      resource: null,
      archive_policy: LOW,
      created_by_user_id: 'foobar',
      created_by_project_id: '',
    });
    expect(Object.keys(res.body)).not.toContain('resource_id');
  });

  it('accepts the id in upper case', async () => {
    const id = await createMetric(t.app, { archive_policy_name: 'low' });
    const res = await json(t.app, 'GET', `/v1/metric/${id.toUpperCase()}`);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(id);
  });

  it.each([
    ['a non-UUID id', 'abc'],
    ['an unknown UUID', '00000000-0000-4000-8000-000000000000'],
  ])('answers 404 "Metric ... does not exist" for %s', async (_name, id) => {
    const res = await json(t.app, 'GET', `/v1/metric/${id}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, title: 'Not Found', description: `Metric ${id} does not exist` });
  });

  it("answers 403 to another user reading or deleting an admin's metric", async () => {
    const id = await createMetric(t.app, { archive_policy_name: 'low' });
    expect((await json(t.app, 'GET', `/v1/metric/${id}`, undefined, USER)).status).toBe(403);
    expect((await json(t.app, 'DELETE', `/v1/metric/${id}`, undefined, USER)).status).toBe(403);
    expect((await json(t.app, 'GET', `/v1/metric/${id}`)).status).toBe(200);
  });

  it("lets the admin read another user's metric", async () => {
    const id = await createMetric(t.app, { archive_policy_name: 'low' }, USER);
    expect((await json(t.app, 'GET', `/v1/metric/${id}`)).status).toBe(200);
  });
});

describe('a metric of a resource, as Gnocchi renders it', () => {
  const RESOURCE_KEYS = [
    'creator', 'started_at', 'revision_start', 'ended_at', 'user_id', 'project_id', 'original_resource_id', 'id', 'type',
    'revision_end', 'created_by_user_id', 'created_by_project_id',
  ];

  it.each([
    ['by id', (_rid: string, id: string) => `/v1/metric/${id}`],
    ['by resource and name', (rid: string) => `/v1/resource/generic/${rid}/metric/disk`],
  ])('embeds the generic resource, without its metrics, when read %s', async (_name, url) => {
    const original = `shown-${Math.random()}`;
    const created = await json(t.app, 'POST', '/v1/resource/generic', {
      id: original, user_id: 'u1', project_id: 'p1', metrics: { disk: { archive_policy_name: 'low' } },
    }, USER);
    expect(created.status).toBe(201);
    const { metrics, ...resource } = created.body;
    const res = await json(t.app, 'GET', url(created.body.id, metrics.disk), undefined, USER);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual([
      'id', 'creator', 'name', 'unit', 'resource', 'archive_policy', 'created_by_user_id', 'created_by_project_id',
    ]);
    expect(Object.keys(res.body.resource)).toEqual(RESOURCE_KEYS);
    expect(res.body.resource).toEqual(resource);
    expect(res.body.resource.original_resource_id).toBe(original);
    // Listings keep the id only.
    const listed = await json(t.app, 'GET', `/v1/metric?id=${metrics.disk}`, undefined, USER);
    expect(listed.body[0].resource_id).toBe(created.body.id);
    expect(listed.body[0]).not.toHaveProperty('resource');
    const ofResource = await json(t.app, 'GET', `/v1/resource/generic/${created.body.id}/metric`, undefined, USER);
    expect(ofResource.body[0].resource_id).toBe(created.body.id);
  });

  it('shows a resource of another type by its generic attributes only', async () => {
    await json(t.app, 'POST', '/v1/resource_type', { name: 'shown-host', attributes: { rack: { type: 'string', required: false } } });
    const created = await json(t.app, 'POST', '/v1/resource/shown-host', { id: `h-${Math.random()}`, rack: 'r1', metrics: { load: { archive_policy_name: 'low' } } });
    const res = await json(t.app, 'GET', `/v1/metric/${created.body.metrics.load}`);
    expect(res.body.resource.type).toBe('shown-host');
    expect(Object.keys(res.body.resource)).toEqual(RESOURCE_KEYS);
  });
});

describe('DELETE /v1/resource/{type}/{id}/metric/{name}', () => {
  it('deletes the named metric (204), then answers 404 as every named-metric route does', async () => {
    const created = await json(t.app, 'POST', '/v1/resource/generic', {
      id: `named-${Math.random()}`, metrics: { cpu: { archive_policy_name: 'low' }, mem: { archive_policy_name: 'low' } },
    }, USER);
    const url = `/v1/resource/generic/${created.body.id}/metric/cpu`;
    const res = await json(t.app, 'DELETE', url, undefined, USER);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await json(t.app, 'GET', url, undefined, USER)).body.description).toBe('Metric cpu does not exist');
    expect((await json(t.app, 'GET', `/v1/metric/${created.body.metrics.cpu}`, undefined, USER)).status).toBe(404);
    expect((await json(t.app, 'DELETE', url, undefined, USER)).status).toBe(404);
    const resource = await json(t.app, 'GET', `/v1/resource/generic/${created.body.id}`, undefined, USER);
    expect(resource.body.metrics).toEqual({ mem: created.body.metrics.mem });
  });

  it.each([
    ['an unknown resource', '/v1/resource/generic/nowhere/metric/cpu', /^Resource [0-9a-f-]{36} does not exist$/],
    ['an unknown type', '/v1/resource/nokind/x/metric/cpu', /^Resource type nokind does not exist$/],
  ])('answers 404 for %s', async (_name, url, description) => {
    const res = await json(t.app, 'DELETE', url, undefined, USER);
    expect(res.status).toBe(404);
    expect(res.body.description).toMatch(description);
  });

  it("refuses another user's metric (403) and keeps it", async () => {
    const created = await json(t.app, 'POST', '/v1/resource/generic', { id: `guarded-${Math.random()}`, metrics: { cpu: { archive_policy_name: 'low' } } });
    const url = `/v1/resource/generic/${created.body.id}/metric/cpu`;
    expect((await json(t.app, 'DELETE', url, undefined, USER)).status).toBe(403);
    expect((await json(t.app, 'GET', url)).status).toBe(200);
  });
});

describe('DELETE /v1/metric/{id}', () => {
  it('answers 204 with no body, then 404 on read and on a second delete', async () => {
    const id = await createMetric(t.app, { archive_policy_name: 'low' }, USER);
    const res = await json(t.app, 'DELETE', `/v1/metric/${id}`, undefined, USER);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const get = await json(t.app, 'GET', `/v1/metric/${id}`, undefined, USER);
    expect(get.status).toBe(404);
    expect(get.body.description).toBe(`Metric ${id} does not exist`);
    expect((await json(t.app, 'DELETE', `/v1/metric/${id}`, undefined, USER)).status).toBe(404);
    expect((await json(t.app, 'GET', `/v1/metric?id=${id}`)).body).toEqual([]);
  });

  it('deletes a metric that has measures, and its measures', async () => {
    const id = await createMetric(t.app, { archive_policy_name: 'high' });
    const push = await json(t.app, 'POST', `/v1/metric/${id}/measures`, [{ timestamp: '2015-03-06T14:33:57', value: 1 }]);
    expect(push.status).toBe(202);
    expect((await json(t.app, 'GET', `/v1/metric/${id}/measures?refresh=true`)).body).toHaveLength(1);
    expect((await json(t.app, 'DELETE', `/v1/metric/${id}`)).status).toBe(204);
    expect((await json(t.app, 'GET', `/v1/metric/${id}/measures`)).status).toBe(404);
  });
});

describe('GET /v1/metric: listing and pagination (max_limit 7)', () => {
  const NAMES = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8'];
  let ids: string[];
  let byName: Map<string, string>;
  // These tests only read: one app, eight named metrics of admin and one
  // unnamed metric of foobar.
  let own: TestApp;

  beforeAll(async () => {
    own = await startWithPolicies();
    byName = new Map();
    for (const name of NAMES) byName.set(name, await createMetric(own.app, { archive_policy_name: 'low', name }));
    byName.set('(null)', await createMetric(own.app, { archive_policy_name: 'high' }, USER));
    ids = [...byName.values()].sort();
  });
  afterAll(async () => {
    await own.close();
  });

  const idsOf = (body: { id: string }[]) => body.map((m) => m.id);
  const get = (url: string) => json(own.app, 'GET', url, undefined, { ...ADMIN, host: HOST });

  /** Follows `Link: rel="next"` from url and returns every id seen, page by page. */
  async function crawl(url: string): Promise<string[][]> {
    const pages: string[][] = [];
    let next: string | undefined = url;
    while (next !== undefined) {
      const res = await get(next);
      expect(res.status).toBe(200);
      pages.push(idsOf(res.body));
      const link = res.headers.link as string | undefined;
      if (link === undefined) next = undefined;
      else {
        const m = /^<([^>]*)>; rel="next"$/.exec(link);
        expect(m).not.toBeNull();
        expect(m![1]!.startsWith(`${ORIGIN}/v1/metric?`)).toBe(true);
        next = m![1]!.slice(ORIGIN.length);
      }
      expect(pages.length).toBeLessThan(20);
    }
    return pages;
  }

  it('lists by id by default, capped at max_limit, with a Link to the next page', async () => {
    const res = await get('/v1/metric');
    expect(res.status).toBe(200);
    expect(idsOf(res.body)).toEqual(ids.slice(0, 7));
    expect(res.headers.link).toBe(`<${ORIGIN}/v1/metric?limit=7&marker=${ids[6]}&sort=id%3Aasc>; rel="next"`);
    expect(res.body[0]).toHaveProperty('archive_policy');
    expect(res.body[0]).toHaveProperty('resource_id', null);
  });

  it('lists metrics with the list shape (archive_policy object and resource_id)', async () => {
    const res = await get('/v1/metric?name=m1');
    expect(res.body).toHaveLength(1);
    expect(normalized(res.body[0])).toEqual({
      id: byName.get('m1'),
      creator: 'admin',
      name: 'm1',
      unit: null,
      resource_id: null,
      archive_policy: LOW,
      created_by_user_id: 'admin',
      created_by_project_id: '',
    });
  });

  it('follows Link headers through every page without repeats', async () => {
    const pages = await crawl('/v1/metric?limit=3');
    expect(pages.map((p) => p.length)).toEqual([3, 3, 3, 0].slice(0, pages.length));
    expect(pages.flat()).toEqual(ids);
  });

  it('omits the Link header on a short last page', async () => {
    const res = await get(`/v1/metric?marker=${ids[6]}`);
    expect(idsOf(res.body)).toEqual(ids.slice(7));
    expect(res.headers.link).toBeUndefined();
  });

  it('clamps a limit above max_limit to max_limit', async () => {
    const res = await get('/v1/metric?limit=100');
    expect(idsOf(res.body)).toEqual(ids.slice(0, 7));
    expect(res.headers.link).toBe(`<${ORIGIN}/v1/metric?limit=7&marker=${ids[6]}&sort=id%3Aasc>; rel="next"`);
  });

  it('starts after the marker', async () => {
    const res = await get(`/v1/metric?limit=2&marker=${ids[2]}`);
    expect(idsOf(res.body)).toEqual(ids.slice(3, 5));
  });

  it('sorts by name:desc (null name first, as PostgreSQL does) and keeps the sort in the Link', async () => {
    const expected = [byName.get('(null)'), ...[...NAMES].reverse().map((n) => byName.get(n))];
    const res = await get('/v1/metric?sort=name:desc&limit=4');
    expect(idsOf(res.body)).toEqual(expected.slice(0, 4));
    expect(res.headers.link).toBe(`<${ORIGIN}/v1/metric?limit=4&marker=${expected[3]}&sort=name%3Adesc>; rel="next"`);
    const pages = await crawl('/v1/metric?sort=name:desc&limit=4');
    expect(pages.flat()).toEqual(expected);
  });

  it('sorts by name:asc with the null name last', async () => {
    const res = await get('/v1/metric?sort=name:asc&limit=100');
    expect(res.body.map((m: { name: string | null }) => m.name)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']);
    const rest = await get(`/v1/metric?sort=name:asc&marker=${byName.get('m7')}`);
    expect(rest.body.map((m: { name: string | null }) => m.name)).toEqual(['m8', null]);
  });

  it('keeps filters in the Link header, sorted with the other parameters', async () => {
    const res = await get('/v1/metric?limit=2&creator=admin');
    expect(res.body).toHaveLength(2);
    const first = ids.filter((id) => id !== byName.get('(null)'));
    expect(res.headers.link).toBe(
      `<${ORIGIN}/v1/metric?creator=admin&limit=2&marker=${first[1]}&sort=id%3Aasc>; rel="next"`,
    );
  });

  it.each([
    ['name=', 'name=m3', () => [byName.get('m3')]],
    ['creator= (another user)', 'creator=foobar', () => [byName.get('(null)')]],
    ['creator= (admin)', 'creator=admin', () => ids.filter((id) => id !== byName.get('(null)')).slice(0, 7)],
    ['archive_policy_name=', 'archive_policy_name=high', () => [byName.get('(null)')]],
    ['a name nobody has', 'name=nope', () => []],
    ['a creator nobody is', 'creator=nobody', () => []],
    // user_id and project_id name the creator `user:project`: a basic user has no colon.
    ['user_id= (old style)', 'user_id=foobar', () => []],
    ['status=active', 'status=active&name=m3', () => [byName.get('m3')]],
    // Deleted metrics leave at once: none is ever marked for deletion.
    ['status=delete', 'status=delete', () => []],
    ['a parameter Gnocchi drops', 'colour=blue&name=m3', () => [byName.get('m3')]],
  ])('filters on %s', async (_name, query, expected) => {
    const res = await get(`/v1/metric?${query}`);
    expect(res.status).toBe(200);
    expect(idsOf(res.body)).toEqual(expected());
  });

  it.each<[string, string, unknown]>([
    [
      'a limit of 0',
      'limit=0',
      { cause: 'Argument value error', reason: "value must be at least 1 for dictionary value @ data['limit']" },
    ],
    [
      'a non-numeric limit',
      'limit=abc',
      { cause: 'Argument value error', reason: "expected int for dictionary value @ data['limit']" },
    ],
    ['an unknown status', 'status=gone', "Invalid input: not a valid value for dictionary value @ data['status']"],
    ['a filter given twice', 'name=m1&name=m2', "Invalid input: expected str for dictionary value @ data['name']"],
    [
      'an unknown sort direction',
      'sort=name:up',
      "Invalid pagination: `Unknown sort direction, must be one of: asc-nullsfirst, asc-nullslast, desc-nullsfirst, desc-nullslast'",
    ],
  ])('refuses %s with 400', async (_name, query, description) => {
    const res = await get(`/v1/metric?${query}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, title: 'Bad Request', description });
  });

  it.each([
    ['an unknown sort key', 'sort=foo:desc'],
    ['an unknown marker', 'marker=00000000-0000-4000-8000-000000000000'],
  ])('refuses %s with 400', async (_name, query) => {
    const res = await get(`/v1/metric?${query}`);
    expect(res.status).toBe(400);
  });

  it.each([
    ['an unknown sort key', 'sort=foo:desc', "Invalid pagination: `Sort key supplied is invalid: foo'"],
    [
      'an unknown marker',
      'marker=00000000-0000-4000-8000-000000000000',
      "Invalid pagination: `Invalid marker: `00000000-0000-4000-8000-000000000000''",
    ],
  ])('refuses %s with Gnocchi\'s "Invalid pagination" message', async (_name, query, description) => {
    const res = await get(`/v1/metric?${query}`);
    expect(res.body.description).toBe(description);
  });
});
