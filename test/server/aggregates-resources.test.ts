// /v1/aggregates with resource_type + search (names, wildcards, groupby,
// use_history) and the deprecated /v1/aggregation/resource/{type}/metric/{name},
// through the real app. Expected values computed by hand.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, createPolicy, json, startTestApp, USER, type Headers, type TestApp } from './helpers.js';

let t: TestApp;

const R1 = '11111111-1111-4111-8111-111111111111';
const R2 = '22222222-2222-4222-8222-222222222222';
const R3 = '33333333-3333-4333-8333-333333333333';
const H1 = '44444444-4444-4444-8444-444444444444';
const H2 = '55555555-5555-4555-8555-555555555555';
const P1 = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const P2 = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';
const U1 = 'cccccccc-cccc-4ccc-8ccc-cccccccccccc';

const T1 = '2015-03-06T14:33:57';
const T2 = '2015-03-06T14:34:12';

async function ok(method: 'POST' | 'PATCH', url: string, body: unknown, headers: Headers = USER): Promise<any> {
  const res = await json(t.app, method, url, body, headers);
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.text}`);
  return res.body;
}

const push = (id: string, metric: string, measures: unknown, headers: Headers = USER) =>
  ok('POST', `/v1/resource/generic/${id}/metric/${metric}/measures`, measures, headers);

// History grouping: measures placed around the time of a change of project.
let changedAt = 0;
let before = '';
let after = '';
const minute = (micros: number) => new Date(Math.floor(micros / 60e6) * 60e3).toISOString().replace('.000Z', '+00:00');

beforeAll(async () => {
  t = await startTestApp();
  await createPolicy(t.app, { name: 'low', definition: [{ granularity: '1 second' }, { granularity: '300 seconds' }] });
  await createPolicy(t.app, { name: 'odd', definition: [{ granularity: '5 second' }] });
  await createPolicy(t.app, { name: 'minute', definition: [{ granularity: '60 seconds', points: 1440 }] });
  const low = { archive_policy_name: 'low' };
  await ok('POST', '/v1/resource/generic', { id: R1, user_id: U1, project_id: P1, metrics: { 'cpu.util': low, 'cpu.idle': low, noway: low } });
  await ok('POST', '/v1/resource/generic', { id: R2, user_id: U1, project_id: P1, metrics: { 'cpu.util': low } });
  await ok('POST', '/v1/resource/generic', { id: R3, user_id: U1, project_id: P2, metrics: { 'cpu.util': low } });
  await push(R1, 'cpu.util', [{ timestamp: T1, value: 43.1 }, { timestamp: T2, value: 12 }]);
  await push(R1, 'noway', [{ timestamp: T1, value: 1 }]);
  await push(R2, 'cpu.util', [{ timestamp: T1, value: 23 }, { timestamp: T2, value: 8 }]);
  await push(R3, 'cpu.util', [{ timestamp: T1, value: 230 }, { timestamp: T2, value: 45.41 }]);

  // Admin-owned resources for history and permissions.
  const per = { archive_policy_name: 'minute' };
  await ok('POST', '/v1/resource/generic', { id: H1, project_id: P1, metrics: { load: per } }, ADMIN);
  await ok('POST', '/v1/resource/generic', { id: H2, project_id: P1, metrics: { load: per } }, ADMIN);
  const patched = await ok('PATCH', `/v1/resource/generic/${H1}`, { project_id: P2 }, ADMIN);
  changedAt = Date.parse(patched.revision_start) * 1000;
  before = minute(changedAt - 10 * 60e6);
  after = minute(changedAt + 10 * 60e6);
  await push(H1, 'load', [{ timestamp: before, value: 1 }, { timestamp: after, value: 5 }], ADMIN);
  await push(H2, 'load', [{ timestamp: before, value: 3 }, { timestamp: after, value: 7 }], ADMIN);
});

afterAll(async () => {
  await t.close();
});

const aggregates = (query: string, body: unknown, headers: Headers = USER) =>
  json(t.app, 'POST', `/v1/aggregates?refresh=true${query}`, body, headers);

const byUser = { resource_type: 'generic', search: `user_id = '${U1}'` };

describe('POST /v1/aggregates with resources', () => {
  it.each<[string, string, Record<string, unknown>, unknown]>([
    [
      'aggregates a name across the resources (STRING search)',
      '',
      { ...byUser, operations: '(aggregate mean (metric cpu.util mean))' },
      {
        aggregated: [
          // 300 s: means of (27.55, 15.5, 137.705); 1 s: means of the three values
          ['2015-03-06T14:30:00+00:00', 300, (27.55 + 15.5 + 137.705) / 3],
          ['2015-03-06T14:33:57+00:00', 1, (43.1 + 23 + 230) / 3],
          ['2015-03-06T14:34:12+00:00', 1, (12 + 8 + 45.41) / 3],
        ],
      },
    ],
    [
      'aggregates with a JSON search',
      '&granularity=1',
      { resource_type: 'generic', search: { '=': { project_id: P1 } }, operations: '(aggregate max (metric cpu.util mean))' },
      { aggregated: [['2015-03-06T14:33:57+00:00', 1, 43.1], ['2015-03-06T14:34:12+00:00', 1, 12]] },
    ],
    [
      'answers per resource and metric name for a bare metric with wildcards',
      '&granularity=1',
      { resource_type: 'generic', search: { '=': { id: R1 } }, operations: '(metric (cpu.* mean) (*way max))' },
      {
        [R1]: {
          'cpu.util': { mean: [['2015-03-06T14:33:57+00:00', 1, 43.1], ['2015-03-06T14:34:12+00:00', 1, 12]] },
          'cpu.idle': { mean: [] },
          noway: { max: [['2015-03-06T14:33:57+00:00', 1, 1]] },
        },
      },
    ],
    [
      'computes on the per-resource series',
      '&granularity=1',
      { resource_type: 'generic', search: { in: { id: [R2, R3] } }, operations: '(* 2 (metric cpu.util mean))' },
      {
        [R2]: { 'cpu.util': { mean: [['2015-03-06T14:33:57+00:00', 1, 46], ['2015-03-06T14:34:12+00:00', 1, 16]] } },
        [R3]: { 'cpu.util': { mean: [['2015-03-06T14:33:57+00:00', 1, 460], ['2015-03-06T14:34:12+00:00', 1, 90.82]] } },
      },
    ],
  ])('%s', async (_name, query, body, measures) => {
    const res = await aggregates(query, body);
    expect(res.status).toBe(200);
    expect(res.body.measures).toEqual(measures);
  });

  it('lists the resources used on details', async () => {
    const res = await aggregates('&details=true', { ...byUser, operations: '(aggregate mean (metric noway mean))' });
    expect(res.status).toBe(200);
    expect(res.body.references.map((r: any) => r.id)).toEqual([R1]);
    expect(res.body.references[0].metrics).toHaveProperty('noway');
    expect(res.body.references[0].project_id).toBe(P1);
  });

  it('groups by the current attribute values, in sorted order', async () => {
    const res = await aggregates('&groupby=project_id&groupby=user_id&groupby=project_id&granularity=1', {
      ...byUser,
      operations: '(aggregate sum (metric cpu.util mean))',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        group: { project_id: P1, user_id: U1 },
        measures: { measures: { aggregated: [['2015-03-06T14:33:57+00:00', 1, 66.1], ['2015-03-06T14:34:12+00:00', 1, 20]] } },
      },
      {
        group: { project_id: P2, user_id: U1 },
        measures: { measures: { aggregated: [['2015-03-06T14:33:57+00:00', 1, 230], ['2015-03-06T14:34:12+00:00', 1, 45.41]] } },
      },
    ]);
  });

  it('leaves out groups without a matching metric', async () => {
    const res = await aggregates('&groupby=id&granularity=1', { ...byUser, operations: '(aggregate mean (metric noway mean))' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([{ group: { id: R1 }, measures: { measures: { aggregated: [['2015-03-06T14:33:57+00:00', 1, 1]] } } }]);
  });

  it('groups by the last value without use_history', async () => {
    const res = await aggregates('&groupby=project_id', {
      resource_type: 'generic',
      search: { in: { id: [H1, H2] } },
      operations: '(aggregate mean (metric load mean))',
    }, ADMIN);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { group: { project_id: P1 }, measures: { measures: { aggregated: [[before, 60, 3], [after, 60, 7]] } } },
      { group: { project_id: P2 }, measures: { measures: { aggregated: [[before, 60, 1], [after, 60, 5]] } } },
    ]);
  });

  it('splits measures by the value at their time with use_history', async () => {
    const res = await aggregates('&groupby=project_id&use_history=true', {
      resource_type: 'generic',
      search: { in: { id: [H1, H2] } },
      operations: '(aggregate mean (metric load mean))',
    }, ADMIN);
    expect(res.status).toBe(200);
    // H1 is in P1 until the change (value 1), in P2 after it (value 5).
    expect(res.body).toEqual([
      { group: { project_id: P1 }, measures: { measures: { aggregated: [[before, 60, (1 + 3) / 2], [after, 60, 7]] } } },
      { group: { project_id: P2 }, measures: { measures: { aggregated: [[after, 60, 5]] } } },
    ]);
  });

  it('use_history keeps only the revisions inside the window', async () => {
    const start = encodeURIComponent(new Date(changedAt / 1000 + 60e3).toISOString());
    const res = await aggregates(`&groupby=project_id&use_history=yes&start=${start}`, {
      resource_type: 'generic',
      search: { '=': { id: H1 } },
      operations: '(metric load mean)',
    }, ADMIN);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([{ group: { project_id: P2 }, measures: { measures: { [H1]: { load: { mean: [[after, 60, 5]] } } } } }]);
  });

  it.each<[string, string, Record<string, unknown>, number, unknown]>([
    [
      'no metric matches',
      '',
      { ...byUser, operations: '(aggregate mean (metric (notexists mean) (foobar mean)))' },
      400,
      { cause: 'Metrics not found', detail: ['foobar', 'notexists'] },
    ],
    [
      'no metric matches in any group',
      '&groupby=id',
      { ...byUser, operations: '(metric notexists mean)' },
      400,
      { cause: 'Metrics not found', detail: ['notexists'] },
    ],
    [
      'an unknown resource type',
      '',
      { resource_type: 'nope', search: {}, operations: '(metric cpu mean)' },
      400,
      { cause: 'Resource type does not exist', detail: 'nope' },
    ],
    [
      'a groupby attribute that cannot be sorted on',
      '&groupby=unit',
      { ...byUser, operations: '(metric cpu.util mean)' },
      400,
      "Invalid pagination: `Sort key supplied is invalid: unit'",
    ],
    [
      'an unknown search attribute',
      '',
      { resource_type: 'generic', search: { '=': { foo: 1 } }, operations: '(metric cpu.util mean)' },
      400,
      'Resource type generic has no foo attribute',
    ],
    [
      'an unknown search operator',
      '',
      { resource_type: 'generic', search: { wat: { foo: 1 } }, operations: '(metric cpu.util mean)' },
      400,
      { cause: 'Invalid input', reason: "extra keys not allowed @ data['search']['wat']", detail: ['search', 'wat'] },
    ],
    [
      'a search that is neither an object nor a string',
      '',
      { resource_type: 'generic', search: 3, operations: '(metric cpu.util mean)' },
      400,
      { cause: 'Invalid input', reason: "expected a dictionary for dictionary value @ data['search']", detail: ['search'] },
    ],
    [
      'granularities the series do not share',
      '',
      { resource_type: 'generic', search: {}, operations: '(aggregate mean (metric cpu.util mean))', __odd: true },
      400,
      undefined,
    ],
  ])('refuses %s', async (_name, query, body, status, description) => {
    if ('__odd' in body) {
      await ok('POST', '/v1/resource/generic', { id: 'odd-one', metrics: { 'cpu.util': { archive_policy_name: 'odd' } } });
      const { __odd, ...rest } = body;
      const res = await aggregates(query, rest);
      expect(res.status).toBe(status);
      expect(res.body.description.cause).toBe("Metrics can't being aggregated");
      expect(res.body.description.reason).toBe('No granularity match');
      expect(res.body.description.detail).toHaveLength(4);
      await json(t.app, 'DELETE', '/v1/resource/generic/odd-one', undefined, USER);
      return;
    }
    const res = await aggregates(query, body);
    expect(res.status).toBe(status);
    expect(res.body.description).toEqual(description);
  });

  it('refuses an unparseable STRING search', async () => {
    const res = await aggregates('', { resource_type: 'generic', search: 'id = ', operations: '(metric cpu.util mean)' });
    expect(res.status).toBe(400);
    expect(res.body.description).toMatch(/^Invalid filter: /);
  });

  it('refuses a bad use_history value', async () => {
    const res = await aggregates('&groupby=id&use_history=maybe', { ...byUser, operations: '(metric cpu.util mean)' });
    expect(res.status).toBe(400);
  });
});

describe('POST /v1/aggregation/resource/{type}/metric/{name}', () => {
  const url = (name: string, query = '') => `/v1/aggregation/resource/generic/metric/${name}?refresh=true${query}`;

  it.each<[string, string, string, unknown, unknown]>([
    [
      'a mean of means over a JSON search',
      'cpu.util',
      '&granularity=1',
      { '=': { project_id: P1 } },
      [['2015-03-06T14:33:57+00:00', 1, 33.05], ['2015-03-06T14:34:12+00:00', 1, 10]],
    ],
    [
      'a reaggregation with a STRING filter',
      'cpu.util',
      `&granularity=1&reaggregation=max&filter=${encodeURIComponent(`user_id='${U1}'`)}`,
      undefined,
      [['2015-03-06T14:33:57+00:00', 1, 230], ['2015-03-06T14:34:12+00:00', 1, 45.41]],
    ],
    [
      'a resample before reaggregation',
      'cpu.util',
      '&granularity=1&resample=60&aggregation=max&reaggregation=sum',
      { '=': { project_id: P1 } },
      [['2015-03-06T14:33:00+00:00', 60, 66.1], ['2015-03-06T14:34:00+00:00', 60, 20]],
    ],
    ['no metric of that name', 'nope', '', {}, []],
  ])('%s', async (_name, metric, query, body, expected) => {
    const res = await json(t.app, 'POST', url(metric, query), body, USER);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expected);
  });

  it('groups by attribute values', async () => {
    const res = await json(t.app, 'POST', url('cpu.util', '&granularity=1&groupby=project_id&aggregation=min'), { '=': { user_id: U1 } }, USER);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { group: { project_id: P1 }, measures: [['2015-03-06T14:33:57+00:00', 1, 23], ['2015-03-06T14:34:12+00:00', 1, 8]] },
      { group: { project_id: P2 }, measures: [['2015-03-06T14:33:57+00:00', 1, 230], ['2015-03-06T14:34:12+00:00', 1, 45.41]] },
    ]);
  });

  it.each<[string, 'GET' | 'POST', string, unknown, number, unknown]>([
    ['an invalid groupby', 'POST', url('cpu.util', '&groupby=thisisdumb'), {}, 400, 'Invalid groupby attribute'],
    ['an unknown resource type', 'POST', '/v1/aggregation/resource/notexists/metric/cpu.util', {}, 404, 'Resource type notexists does not exist'],
    ['GET', 'GET', url('cpu.util'), undefined, 405, undefined],
    ['a missing metric name', 'POST', '/v1/aggregation/resource/generic/metric', {}, 405, undefined],
    ['a bad path', 'POST', '/v1/aggregation/resource/generic/notmetric/cpu.util', {}, 404, undefined],
    ['a bad resample', 'POST', url('cpu.util', '&resample=abc&granularity=1'), {}, 400, undefined],
    ['a resample without granularity', 'POST', url('cpu.util', '&resample=60'), {}, 400, 'A granularity must be specified to resample'],
    [
      'a bad search',
      'POST',
      url('cpu.util'),
      { wat: {} },
      400,
      { cause: 'Invalid input', reason: "extra keys not allowed @ data['wat']", detail: ['wat'] },
    ],
  ])('refuses %s', async (_name, method, path, body, status, description) => {
    const res = await json(t.app, method, path, body, USER);
    expect(res.status).toBe(status);
    if (description !== undefined) expect(res.body.description).toEqual(description);
  });
});

describe('permissions in basic mode', () => {
  const search = { resource_type: 'generic', search: { '=': { id: H2 } }, operations: '(metric load mean)' };

  it('applies no policy to /v1/aggregates over resources', async () => {
    const res = await aggregates('', search, USER);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.measures)).toEqual([H2]);
  });

  it('checks get metric on the deprecated endpoint', async () => {
    const denied = await json(t.app, 'POST', '/v1/aggregation/resource/generic/metric/load', { '=': { id: H2 } }, USER);
    expect(denied.status).toBe(403);
    const allowed = await json(t.app, 'POST', '/v1/aggregation/resource/generic/metric/load', { '=': { id: H2 } }, ADMIN);
    expect(allowed.status).toBe(200);
    expect(allowed.body).toEqual([[before, 60, 3], [after, 60, 7]]);
  });
});

describe('a selection spanning many listing pages', () => {
  // 15 resources in 3 projects read 2 at a time; 5 resources x 2
  // granularities per group is enough to send each group to the 2 workers.
  let p: TestApp;
  const projects = [P1, P2, 'dddddddd-dddd-4ddd-8ddd-dddddddddddd'];
  const resources = Array.from({ length: 15 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);

  beforeAll(async () => {
    p = await startTestApp({ maxLimit: 2, workers: 2 });
    await createPolicy(p.app, { name: 'two', definition: [{ granularity: '1 second' }, { granularity: '60 seconds' }] });
    for (const [i, id] of resources.entries()) {
      const body = { id, user_id: U1, project_id: projects[i % 3], metrics: { m: { archive_policy_name: 'two' } } };
      const res = await json(p.app, 'POST', '/v1/resource/generic', body, ADMIN);
      expect(res.status).toBe(201);
      const measures = [{ timestamp: T1, value: i }, { timestamp: T2, value: 2 * i }];
      expect((await json(p.app, 'POST', `/v1/resource/generic/${id}/metric/m/measures`, measures, ADMIN)).status).toBe(202);
    }
  });

  afterAll(async () => {
    await p.close();
  });

  const select = { resource_type: 'generic', search: { '=': { user_id: U1 } }, operations: '(aggregate sum (metric m mean))' };
  // Group k holds resources k, k+3, ..., k+12: their values sum to 5k + 30 at T1, twice that at T2.
  const sums = (s: number) => [
    ['2015-03-06T14:33:00+00:00', 60, s],
    ['2015-03-06T14:34:00+00:00', 60, 2 * s],
    ['2015-03-06T14:33:57+00:00', 1, s],
    ['2015-03-06T14:34:12+00:00', 1, 2 * s],
  ];

  it.each(['', '&use_history=true'])('groups every page in order (%s)', async (history) => {
    const res = await json(p.app, 'POST', `/v1/aggregates?refresh=true&groupby=project_id${history}`, select, ADMIN);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(projects.map((id, k) => ({ group: { project_id: id }, measures: { measures: { aggregated: sums(5 * k + 30) } } })));
  });

  it('aggregates and lists every resource without groupby', async () => {
    const res = await json(p.app, 'POST', '/v1/aggregates?refresh=true&details=true', select, ADMIN);
    expect(res.status).toBe(200);
    expect(res.body.measures).toEqual({ aggregated: sums(105) });
    expect(res.body.references.map((r: { id: string }) => r.id)).toEqual(resources);
  });
});
