/**
 * What non-admin callers see and may do under the default policy. In basic
 * mode Gnocchi narrows no listing or search (only object reads and writes
 * are checked); in keystone mode listings and searches show what belongs
 * to the caller's project or was created by it, and reading metrics the
 * caller cannot see answers 403 (404 first when a metric does not exist).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, createPolicy, json, startTestApp, USER, type Headers, type TestApp } from './helpers.js';
import { SERVICE_USER, startFakeKeystone, type FakeKeystone } from './keystone-fake.js';

const POLICY = { name: 'p', definition: [{ granularity: 1, points: 10 }], aggregation_methods: ['mean'] };
const MISSING = '00000000-0000-4000-8000-000000000000';
const ids = (body: { id: string }[]) => body.map((x) => x.id).sort();

describe('basic mode, user foobar', () => {
  let t: TestApp;
  let adminResource: string;
  let ownResource: string;
  let adminMetric: string;
  let ownMetric: string;

  beforeAll(async () => {
    t = await startTestApp();
    await createPolicy(t.app, POLICY);
    adminResource = (await json(t.app, 'POST', '/v1/resource/generic', { id: 'admins' }, ADMIN)).body.id;
    ownResource = (await json(t.app, 'POST', '/v1/resource/generic', { id: 'foobars' }, USER)).body.id;
    adminMetric = (await json(t.app, 'POST', '/v1/metric', { archive_policy_name: 'p' }, ADMIN)).body.id;
    ownMetric = (await json(t.app, 'POST', '/v1/metric', { archive_policy_name: 'p' }, USER)).body.id;
  });
  afterAll(async () => t.close());

  it('lists and searches every resource and metric, as Gnocchi', async () => {
    expect(ids((await json(t.app, 'GET', '/v1/resource/generic', undefined, USER)).body)).toEqual([adminResource, ownResource].sort());
    const found = await json(t.app, 'POST', '/v1/search/resource/generic', {}, USER);
    expect(ids(found.body)).toEqual([adminResource, ownResource].sort());
    expect(ids((await json(t.app, 'GET', '/v1/metric', undefined, USER)).body)).toEqual([adminMetric, ownMetric].sort());
  });

  // {ar}, {or}: the admin's and foobar's resources; {am}, {om}: their metrics.
  const fill = (text: string) =>
    text.replace('{ar}', adminResource).replace('{or}', ownResource).replaceAll('{am}', adminMetric).replace('{om}', ownMetric);
  it.each<[string, string, string | undefined, number]>([
    ['GET', '/v1/resource/generic/{ar}', undefined, 403],
    ['GET', '/v1/resource/generic/{or}', undefined, 200],
    ['GET', '/v1/metric/{am}', undefined, 403],
    ['GET', '/v1/metric/{om}', undefined, 200],
    ['GET', '/v1/metric/{am}/measures', undefined, 403],
    ['POST', '/v1/metric/{am}/measures', '[{"timestamp": "2024-01-01T00:00:00", "value": 1}]', 403],
    ['POST', '/v1/aggregates', '{"operations": "(metric {am} mean)"}', 403],
    ['POST', '/v1/aggregates', '{"operations": "(metric {om} mean)"}', 200],
    // A metric that does not exist answers 404 before any refusal.
    ['POST', '/v1/aggregates', `{"operations": "(aggregate mean (metric ({am} mean) (${MISSING} mean)))"}`, 404],
    ['GET', '/v1/aggregation/metric?metric={am}', undefined, 403],
    ['POST', '/v1/search/metric?metric_id={am}', '{"=": 1}', 403],
    ['POST', '/v1/search/metric?metric_id={om}', '{"=": 1}', 200],
    ['GET', '/v1/status', undefined, 403],
  ])('%s %s %s', async (method, url, body, status) => {
    const res = await json(t.app, method as 'GET' | 'POST', fill(url), body === undefined ? undefined : fill(body), USER);
    expect(res.status).toBe(status);
  });
});

describe('keystone mode, users in projects', () => {
  let fake: FakeKeystone;
  let t: TestApp;
  const as: Record<string, Headers> = {};
  const r: Record<string, string> = {};
  const m: Record<string, string> = {};

  const post = async (who: string, url: string, body: unknown) => {
    const res = await json(t.app, 'POST', url, body, as[who]);
    if (res.status !== 201) throw new Error(`${url}: ${res.status} ${res.text}`);
    return res.body.id as string;
  };

  beforeAll(async () => {
    fake = await startFakeKeystone();
    t = await startTestApp({
      authMode: 'keystone',
      keystoneAuthUrl: fake.url,
      keystoneUsername: SERVICE_USER.username,
      keystonePassword: SERVICE_USER.password,
      keystoneProjectName: SERVICE_USER.projectName,
    });
    as.admin = { 'x-auth-token': fake.issue('u-admin', 'p-admin', ['admin']) };
    as.alice = { 'x-auth-token': fake.issue('u-alice', 'p1') };
    as.bob = { 'x-auth-token': fake.issue('u-bob', 'p1') };
    as.carol = { 'x-auth-token': fake.issue('u-carol', 'p2') };
    expect((await json(t.app, 'POST', '/v1/archive_policy', POLICY, as.admin)).status).toBe(201);
    // r1: created in p1 for p2; r2: admin's for p1; r3: admin's, no project; r4: carol's, no project.
    r.r1 = await post('alice', '/v1/resource/generic', { id: 'r1', project_id: 'p2' });
    r.r2 = await post('admin', '/v1/resource/generic', { id: 'r2', project_id: 'p1' });
    r.r3 = await post('admin', '/v1/resource/generic', { id: 'r3' });
    r.r4 = await post('carol', '/v1/resource/generic', { id: 'r4' });
    // m1: alice's; m2: admin's on r2 (project p1); m3: admin's; m4: carol's.
    m.m1 = await post('alice', '/v1/metric', { archive_policy_name: 'p' });
    m.m2 = await post('admin', '/v1/metric', { archive_policy_name: 'p', resource_id: r.r2, name: 'cpu' });
    m.m3 = await post('admin', '/v1/metric', { archive_policy_name: 'p' });
    m.m4 = await post('carol', '/v1/metric', { archive_policy_name: 'p' });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it.each([
    ['admin', ['r1', 'r2', 'r3', 'r4']],
    // Created by their project, or belonging to it.
    ['alice', ['r1', 'r2']],
    ['bob', ['r1', 'r2']],
    ['carol', ['r1', 'r4']],
  ])('resources listed for %s', async (who, expected) => {
    const res = await json(t.app, 'GET', '/v1/resource/generic', undefined, as[who]);
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual(expected.map((k) => r[k]).sort());
  });

  it.each([
    ['admin', ['r2', 'r3']],
    ['bob', ['r2']],
    ['carol', []],
  ])('a search narrows further for %s', async (who, expected) => {
    const res = await json(t.app, 'POST', '/v1/search/resource/generic', { like: { creator: 'u-admin:%' } }, as[who]);
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual(expected.map((k) => r[k]).sort());
  });

  it.each([
    ['admin', ['m1', 'm2', 'm3', 'm4']],
    // Created by their project, or on a resource of their project.
    ['bob', ['m1', 'm2']],
    ['carol', ['m4']],
  ])('metrics listed for %s', async (who, expected) => {
    const res = await json(t.app, 'GET', '/v1/metric', undefined, as[who]);
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual(expected.map((k) => m[k]).sort());
  });

  it('pages through a narrowed metric listing', async () => {
    const seen: string[] = [];
    let url: string | undefined = '/v1/metric?limit=1';
    while (url !== undefined) {
      const res = await json(t.app, 'GET', url, undefined, as.bob);
      expect(res.status).toBe(200);
      seen.push(...ids(res.body));
      const link = /<[^>]*?(\/v1\/metric\?[^>]*)>; rel="next"/.exec(String(res.headers.link ?? ''));
      url = res.body.length === 0 || link === null ? undefined : link[1];
    }
    expect(seen.sort()).toEqual([m.m1, m.m2].sort());
  });

  it.each([
    ['bob reads a metric on a resource of his project', 'bob', () => `/v1/metric/${m.m2}`, 200],
    ['carol does not', 'carol', () => `/v1/metric/${m.m2}`, 403],
    ['bob reads a metric created in his project', 'bob', () => `/v1/metric/${m.m1}`, 200],
    ['bob reads a resource of his project', 'bob', () => `/v1/resource/generic/${r.r2}`, 200],
    ['carol reads a resource that belongs to her project', 'carol', () => `/v1/resource/generic/${r.r1}`, 200],
    ['carol may not read one that does not', 'carol', () => `/v1/resource/generic/${r.r2}`, 403],
  ])('%s', async (_name, who, url, status) => {
    expect((await json(t.app, 'GET', url(), undefined, as[who])).status).toBe(status);
  });

  it.each([
    // As Gnocchi, metrics named by id are checked without their resource.
    ['bob, a metric created in his project', 'bob', () => `(metric ${m.m1} mean)`, 200],
    ['bob, a metric on a resource of his project', 'bob', () => `(metric ${m.m2} mean)`, 403],
    ['carol, a metric created elsewhere', 'carol', () => `(metric ${m.m1} mean)`, 403],
    ['carol, one forbidden and one missing', 'carol', () => `(aggregate mean (metric (${m.m1} mean) (${MISSING} mean)))`, 404],
  ])('aggregates by id: %s', async (_name, who, operations, status) => {
    expect((await json(t.app, 'POST', '/v1/aggregates', { operations: operations() }, as[who])).status).toBe(status);
  });

  it('aggregates by resource search only the resources the caller may see', async () => {
    const body = { resource_type: 'generic', search: {}, operations: '(metric cpu mean)' };
    expect((await json(t.app, 'POST', '/v1/aggregates', body, as.bob)).status).toBe(200);
    const carol = await json(t.app, 'POST', '/v1/aggregates', body, as.carol);
    expect(carol.status).toBe(400);
    const old = await json(t.app, 'POST', '/v1/aggregation/resource/generic/metric/cpu', undefined, as.carol);
    expect(old.status).toBe(200);
    expect(old.body).toEqual([]);
  });

  it('search metric checks `search metric` on each metric', async () => {
    expect((await json(t.app, 'POST', `/v1/search/metric?metric_id=${m.m1}`, { '=': 1 }, as.bob)).status).toBe(200);
    expect((await json(t.app, 'POST', `/v1/search/metric?metric_id=${m.m1}`, { '=': 1 }, as.carol)).status).toBe(403);
  });

  it('batch deletes only what the caller created', async () => {
    const res = await json(t.app, 'DELETE', '/v1/resource/generic', { like: { original_resource_id: '%' } }, as.carol);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deleted: 1 });
    expect((await json(t.app, 'GET', `/v1/resource/generic/${r.r4}`, undefined, as.admin)).status).toBe(404);
    expect((await json(t.app, 'GET', `/v1/resource/generic/${r.r1}`, undefined, as.admin)).status).toBe(200);
  });
});

describe('keystone mode with a policy file', () => {
  let fake: FakeKeystone;
  let t: TestApp;
  let dir: string;
  let member: Headers;
  let admin: Headers;

  beforeAll(async () => {
    fake = await startFakeKeystone();
    dir = mkdtempSync(join(tmpdir(), 'gnocchi-ts-permissions-'));
    const policyFile = join(dir, 'policy.yaml');
    // Resources: only those of the caller's project; metrics: admins only.
    writeFileSync(
      policyFile,
      [
        '"create resource": ""',
        '"list resource": "role:admin or project_id:%(project_id)s"',
        '"search resource": "role:admin"',
        '"list metric": "role:admin"',
      ].join('\n'),
    );
    t = await startTestApp({
      authMode: 'keystone',
      policyFile,
      keystoneAuthUrl: fake.url,
      keystoneUsername: SERVICE_USER.username,
      keystonePassword: SERVICE_USER.password,
      keystoneProjectName: SERVICE_USER.projectName,
    });
    member = { 'x-auth-token': fake.issue('u1', 'p1') };
    admin = { 'x-auth-token': fake.issue('u0', 'p0', ['admin']) };
    for (const [id, project, who] of [['a', 'p1', member], ['b', 'p2', member], ['c', 'p1', admin]] as const) {
      expect((await json(t.app, 'POST', '/v1/resource/generic', { id, project_id: project }, who)).status).toBe(201);
    }
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('narrows by what the rule grants: here the project only, not the creator', async () => {
    const res = await json(t.app, 'GET', '/v1/resource/generic', undefined, member);
    expect(res.body.map((x: { original_resource_id: string }) => x.original_resource_id).sort()).toEqual(['a', 'c']);
  });

  it.each([
    ['POST', '/v1/search/resource/generic'],
    ['GET', '/v1/metric'],
  ] as const)('%s %s answers 403 when the rule grants nothing to narrow to', async (method, url) => {
    const res = await json(t.app, method, url, method === 'POST' ? {} : undefined, member);
    expect(res.status).toBe(403);
    expect(res.body.description).toBe('Insufficient privileges');
    expect((await json(t.app, method, url, method === 'POST' ? {} : undefined, admin)).status).toBe(200);
  });
});
