// Expected answers follow Gnocchi 4.4 (rest/api.py, archive_policy.py and
// its archive.yaml functional tests, checked against a running reference
// server); durations are Python's str(timedelta).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN, createMetric, createPolicy, json, startTestApp, USER, type TestApp } from './helpers.js';

const HOST = { host: 'gnocchi.example:8041' };
const DEFAULT_METHODS = ['count', 'max', 'mean', 'min', 'std', 'sum'];

const BASE = ['mean', 'sum', 'last', 'max', 'min', 'std', 'median', 'first', 'count'];
const PCT = Array.from({ length: 99 }, (_, i) => `${i + 1}pct`);
const ALL_METHODS = [...BASE, ...PCT, ...BASE.map((m) => `rate:${m}`), ...PCT.map((m) => `rate:${m}`)];

const sorted = (xs: readonly string[]) => [...xs].sort();

// One app for the file: every test works on policies of its own name.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

let counter = 0;
const uniq = (prefix = 'p') => `${prefix}-${++counter}`;

async function policyCount(): Promise<number> {
  return (await json(t.app, 'GET', '/v1/archive_policy')).body.length;
}

describe('POST /v1/archive_policy: creation', () => {
  it.each([
    [
      'granularity and points give the timespan',
      { granularity: '1 minute', points: 60 },
      { granularity: '0:01:00', points: 60, timespan: '1:00:00' },
    ],
    [
      'granularity and timespan give the points',
      { granularity: '1 hour', timespan: '30 days' },
      { granularity: '1:00:00', points: 720, timespan: '30 days, 0:00:00' },
    ],
    [
      'points and timespan give a fractional granularity',
      { points: 1000, timespan: '1 hour' },
      { granularity: '0:00:03.600000', points: 1000, timespan: '1:00:00' },
    ],
    [
      'a timespan that is not a multiple of the granularity is rounded down to whole points',
      { granularity: '7s', timespan: '1 hour' },
      { granularity: '0:00:07', points: 514, timespan: '0:59:58' },
    ],
    [
      'a bare number granularity is seconds',
      { granularity: 10, points: 20 },
      { granularity: '0:00:10', points: 20, timespan: '0:03:20' },
    ],
    [
      'day durations are written "N days, H:MM:SS"',
      { granularity: '1 day', points: 2 },
      { granularity: '1 day, 0:00:00', points: 2, timespan: '2 days, 0:00:00' },
    ],
    [
      'all three consistent fields are accepted',
      { granularity: '1 second', points: 60, timespan: '0:01:00' },
      { granularity: '0:00:01', points: 60, timespan: '0:01:00' },
    ],
    [
      'a granularity alone leaves points and timespan null',
      { granularity: '2 second' },
      { granularity: '0:00:02', points: null, timespan: null },
    ],
  ])('%s', async (_name, item, expected) => {
    const res = await json(t.app, 'POST', '/v1/archive_policy', { name: uniq(), definition: [item] });
    expect(res.status).toBe(201);
    expect(res.body.definition).toEqual([expected]);
  });

  it('answers 201 with an absolute Location, the policy and the default methods', async () => {
    const name = uniq('medium');
    const res = await json(
      t.app,
      'POST',
      '/v1/archive_policy',
      { name, definition: [{ granularity: '1 second', points: 20 }, { granularity: '2 second' }] },
      { ...ADMIN, ...HOST },
    );
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`http://gnocchi.example:8041/v1/archive_policy/${name}`);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect({ ...res.body, aggregation_methods: sorted(res.body.aggregation_methods) }).toEqual({
      name,
      back_window: 0,
      definition: [
        { granularity: '0:00:01', points: 20, timespan: '0:00:20' },
        { granularity: '0:00:02', points: null, timespan: null },
      ],
      aggregation_methods: DEFAULT_METHODS,
    });
  });

  it('percent-encodes a unicode name in the Location header', async () => {
    const res = await json(
      t.app,
      'POST',
      '/v1/archive_policy',
      { name: '✔éñ☃', definition: [{ granularity: '1 minute', points: 20 }] },
      { ...ADMIN, ...HOST },
    );
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe('http://gnocchi.example:8041/v1/archive_policy/%E2%9C%94%C3%A9%C3%B1%E2%98%83');
    const get = await json(t.app, 'GET', '/v1/archive_policy/%E2%9C%94%C3%A9%C3%B1%E2%98%83');
    expect(get.status).toBe(200);
    expect(get.body.name).toBe('✔éñ☃');
  });

  it.each([
    ['back_window given is echoed', { back_window: 1 }, 1],
    ['back_window omitted defaults to 0', {}, 0],
    ['back_window 0 is echoed', { back_window: 0 }, 0],
  ])('%s', async (_name, extra, expected) => {
    const name = uniq('bw');
    const res = await json(t.app, 'POST', '/v1/archive_policy', {
      name,
      definition: [{ granularity: '10s', points: 20 }],
      ...extra,
    });
    expect(res.status).toBe(201);
    expect(res.body.back_window).toBe(expected);
    expect(res.body.definition[0].timespan).toBe('0:03:20');
    expect((await json(t.app, 'GET', `/v1/archive_policy/${name}`)).body.back_window).toBe(expected);
  });
});

describe('aggregation_methods forms', () => {
  it.each<[string, string[] | undefined, string[]]>([
    ['omitted: the deployment default list', undefined, DEFAULT_METHODS],
    ['a plain list is used as is', ['mean', 'max'], ['max', 'mean']],
    ['"+" adds to the default list', ['+median'], [...DEFAULT_METHODS, 'median']],
    ['"-" removes from the default list', ['-mean', '-count'], ['max', 'min', 'std', 'sum']],
    ['"+" and "-" combine on the default list', ['+median', '-std'], ['count', 'max', 'mean', 'median', 'min', 'sum']],
    ['"*" is every supported method', ['*'], ALL_METHODS],
    ['"*" with "-" removes from every method', ['*', '-std'], ALL_METHODS.filter((m) => m !== 'std')],
    ['rate: methods', ['rate:mean', 'rate:last'], ['rate:last', 'rate:mean']],
    ['Npct and rate:Npct', ['5pct', 'rate:95pct'], ['5pct', 'rate:95pct']],
    ['"+" with a percentile and a rate method', ['+99pct', '+rate:sum'], [...DEFAULT_METHODS, '99pct', 'rate:sum']],
  ])('%s', async (_name, methods, expected) => {
    const name = uniq('am');
    const body: Record<string, unknown> = { name, definition: [{ granularity: 60 }] };
    if (methods !== undefined) body.aggregation_methods = methods;
    const res = await json(t.app, 'POST', '/v1/archive_policy', body);
    expect(res.status).toBe(201);
    expect(sorted(res.body.aggregation_methods)).toEqual(sorted(expected));
    const get = await json(t.app, 'GET', `/v1/archive_policy/${name}`);
    expect(sorted(get.body.aggregation_methods)).toEqual(sorted(expected));
  });

  it('uses the configured default_aggregation_methods for omitted and +/- lists', async () => {
    const custom = await startTestApp({ defaultAggregationMethods: ['mean', 'last'] });
    try {
      const a = await json(custom.app, 'POST', '/v1/archive_policy', { name: 'a', definition: [{ granularity: 60 }] });
      expect(sorted(a.body.aggregation_methods)).toEqual(['last', 'mean']);
      const b = await json(custom.app, 'POST', '/v1/archive_policy', {
        name: 'b',
        definition: [{ granularity: 60 }],
        aggregation_methods: ['+max', '-last'],
      });
      expect(sorted(b.body.aggregation_methods)).toEqual(['max', 'mean']);
    } finally {
      await custom.close();
    }
  });
});

describe('GET /v1/archive_policy and /v1/archive_policy/{name}', () => {
  it('gets one policy, for any user', async () => {
    const name = uniq('medium');
    await createPolicy(t.app, { name, definition: [{ granularity: '1 second', points: 20 }] });
    const res = await json(t.app, 'GET', `/v1/archive_policy/${name}`, undefined, USER);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.name).toBe(name);
    expect(res.body.definition).toEqual([{ granularity: '0:00:01', points: 20, timespan: '0:00:20' }]);
  });

  it('lists every policy, for any user', async () => {
    const fresh = await startTestApp();
    try {
      expect((await json(fresh.app, 'GET', '/v1/archive_policy', undefined, USER)).body).toEqual([]);
      await createPolicy(fresh.app, { name: 'medium', definition: [{ granularity: '1 second', points: 20 }, { granularity: 2 }] });
      await createPolicy(fresh.app, { name: 'large', definition: [{ granularity: '1 hour' }] });
      const res = await json(fresh.app, 'GET', '/v1/archive_policy', undefined, USER);
      expect(res.status).toBe(200);
      expect(res.body.map((p: { name: string }) => p.name).sort()).toEqual(['large', 'medium']);
      const large = res.body.find((p: { name: string }) => p.name === 'large');
      expect(large.definition).toEqual([{ granularity: '1:00:00', points: null, timespan: null }]);
    } finally {
      await fresh.close();
    }
  });

  it('answers 404 with a message for an unknown policy', async () => {
    const res = await json(t.app, 'GET', '/v1/archive_policy/grandiose');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 404, title: 'Not Found', description: 'Archive policy grandiose does not exist' });
  });

  it.each([
    ['the list', '/v1/archive_policy'],
    ['one policy', '/v1/archive_policy/accept-test'],
  ])('answers 406 to Accept: text/plain on %s', async (_name, url) => {
    if ((await json(t.app, 'GET', '/v1/archive_policy/accept-test')).status === 404) {
      await createPolicy(t.app, { name: 'accept-test', definition: [{ granularity: 1 }] });
    }
    const res = await json(t.app, 'GET', url, undefined, { ...USER, accept: 'text/plain' });
    expect(res.status).toBe(406);
  });

  it('answers 406 to Accept: text/html', async () => {
    const res = await json(t.app, 'GET', '/v1/archive_policy', undefined, { ...USER, accept: 'text/html' });
    expect(res.status).toBe(406);
  });
});

describe('PATCH /v1/archive_policy/{name}', () => {
  // A policy named `medium-N` per test; its messages name it.
  let name: string;
  beforeEach(async () => {
    name = uniq('medium');
    await createPolicy(t.app, { name, definition: [{ granularity: '1 second', points: 20 }, { granularity: '2 second' }] });
  });

  it('changes the number of points of an existing granularity', async () => {
    const res = await json(t.app, 'PATCH', `/v1/archive_policy/${name}`, {
      definition: [{ granularity: '1 second', points: 50 }, { granularity: '2 second' }],
    });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe(name);
    expect(res.body.definition[0]).toEqual({ granularity: '0:00:01', points: 50, timespan: '0:00:50' });
    const get = await json(t.app, 'GET', `/v1/archive_policy/${name}`);
    expect(get.body.definition[0]).toEqual({ granularity: '0:00:01', points: 50, timespan: '0:00:50' });
    expect(sorted(get.body.aggregation_methods)).toEqual(DEFAULT_METHODS);
  });

  it.each([
    [
      'dropping a granularity',
      [{ granularity: '1 second', points: 50 }],
      'Archive policy NAME does not support change: Cannot add or drop granularities',
    ],
    [
      'adding a granularity',
      [{ granularity: '1 second', points: 20 }, { granularity: '2 second' }, { granularity: '1 minute' }],
      'Archive policy NAME does not support change: Cannot add or drop granularities',
    ],
    [
      'changing a granularity',
      [{ granularity: '5 second', points: 20 }, { granularity: '2 second' }],
      'Archive policy NAME does not support change: 1.0 granularity interval was changed',
    ],
    [
      'an inconsistent item',
      [{ granularity: '1 second', points: 50, timespan: '1 hour' }, { granularity: '2 second' }],
      'timespan ≠ granularity × points',
    ],
  ])('refuses %s with Gnocchi\'s message', async (_name, definition, message) => {
    const res = await json(t.app, 'PATCH', `/v1/archive_policy/${name}`, { definition });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, title: 'Bad Request', description: message.replace('NAME', name) });
    const get = await json(t.app, 'GET', `/v1/archive_policy/${name}`);
    expect(get.body.definition[0].points).toBe(20);
  });

  // The interface spec allows `back_window` in PATCH; Gnocchi 4.4 itself
  // refuses it ("extra keys not allowed @ data['back_window']").
  it('changes back_window alone (interface spec: PATCH {definition?, back_window?})', async () => {
    const res = await json(t.app, 'PATCH', `/v1/archive_policy/${name}`, { back_window: 3 });
    expect(res.status).toBe(200);
    expect(res.body.back_window).toBe(3);
    expect(res.body.definition[0]).toEqual({ granularity: '0:00:01', points: 20, timespan: '0:00:20' });
    expect((await json(t.app, 'GET', `/v1/archive_policy/${name}`)).body.back_window).toBe(3);
  });

  it('refuses a body without definition (voluptuous message)', async () => {
    const res = await json(t.app, 'PATCH', `/v1/archive_policy/${name}`, {});
    expect(res.status).toBe(400);
    expect(res.body.description).toEqual({
      cause: 'Invalid input',
      reason: "required key not provided @ data['definition']",
      detail: ['definition'],
    });
  });

  it('answers 404 for an unknown policy', async () => {
    const res = await json(t.app, 'PATCH', '/v1/archive_policy/nope', { definition: [{ granularity: 1 }] });
    expect(res.status).toBe(404);
    expect(res.body.description).toBe('Archive policy nope does not exist');
  });

  it('answers 403 to a non-admin user', async () => {
    const res = await json(t.app, 'PATCH', `/v1/archive_policy/${name}`, { definition: [] }, USER);
    expect(res.status).toBe(403);
  });
});

describe('DELETE /v1/archive_policy/{name}', () => {
  let name: string;
  beforeEach(async () => {
    name = uniq('large');
    await createPolicy(t.app, { name, definition: [{ granularity: '1 hour' }] });
  });

  it('answers 204 with no body, then 404 on read and on a second delete', async () => {
    const res = await json(t.app, 'DELETE', `/v1/archive_policy/${name}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await json(t.app, 'GET', `/v1/archive_policy/${name}`)).status).toBe(404);
    const again = await json(t.app, 'DELETE', `/v1/archive_policy/${name}`);
    expect(again.status).toBe(404);
    expect(again.body.description).toBe(`Archive policy ${name} does not exist`);
  });

  it('refuses with 400 while a metric uses the policy', async () => {
    await createMetric(t.app, { archive_policy_name: name }, USER);
    const res = await json(t.app, 'DELETE', `/v1/archive_policy/${name}`);
    expect(res.status).toBe(400);
    expect(res.body.description).toBe(`Archive policy ${name} is still in use`);
    expect((await json(t.app, 'GET', `/v1/archive_policy/${name}`)).status).toBe(200);
  });

  it('refuses with 400 while a rule uses the policy', async () => {
    const rule = await json(t.app, 'POST', '/v1/archive_policy_rule', {
      name: uniq('rule'),
      metric_pattern: 'disk.*',
      archive_policy_name: name,
    });
    expect(rule.status).toBe(201);
    const res = await json(t.app, 'DELETE', `/v1/archive_policy/${name}`);
    expect(res.status).toBe(400);
    expect(res.body.description).toBe(`Archive policy ${name} is still in use`);
  });

  it('can delete once the metric using it is gone', async () => {
    const id = await createMetric(t.app, { archive_policy_name: name });
    expect((await json(t.app, 'DELETE', `/v1/metric/${id}`)).status).toBe(204);
    expect((await json(t.app, 'DELETE', `/v1/archive_policy/${name}`)).status).toBe(204);
  });

  it('answers 403 to a non-admin user', async () => {
    expect((await json(t.app, 'DELETE', `/v1/archive_policy/${name}`, undefined, USER)).status).toBe(403);
  });
});

describe('refusals', () => {
  const GOOD = { name: 'refused', definition: [{ granularity: '1 second' }] };

  it('answers 409 to a duplicate name', async () => {
    const name = uniq('large');
    await createPolicy(t.app, { name, definition: [{ granularity: '1 hour' }] });
    const res = await json(t.app, 'POST', '/v1/archive_policy', { name, definition: [{ granularity: '1 minute' }] });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ code: 409, title: 'Conflict', description: `Archive policy ${name} already exists` });
    expect((await json(t.app, 'GET', `/v1/archive_policy/${name}`)).body.definition[0].granularity).toBe('1:00:00');
  });

  it.each([
    ['a valid body', GOOD, 'application/json'],
    ['an invalid body', { cowsay: 'moo' }, 'application/json'],
    ['a wrong content type', GOOD, 'text/plain'],
  ])('answers 403 to a non-admin user before looking at %s', async (_name, body, type) => {
    const res = await json(t.app, 'POST', '/v1/archive_policy', body, { ...USER, 'content-type': type });
    expect(res.status).toBe(403);
    expect(res.body.description).toBe(''); // Gnocchi's 403 has no detail
    expect((await json(t.app, 'GET', '/v1/archive_policy/refused')).status).toBe(404);
  });

  it.each([
    ['no Authorization header', {}],
    ['an empty Authorization header', { authorization: '' }],
  ])('answers 401 with %s', async (_name, headers) => {
    const res = await json(t.app, 'POST', '/v1/archive_policy', GOOD, headers);
    expect(res.status).toBe(401);
  });

  it('answers 415 to a body that is not application/json', async () => {
    const res = await json(t.app, 'POST', '/v1/archive_policy', JSON.stringify(GOOD), { ...ADMIN, 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
    expect(res.text).toContain('Unsupported Media Type');
  });

  it('answers 400 to a body that is not JSON', async () => {
    const res = await json(t.app, 'POST', '/v1/archive_policy', '{"name": ', ADMIN);
    expect(res.status).toBe(400);
    expect(res.body.description.cause).toBe('Unable to decode body');
  });

  it.each([
    ['PUT on the collection', 'PUT', '/v1/archive_policy', 'GET, POST'],
    ['PUT on a policy', 'PUT', '/v1/archive_policy/method-test', undefined],
    ['POST on a policy', 'POST', '/v1/archive_policy/method-test', undefined],
  ] as const)('answers 405 to %s', async (_name, method, url, allow) => {
    if ((await json(t.app, 'GET', '/v1/archive_policy/method-test')).status === 404) {
      await createPolicy(t.app, { name: 'method-test', definition: [{ granularity: 1 }] });
    }
    const res = await json(t.app, method, url, GOOD);
    expect(res.status).toBe(405);
    if (allow !== undefined) expect(res.headers.allow).toBe(allow);
  });
});

describe('invalid bodies (voluptuous-style description)', () => {
  it.each<[string, unknown, string, string[]]>([
    ['an extra key', { cowsay: 'moo' }, "extra keys not allowed @ data['cowsay']", ['cowsay']],
    [
      'an extra key next to a valid policy',
      { name: 'x', definition: [{ granularity: 1 }], cowsay: 'moo' },
      "extra keys not allowed @ data['cowsay']",
      ['cowsay'],
    ],
    ['a missing definition', { name: 'medium' }, "required key not provided @ data['definition']", ['definition']],
    [
      'an empty definition',
      { name: 'medium', definition: [] },
      "length of value must be at least 1 for dictionary value @ data['definition']",
      ['definition'],
    ],
    [
      'a definition that is not a list',
      { name: 'medium', definition: 'foobar' },
      "expected a list for dictionary value @ data['definition']",
      ['definition'],
    ],
    [
      'an extra key in a definition item',
      { name: 'medium', definition: [{ cowsay: 'moo' }] },
      "extra keys not allowed @ data['definition'][0]['cowsay']",
      ['definition', '0', 'cowsay'],
    ],
    [
      'granularity 0',
      { name: 'medium', definition: [{ granularity: 0, points: 60 }] },
      "Timespan must be positive for dictionary value @ data['definition'][0]['granularity']",
      ['definition', '0', 'granularity'],
    ],
    [
      'points 0',
      { name: 'medium', definition: [{ granularity: 10, points: 0 }] },
      "value must be at least 1 for dictionary value @ data['definition'][0]['points']",
      ['definition', '0', 'points'],
    ],
    [
      'an unparsable timespan',
      { name: 'medium', definition: [{ granularity: '1 second', timespan: '1 shenanigan' }] },
      "Unable to parse timespan for dictionary value @ data['definition'][0]['timespan']",
      ['definition', '0', 'timespan'],
    ],
    [
      'an unknown aggregation method',
      { name: 'medium', definition: [{ granularity: 1 }], aggregation_methods: ['wtf'] },
      "not a valid value @ data['aggregation_methods'][0]",
      ['aggregation_methods', '0'],
    ],
    [
      'a 100th percentile',
      { name: 'medium', definition: [{ granularity: 1 }], aggregation_methods: ['mean', '100pct'] },
      "not a valid value @ data['aggregation_methods'][1]",
      ['aggregation_methods', '1'],
    ],
    [
      'a negative back_window',
      { name: 'medium', definition: [{ granularity: 1 }], back_window: -1 },
      "value must be at least 0 for dictionary value @ data['back_window']",
      ['back_window'],
    ],
  ])('refuses %s', async (_name, body, reason, detail) => {
    const before = await policyCount();
    const res = await json(t.app, 'POST', '/v1/archive_policy', body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, title: 'Bad Request', description: { cause: 'Invalid input', reason, detail } });
    expect(await policyCount()).toBe(before);
  });

  it.each([
    [
      'identical granularities',
      [{ granularity: '1 second', points: 60 }, { granularity: '1 second', points: 120 }],
      "More than one archive policy uses granularity `1.0'",
    ],
    ['timespan ≠ granularity × points', [{ granularity: '1 second', points: 60, timespan: '0:01:01' }], 'timespan ≠ granularity × points'],
    ['a granularity larger than the timespan', [{ granularity: '2 hour', timespan: '1 hour' }], 'Calculated number of points is < 0'],
    ['points alone', [{ points: 2 }], 'At least two of granularity/points/timespan must be provided'],
  ])('refuses %s with a plain message', async (_name, definition, message) => {
    const res = await json(t.app, 'POST', '/v1/archive_policy', { name: 'complex', definition });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, title: 'Bad Request', description: message });
    expect((await json(t.app, 'GET', '/v1/archive_policy/complex')).status).toBe(404);
  });
});
