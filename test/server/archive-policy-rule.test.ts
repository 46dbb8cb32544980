// Expected answers follow Gnocchi 4.4 (rest/api.py and its archive-rule.yaml
// functional tests, checked against a running reference server).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, createPolicy, json, startTestApp, USER, type TestApp } from './helpers.js';

async function startWithPolicies(): Promise<TestApp> {
  const app = await startTestApp();
  await createPolicy(app.app, { name: 'low', definition: [{ granularity: '1 hour' }] });
  await createPolicy(app.app, { name: 'medium', definition: [{ granularity: '1 minute' }] });
  await createPolicy(app.app, { name: 'high', definition: [{ granularity: '1 second' }] });
  return app;
}

// One app for the file (policies low, medium, high); each test uses rules of
// its own names. Tests that depend on the whole set of rules get an app of
// their own.
let t: TestApp;
beforeAll(async () => {
  t = await startWithPolicies();
});
afterAll(async () => {
  await t.close();
});

let counter = 0;
const uniq = (prefix = 'rule') => `${prefix}-${++counter}`;

async function createRule(name: string, pattern: string, policy: string, on: TestApp = t) {
  const res = await json(on.app, 'POST', '/v1/archive_policy_rule', {
    name,
    metric_pattern: pattern,
    archive_policy_name: policy,
  });
  expect(res.status).toBe(201);
  return res;
}

describe('archive policy rule CRUD', () => {
  it('creates a rule: 201, absolute Location, the rule', async () => {
    const name = uniq('test_rule');
    const res = await json(
      t.app,
      'POST',
      '/v1/archive_policy_rule',
      { name, metric_pattern: '*', archive_policy_name: 'low' },
      { ...ADMIN, host: 'gnocchi.example:8041' },
    );
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`http://gnocchi.example:8041/v1/archive_policy_rule/${name}`);
    expect(res.body).toEqual({ name, metric_pattern: '*', archive_policy_name: 'low' });
  });

  it('gets a rule, for any user', async () => {
    const name = uniq('test_rule');
    await createRule(name, 'disk.foo.*', 'low');
    const res = await json(t.app, 'GET', `/v1/archive_policy_rule/${name}`, undefined, USER);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name, metric_pattern: 'disk.foo.*', archive_policy_name: 'low' });
  });

  it('lists rules in reverse alphabetical order of their pattern, whatever the creation order', async () => {
    const own = await startWithPolicies();
    try {
      expect((await json(own.app, 'GET', '/v1/archive_policy_rule', undefined, USER)).body).toEqual([]);
      await createRule('b', '*', 'low', own);
      await createRule('a', 'disk.*', 'low', own);
      await createRule('c', 'disk.foo.*', 'medium', own);
      await createRule('d', 'cpu', 'high', own);
      const res = await json(own.app, 'GET', '/v1/archive_policy_rule', undefined, USER);
      expect(res.status).toBe(200);
      expect(res.body.map((r: { metric_pattern: string }) => r.metric_pattern)).toEqual(['disk.foo.*', 'disk.*', 'cpu', '*']);
      expect(res.body[0]).toEqual({ name: 'c', metric_pattern: 'disk.foo.*', archive_policy_name: 'medium' });
    } finally {
      await own.close();
    }
  });

  it('renames a rule with PATCH {name}: the old name is gone', async () => {
    const name = uniq('test_rule');
    const renamedName = `${name}_renamed`;
    await createRule(name, 'disk.*', 'low');
    const res = await json(t.app, 'PATCH', `/v1/archive_policy_rule/${name}`, { name: renamedName });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: renamedName, metric_pattern: 'disk.*', archive_policy_name: 'low' });
    const renamed = await json(t.app, 'GET', `/v1/archive_policy_rule/${renamedName}`);
    expect(renamed.body).toEqual({ name: renamedName, metric_pattern: 'disk.*', archive_policy_name: 'low' });
    const old = await json(t.app, 'GET', `/v1/archive_policy_rule/${name}`);
    expect(old.status).toBe(404);
    expect(old.body.description).toBe(`Archive policy rule ${name} does not exist`);
  });

  it('accepts a rename to the same name', async () => {
    const name = uniq('same');
    await createRule(name, 'disk.*', 'low');
    const res = await json(t.app, 'PATCH', `/v1/archive_policy_rule/${name}`, { name });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe(name);
    expect((await json(t.app, 'GET', `/v1/archive_policy_rule/${name}`)).status, 'still there').toBe(200);
  });

  it('refuses a rename to an existing name with Gnocchi\'s message', async () => {
    const r2 = uniq();
    const r3 = uniq();
    await createRule(r2, 'disk.foo.*', 'low');
    await createRule(r3, 'disk.*', 'low');
    const res = await json(t.app, 'PATCH', `/v1/archive_policy_rule/${r2}`, { name: r3 });
    expect(res.status).toBe(400);
    expect(res.body.description).toBe(`Archive policy rule ${r2} does not support change: Archive policy rule ${r3} already exists.`);
    expect((await json(t.app, 'GET', `/v1/archive_policy_rule/${r2}`)).body.metric_pattern).toBe('disk.foo.*');
    expect((await json(t.app, 'GET', `/v1/archive_policy_rule/${r3}`)).body.metric_pattern).toBe('disk.*');
  });

  it.each([
    ['an empty body', {}, "required key not provided @ data['name']", ['name']],
    ['another key', { metric_pattern: 'x' }, "extra keys not allowed @ data['metric_pattern']", ['metric_pattern']],
  ])('refuses a rename with %s', async (_name, body, reason, detail) => {
    const name = uniq();
    await createRule(name, 'disk.*', 'low');
    const res = await json(t.app, 'PATCH', `/v1/archive_policy_rule/${name}`, body);
    expect(res.status).toBe(400);
    expect(res.body.description).toEqual({ cause: 'Invalid input', reason, detail });
  });

  it('answers 403 to a rename by a non-admin user', async () => {
    const name = uniq();
    await createRule(name, 'disk.*', 'low');
    expect((await json(t.app, 'PATCH', `/v1/archive_policy_rule/${name}`, { name: 'x' }, USER)).status).toBe(403);
  });

  it('deletes a rule: 204, then 404', async () => {
    const name = uniq('test_rule');
    await createRule(name, '*', 'low');
    const res = await json(t.app, 'DELETE', `/v1/archive_policy_rule/${name}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await json(t.app, 'GET', `/v1/archive_policy_rule/${name}`)).status).toBe(404);
    const again = await json(t.app, 'DELETE', `/v1/archive_policy_rule/${name}`);
    expect(again.status).toBe(404);
    expect(again.body.description).toBe(`Archive policy rule ${name} does not exist`);
    const list = await json(t.app, 'GET', '/v1/archive_policy_rule');
    expect(list.body.map((r: { name: string }) => r.name)).not.toContain(name);
  });

  it('frees the policy once its rule is deleted', async () => {
    const policy = uniq('policy');
    await createPolicy(t.app, { name: policy, definition: [{ granularity: 1 }] });
    const rule = uniq();
    await createRule(rule, '*', policy);
    expect((await json(t.app, 'DELETE', `/v1/archive_policy/${policy}`)).status).toBe(400);
    expect((await json(t.app, 'DELETE', `/v1/archive_policy_rule/${rule}`)).status).toBe(204);
    expect((await json(t.app, 'DELETE', `/v1/archive_policy/${policy}`)).status).toBe(204);
  });

  it('answers 404 with the name, even unicode, for an unknown rule', async () => {
    const res = await json(t.app, 'DELETE', '/v1/archive_policy_rule/%E2%9C%94%C3%A9%C3%B1%E2%98%83');
    expect(res.status).toBe(404);
    expect(res.body.description).toBe('Archive policy rule ✔éñ☃ does not exist');
  });

  it('answers 403 to a deletion by a non-admin user', async () => {
    const name = uniq();
    await createRule(name, '*', 'low');
    expect((await json(t.app, 'DELETE', `/v1/archive_policy_rule/${name}`, undefined, USER)).status).toBe(403);
  });
});

describe('archive policy rule refusals', () => {
  it('answers 400 with description.cause for an unknown policy', async () => {
    const res = await json(t.app, 'POST', '/v1/archive_policy_rule', {
      name: 'test_rule_unknown_policy',
      archive_policy_name: 'not-exists',
      metric_pattern: 'disk.foo.*',
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 400,
      title: 'Bad Request',
      description: { cause: 'Archive policy does not exist', detail: 'not-exists' },
    });
  });

  it('answers 409 to a duplicate name', async () => {
    const name = uniq();
    await createRule(name, 'disk.*', 'low');
    const res = await json(t.app, 'POST', '/v1/archive_policy_rule', {
      name,
      metric_pattern: 'other.*',
      archive_policy_name: 'medium',
    });
    expect(res.status).toBe(409);
    expect(res.body.description).toBe(`Archive policy rule ${name} already exists`);
    expect((await json(t.app, 'GET', `/v1/archive_policy_rule/${name}`)).body.metric_pattern).toBe('disk.*');
  });

  it.each<[string, unknown, string, string[]]>([
    ['an extra key', { whaa: 'foobar' }, "extra keys not allowed @ data['whaa']", ['whaa']],
    [
      'a missing archive_policy_name',
      { name: 'test_rule', metric_pattern: 'disk.foo.*' },
      "required key not provided @ data['archive_policy_name']",
      ['archive_policy_name'],
    ],
    [
      'a pattern that is not a string',
      { name: 'test_rule', metric_pattern: 3, archive_policy_name: 'low' },
      "expected str for dictionary value @ data['metric_pattern']",
      ['metric_pattern'],
    ],
  ])('answers 400 to %s', async (_name, body, reason, detail) => {
    const res = await json(t.app, 'POST', '/v1/archive_policy_rule', body);
    expect(res.status).toBe(400);
    expect(res.body.description).toEqual({ cause: 'Invalid input', reason, detail });
  });

  it('answers 403 to a non-admin user', async () => {
    const res = await json(
      t.app,
      'POST',
      '/v1/archive_policy_rule',
      { name: 'x', metric_pattern: 'disk.foo.*', archive_policy_name: 'low' },
      USER,
    );
    expect(res.status).toBe(403);
  });

  it('answers 415 to a wrong content type', async () => {
    const res = await json(t.app, 'POST', '/v1/archive_policy_rule', '{}', { ...ADMIN, 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
    expect(res.text).toContain('Unsupported Media Type');
  });

  it('answers 401 without credentials', async () => {
    expect((await json(t.app, 'GET', '/v1/archive_policy_rule', undefined, {})).status).toBe(401);
  });
});

describe('policy of a metric created by name without archive_policy_name', () => {
  let own: TestApp;
  beforeAll(async () => {
    own = await startWithPolicies();
    await createRule('all', '*', 'low', own);
    await createRule('disks', 'disk.*', 'medium', own);
    await createRule('foo-disks', 'disk.foo.*', 'high', own);
    await createRule('exact', 'cpu.util', 'medium', own);
  });
  afterAll(async () => {
    await own.close();
  });

  it.each([
    ['only "*" matches', 'network.in', 'low'],
    ['"disk.*" is longer than "*"', 'disk.io', 'medium'],
    ['"disk.foo.*" is the longest of three matches', 'disk.foo.read', 'high'],
    ['an exact pattern beats "*"', 'cpu.util', 'medium'],
    ['"disk.*" needs the dot', 'diskio', 'low'],
  ])('takes the policy of the longest matching pattern: %s', async (_name, metricName, policy) => {
    const res = await json(own.app, 'POST', '/v1/metric', { name: metricName }, USER);
    expect(res.status).toBe(201);
    expect(res.body.archive_policy_name).toBe(policy);
    const get = await json(own.app, 'GET', `/v1/metric/${res.body.id}`, undefined, USER);
    expect(get.body.archive_policy.name).toBe(policy);
  });

  it('an explicit archive_policy_name wins over the rules', async () => {
    const res = await json(own.app, 'POST', '/v1/metric', { name: 'disk.foo.read', archive_policy_name: 'low' }, USER);
    expect(res.status).toBe(201);
    expect(res.body.archive_policy_name).toBe('low');
  });

  it('follows a renamed rule', async () => {
    await createRule('to-rename', 'net.*', 'high', own);
    expect((await json(own.app, 'PATCH', '/v1/archive_policy_rule/to-rename', { name: 'renamed' })).status).toBe(200);
    const res = await json(own.app, 'POST', '/v1/metric', { name: 'net.in' }, USER);
    expect(res.body.archive_policy_name).toBe('high');
  });
});

describe('no matching rule', () => {
  let own: TestApp;
  beforeAll(async () => {
    own = await startWithPolicies();
    await createRule('disks', 'disk.*', 'medium', own);
  });
  afterAll(async () => {
    await own.close();
  });

  it('answers 400 with Gnocchi\'s message naming the metric', async () => {
    const res = await json(own.app, 'POST', '/v1/metric', { name: 'cpu' }, USER);
    expect(res.status).toBe(400);
    expect(res.body.description).toBe(
      'No archive policy name specified and no archive policy rule found matching the metric name cpu',
    );
  });

  it('answers 400 for a metric without name nor policy when no rule matches ("name None")', async () => {
    const res = await json(own.app, 'POST', '/v1/metric', {}, USER);
    expect(res.status).toBe(400);
    expect(res.body.description).toBe(
      'No archive policy name specified and no archive policy rule found matching the metric name None',
    );
  });
});
