// Hostile input: body size, prototype keys, path parameters and names too
// long to be storage keys. Every refusal is a 4xx in Gnocchi's error shape.
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN, createPolicy, json, startTestApp, type TestApp } from './helpers.js';

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp({ bodyLimit: 4096 });
  await createPolicy(t.app, { name: 'low', definition: [{ granularity: '1 hour', points: 10 }] });
});
afterEach(async () => {
  await t.close();
});

describe('body limit', () => {
  const big = JSON.stringify([{ timestamp: 1, value: 1 }]).padEnd(5000, ' ');

  it('answers 413 in JSON to JSON clients', async () => {
    const res = await json(t.app, 'POST', '/v1/batch/metrics/measures', big);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ code: 413, title: 'Request Entity Too Large', description: 'Request body is larger than the limit of 4096 bytes' });
  });

  it('answers 413 in text to other clients', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/batch/metrics/measures', headers: { ...ADMIN, 'content-type': 'application/json' }, payload: big });
    expect(res.statusCode).toBe(413);
    expect(res.body).toContain('413 Request Entity Too Large');
  });

  it('answers 413 to a chunked body without a length', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/influxdb/write?db=x',
      headers: { ...ADMIN, accept: 'application/json', 'content-type': 'text/plain', 'transfer-encoding': 'chunked' },
      payload: Readable.from([Buffer.alloc(3000, 0x61), Buffer.alloc(3000, 0x61)]),
    });
    expect(res.statusCode).toBe(413);
    expect(JSON.parse(res.body).code).toBe(413);
  });

  it('accepts a body at the limit', async () => {
    const res = await json(t.app, 'POST', '/v1/batch/metrics/measures', '{}'.padEnd(4096, ' '));
    expect(res.status).toBe(202);
  });
});

describe('prototype keys in JSON', () => {
  const cases: [string, string][] = [
    ['__proto__ at the top', '{"__proto__": {"polluted": 1}, "name": "p"}'],
    ['__proto__ nested', '{"name": "p", "definition": [{"granularity": "1 hour", "__proto__": {"polluted": 1}}]}'],
    ['constructor.prototype', '{"name": "p", "constructor": {"prototype": {"polluted": 1}}}'],
  ];
  it.each(cases)('refuses %s with 400 and pollutes nothing', async (_name, body) => {
    const res = await json(t.app, 'POST', '/v1/archive_policy', body);
    expect(res.status).toBe(400);
    expect(res.body.description).toMatchObject({ cause: 'Unable to decode body' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('keeps constructor as an ordinary key', async () => {
    const res = await json(t.app, 'POST', '/v1/resource/generic', { id: 'r1', metrics: { constructor: { archive_policy_name: 'low' } } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body.metrics)).toEqual(['constructor']);
  });
});

describe('path parameters', () => {
  const long = 'a'.repeat(3000);
  it.each([
    `/v1/metric/${long}`,
    `/v1/resource/generic/${long}`,
    `/v1/archive_policy/${long}`,
    `/v1/resource/generic/r/metric/${long}/measures`,
  ])('refuses an over-long segment: %s', async (url) => {
    const res = await json(t.app, 'GET', url);
    expect(res.status).toBe(414);
    expect(res.body).toMatchObject({ code: 414, title: 'Request-URI Too Long' });
  });

  it('answers 404 to long names that cannot be storage keys', async () => {
    expect((await json(t.app, 'POST', '/v1/resource/generic', { id: 'r' })).status).toBe(201);
    const name = '%C3%A9'.repeat(1500);
    for (const url of [`/v1/resource/generic/r/metric/${name}`, `/v1/archive_policy/${name}`, `/v1/resource_type/${name}`, `/v1/archive_policy_rule/${name}`]) {
      const res = await json(t.app, 'GET', url);
      expect(res.status).toBe(404);
    }
  });

  it('refuses bad percent-encoding in Gnocchi\'s shape', async () => {
    const res = await json(t.app, 'GET', '/v1/metric/%E0%A4%A');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(400);
  });
});

describe('names too long to be storage keys', () => {
  const name = 'é'.repeat(1500);
  it.each([
    ['/v1/archive_policy', { name, definition: [{ granularity: '1 hour', points: 10 }] }],
    ['/v1/resource_type', { name }],
    ['/v1/resource/generic', { id: 'x', metrics: { [name]: { archive_policy_name: 'low' } } }],
  ])('POST %s answers 400, not 500', async (url, body) => {
    const res = await json(t.app, 'POST', url, body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(400);
  });
});
