// Versions document, health check, capabilities, status and CORS. Expected
// answers follow Gnocchi 4.4 (rest/api.py, rest/app.py with oslo.middleware
// CORS and healthcheck, its cors.yaml / healthcheck.yaml /
// http-proxy-to-wsgi.yaml tests, checked against a running reference server).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, createMetric, createPolicy, json, readMeasures, startTestApp, USER, type TestApp } from './helpers.js';

const BASE = ['mean', 'sum', 'last', 'max', 'min', 'std', 'median', 'first', 'count'];

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

function versions(href: string) {
  return {
    build: '4.4.2',
    versions: [{ status: 'CURRENT', links: [{ rel: 'self', href }], id: 'v1.0', updated: '2015-03-19' }],
  };
}

describe('GET /', () => {
  it.each<[string, Record<string, string>, string]>([
    ['from the Host header', { host: 'gnocchi.example:8041' }, 'http://gnocchi.example:8041/v1/'],
    ['honouring Forwarded: proto=https;host=example.org', { host: 'internal:8041', forwarded: 'proto=https;host=example.org' }, 'https://example.org/v1/'],
    [
      'honouring X-Forwarded-Proto and X-Forwarded-Host',
      { host: 'internal:8041', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'fw.example' },
      'https://fw.example/v1/',
    ],
  ])('answers the versions document with an absolute href %s, without credentials', async (_name, headers, href) => {
    const res = await json(t.app, 'GET', '/', undefined, headers);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(versions(href));
  });

  it('ignores Forwarded when proxy header parsing is off', async () => {
    const plain = await startTestApp({ proxyHeaders: false });
    try {
      const res = await json(plain.app, 'GET', '/', undefined, { host: 'internal:8041', forwarded: 'proto=https;host=example.org' });
      expect(res.body).toEqual(versions('http://internal:8041/v1/'));
    } finally {
      await plain.close();
    }
  });

  it('uses the forwarded host in Location headers too', async () => {
    await createPolicy(t.app, { name: 'fwd', definition: [{ granularity: 1 }] });
    const res = await json(t.app, 'POST', '/v1/metric', { archive_policy_name: 'fwd' }, {
      ...ADMIN,
      host: 'internal:8041',
      forwarded: 'proto=https;host=example.org',
    });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`https://example.org/v1/metric/${res.body.id}`);
  });

  it('answers 406 to Accept: text/plain', async () => {
    expect((await json(t.app, 'GET', '/', undefined, { accept: 'text/plain' })).status).toBe(406);
  });

  it('answers 404 with the JSON error shape to an unknown path', async () => {
    const res = await json(t.app, 'GET', '/v1/nope', undefined, ADMIN);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 404, title: 'Not Found' });
  });

  // Gnocchi (pecan, no detail) answers "description": null for a path no
  // controller serves; ours answers a sentence (server/app.ts not-found handler).
  it('answers "description": null to an unknown path, as Gnocchi does', async () => {
    const res = await json(t.app, 'GET', '/v1/nope', undefined, { ...ADMIN, accept: 'application/json' });
    expect(res.body).toEqual({ code: 404, title: 'Not Found', description: null });
  });
});

describe('GET /healthcheck', () => {
  it('answers 200 with an empty body, without credentials', async () => {
    const res = await json(t.app, 'GET', '/healthcheck', undefined, { accept: '*/*' });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
  });

  it('answers 200 to Accept: text/plain', async () => {
    const res = await json(t.app, 'GET', '/healthcheck', undefined, { accept: 'text/plain' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
  });

  // oslo.middleware's healthcheck answers JSON when asked for it.
  it('answers {"detailed": false, "reasons": []} to Accept: application/json', async () => {
    const res = await json(t.app, 'GET', '/healthcheck', undefined, { accept: 'application/json' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ detailed: false, reasons: [] });
  });
});

describe('GET /v1/capabilities', () => {
  it('lists every aggregation method, with Npct and rate: forms, without credentials', async () => {
    const res = await json(t.app, 'GET', '/v1/capabilities', undefined, {});
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['aggregation_methods']);
    const methods: string[] = res.body.aggregation_methods;
    expect(methods).toContain('mean');
    expect(methods).toContain('rate:95pct');
    const pct = Array.from({ length: 99 }, (_, i) => `${i + 1}pct`);
    const plain = [...BASE, ...pct];
    expect([...methods].sort()).toEqual([...plain, ...plain.map((m) => `rate:${m}`)].sort());
    expect(methods).not.toContain('100pct');
    expect(methods).not.toContain('0pct');
  });
});

describe('GET /v1/status', () => {
  it.each([
    ['a plain user', USER, 403],
    ['no credentials', {}, 401],
  ])('refuses %s', async (_name, headers, status) => {
    expect((await json(t.app, 'GET', '/v1/status', undefined, headers)).status).toBe(status);
  });

  it('answers the admin with the status shape, measures_to_process included by default', async () => {
    const res = await json(t.app, 'GET', '/v1/status', undefined, ADMIN);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['metricd', 'storage']);
    const { metricd, storage } = res.body;
    expect(metricd.processors === null || Array.isArray(metricd.processors)).toBe(true);
    expect(typeof metricd.statistics).toBe('object');
    expect(Object.keys(storage).sort()).toEqual(['measures_to_process', 'summary']);
    expect(Number.isInteger(storage.summary.measures)).toBe(true);
    expect(Number.isInteger(storage.summary.metrics)).toBe(true);
    expect(typeof storage.measures_to_process).toBe('object');
  });

  it.each(['false', '0', 'no'])('leaves measures_to_process out with details=%s', async (details) => {
    const res = await json(t.app, 'GET', `/v1/status?details=${details}`, undefined, ADMIN);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.storage)).toEqual(['summary']);
    expect(Object.keys(res.body.storage.summary).sort()).toEqual(['measures', 'metrics']);
    expect(Object.keys(res.body.metricd).sort()).toEqual(['processors', 'statistics']);
  });

  it('answers 400 to details=maybe', async () => {
    const res = await json(t.app, 'GET', '/v1/status?details=maybe', undefined, ADMIN);
    expect(res.status).toBe(400);
    expect(res.body.description).toMatch(/^Unable to parse `details': invalid truth value /);
  });

  it('quotes the value in the details parse error, as Gnocchi does', async () => {
    const res = await json(t.app, 'GET', '/v1/status?details=maybe', undefined, ADMIN);
    expect(res.body.description).toBe("Unable to parse `details': invalid truth value 'maybe'");
  });

  it('counts measures waiting for processing, per metric, until they are processed', async () => {
    const own = await startTestApp();
    try {
      await createPolicy(own.app, { name: 'p', definition: [{ granularity: 1, points: 100 }] });
      const id = await createMetric(own.app, { archive_policy_name: 'p' });
      // Hold processing so the backlog is observable.
      await own.engine.processor.stop();
      const push = await json(own.app, 'POST', `/v1/metric/${id}/measures`, [
        { timestamp: '2015-03-06T14:33:57', value: 1 },
        { timestamp: '2015-03-06T14:33:58', value: 2 },
        { timestamp: '2015-03-06T14:33:59', value: 3 },
      ]);
      expect(push.status).toBe(202);
      const before = await json(own.app, 'GET', '/v1/status', undefined, ADMIN);
      expect(before.body.storage).toEqual({ summary: { metrics: 1, measures: 3 }, measures_to_process: { [id]: 3 } });
      own.engine.processor.start();
      expect((await readMeasures(own.app, id)).body).toHaveLength(3);
      const after = await json(own.app, 'GET', '/v1/status', undefined, ADMIN);
      expect(after.body.storage).toEqual({ summary: { metrics: 0, measures: 0 }, measures_to_process: {} });
    } finally {
      await own.close();
    }
  });
});

describe('CORS (allowed origin http://foobar.com)', () => {
  it('completes a preflight from the allowed origin', async () => {
    const res = await json(t.app, 'OPTIONS', '/v1/status', undefined, {
      origin: 'http://foobar.com',
      'access-control-request-method': 'GET',
    });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('http://foobar.com');
    expect(res.headers['access-control-allow-methods']).toBe('GET');
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['access-control-max-age']).toBe('3600');
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('echoes allowed request headers in a preflight', async () => {
    const res = await json(t.app, 'OPTIONS', '/v1/metric', undefined, {
      origin: 'http://foobar.com',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'Authorization',
    });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-methods']).toBe('POST');
    expect(res.headers['access-control-allow-headers']).toBe('Authorization');
  });

  it('answers a preflight from another origin without CORS headers', async () => {
    const res = await json(t.app, 'OPTIONS', '/v1/status', undefined, {
      origin: 'http://notallowed.com',
      'access-control-request-method': 'GET',
    });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-methods']).toBeUndefined();
  });

  it.each([
    ['the allowed origin', 'http://foobar.com', 'http://foobar.com'],
    ['another origin', 'http://notallowed.com', undefined],
  ])('marks a simple request from %s accordingly', async (_name, origin, expected) => {
    const res = await json(t.app, 'GET', '/v1/capabilities', undefined, { origin });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(expected);
  });

  // oslo.middleware's rules, as observed on the reference: its default
  // allow_methods (compared as sent), the requested header names trimmed and
  // empty ones dropped before they are checked and echoed, the simple headers
  // (Accept-Language among them) always allowed, and an empty answer.
  it.each<[string, string, string | undefined, string | undefined]>([
    ['OPTIONS', 'OPTIONS', 'content-type', 'content-type'],
    ['HEAD', 'HEAD', undefined, undefined],
    ['TRACE', 'TRACE', undefined, undefined],
    ['Grafana\'s headers, spaced', 'GET', 'Authorization, Content-Type', 'Authorization,Content-Type'],
    ['an empty header name', 'GET', 'content-type,,authorization', 'content-type,authorization'],
    ['only empty header names', 'GET', ' , ', undefined],
    ['Accept-Language', 'GET', 'accept-language', 'accept-language'],
    ['the noauth headers', 'GET', 'content-type,x-domain-id,x-project-id,x-roles,x-user-id', 'content-type,x-domain-id,x-project-id,x-roles,x-user-id'],
  ])('completes a preflight asking for %s', async (_name, method, asked, echoed) => {
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: '/v1/resource',
      headers: {
        origin: 'http://foobar.com',
        'access-control-request-method': method,
        ...(asked === undefined ? {} : { 'access-control-request-headers': asked }),
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('http://foobar.com');
    expect(res.headers['access-control-allow-methods']).toBe(method);
    expect(res.headers['access-control-allow-headers']).toBe(echoed);
    expect(res.headers['content-type']).toBeUndefined();
    expect(res.body).toBe('');
  });

  it.each([
    ['a header that is not allowed', { 'access-control-request-method': 'POST', 'access-control-request-headers': 'X-Foo' }],
    ['a method that is not allowed', { 'access-control-request-method': 'FOO' }],
    ['a method in lower case', { 'access-control-request-method': 'get' }],
    ['CONNECT', { 'access-control-request-method': 'CONNECT' }],
  ])('refuses a preflight asking for %s', async (_name, headers) => {
    const res = await json(t.app, 'OPTIONS', '/v1/metric', undefined, { origin: 'http://foobar.com', ...headers });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    // An empty answer without a media type, as Gnocchi's.
    expect(res.headers['content-type']).toBeUndefined();
    expect(res.text).toBe('');
  });
});
