// Names and ids too long to be storage keys, in the path or in the body, on
// every route that looks them up or stores them. The engine stores keys of
// at most 1978 bytes (engine/key-limit.ts), and lmdb-js cannot even encode a lookup key past about 4 KB (a
// RangeError): a 2047-character name is short enough for the router but, in
// a 2- or 3-byte UTF-8 script, too long for either. Found by the hostile
// input property (seed 297264275): GET /v1/archive_policy_rule/<2047 x
// U+0080> answered 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, createPolicy, json, startTestApp, type TestApp } from './helpers.js';

/** Near the router's 2048-character bound, over 4 KB once UTF-8 encoded. */
const NAMES: [string, string][] = [
  ['2047 x U+0080 (2 bytes each)', '\u0080'.repeat(2047)],
  ['2047 x U+0800 (3 bytes each)', '\u0800'.repeat(2047)],
  ['1023 x U+1F600 (4 bytes each)', '\u{1F600}'.repeat(1023)],
  ['2048 x a', 'a'.repeat(2048)],
  ['1500 x é', 'é'.repeat(1500)],
];

/** A lookup by a name no stored object can have: 404, as for any unknown name. */
const LOOKUPS: [string, (n: string) => string, unknown?][] = [
  ['GET', (n) => `/v1/archive_policy/${n}`],
  ['PATCH', (n) => `/v1/archive_policy/${n}`, { definition: [{ granularity: '1 hour', points: 10 }] }],
  ['DELETE', (n) => `/v1/archive_policy/${n}`],
  ['GET', (n) => `/v1/archive_policy_rule/${n}?refresh=`],
  ['PATCH', (n) => `/v1/archive_policy_rule/${n}`, { name: 'other' }],
  ['DELETE', (n) => `/v1/archive_policy_rule/${n}`],
  ['GET', (n) => `/v1/metric/${n}`],
  ['DELETE', (n) => `/v1/metric/${n}`],
  ['GET', (n) => `/v1/metric/${n}/measures`],
  ['POST', (n) => `/v1/metric/${n}/measures`, []],
  ['GET', (n) => `/v1/resource/generic/${n}`],
  ['PATCH', (n) => `/v1/resource/generic/${n}`, {}],
  ['DELETE', (n) => `/v1/resource/generic/${n}`],
  ['GET', (n) => `/v1/resource/generic/${n}/history`],
  ['GET', (n) => `/v1/resource/generic/${n}/metric`],
  ['GET', (n) => `/v1/resource/generic/r/metric/${n}`],
  ['GET', (n) => `/v1/resource/generic/r/metric/${n}/measures`],
  ['POST', (n) => `/v1/resource/generic/r/metric/${n}/measures`, []],
  ['GET', (n) => `/v1/resource/${n}`],
  ['GET', (n) => `/v1/resource/${n}/r`],
  ['POST', (n) => `/v1/resource/${n}`, { id: 'z' }],
  ['DELETE', (n) => `/v1/resource/${n}`, {}],
  ['GET', (n) => `/v1/resource_type/${n}`],
  ['PATCH', (n) => `/v1/resource_type/${n}`, []],
  ['DELETE', (n) => `/v1/resource_type/${n}`],
  ['GET', (n) => `/v1/search/resource/${n}`],
  ['POST', (n) => `/v1/search/resource/${n}`, {}],
  ['GET', (n) => `/v1/aggregation/resource/${n}/metric/m`],
];

/** A long name in a body: refused as too long to store, or as naming nothing (400). */
const WRITES: [string, (n: string) => unknown][] = [
  ['/v1/archive_policy', (n) => ({ name: n, definition: [{ granularity: '1 hour', points: 10 }] })],
  ['/v1/archive_policy_rule', (n) => ({ name: n, metric_pattern: 'x.*', archive_policy_name: 'low' })],
  ['/v1/archive_policy_rule', (n) => ({ name: 'r2', metric_pattern: 'x.*', archive_policy_name: n })],
  ['/v1/resource_type', (n) => ({ name: n })],
  ['/v1/metric', (n) => ({ archive_policy_name: n })],
  ['/v1/resource/generic', (n) => ({ id: n })],
  ['/v1/resource/generic', (n) => ({ id: 'with-long-metric', metrics: { [n]: { archive_policy_name: 'low' } } })],
  ['/v1/batch/metrics/measures', (n) => ({ [n]: [] })],
  ['/v1/batch/resources/metrics/measures', (n) => ({ r: { [n]: [] } })],
];

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await createPolicy(t.app, { name: 'low', definition: [{ granularity: '1 hour', points: 10 }] });
  const res = await json(t.app, 'POST', '/v1/resource/generic', { id: 'r', metrics: { m: { archive_policy_name: 'low' } } });
  expect(res.status).toBe(201);
});
afterAll(async () => {
  await t.close();
});

describe.each(NAMES)('a name of %s', (_label, name) => {
  const segment = encodeURIComponent(name);

  it.each(LOOKUPS.map(([method, url, body]) => [method, url(':name'), url, body] as const))(
    '%s %s answers 404',
    async (method, _shown, url, body) => {
      const res = await json(t.app, method as 'GET', url(segment), body);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 404, title: 'Not Found' });
    },
  );

  it('answers 404 in the plain-text page to a client that does not ask for JSON', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/archive_policy_rule/${segment}?refresh=`, headers: { ...ADMIN, 'content-type': 'application/json; charset=utf-8' } });
    expect(res.statusCode).toBe(404);
    expect(res.body).toMatch(/^404 Not Found\n/);
  });

  it.each(WRITES)('POST %s with it in the body answers 400', async (url, body) => {
    const res = await json(t.app, 'POST', url, body(name));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(400);
  });
});

it('leaves the server working with ordinary names afterwards', async () => {
  expect((await json(t.app, 'GET', '/v1/archive_policy/low')).status).toBe(200);
  expect((await json(t.app, 'GET', '/v1/resource/generic/r')).status).toBe(200);
});
