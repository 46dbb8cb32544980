// Names at the engine's key limit (engine/key-limit.ts) are stored, one
// byte more is refused with the 400 of a value too long to be stored,
// whatever LMDB's own limit in the data directory (1978 bytes at 4 KB
// pages, 4026 at 8 KB). Each name's limit is its key's: 1978 bytes less
// what the key holds beside it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPolicy, json, startTestApp, type TestApp } from './helpers.js';

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
  await createPolicy(t.app, { name: 'low', definition: [{ granularity: '1 hour', points: 10 }] });
});
afterEach(async () => {
  await t.close();
});

const TOO_LONG = { code: 400, title: 'Bad Request', description: { cause: 'Invalid input', reason: 'value too long to be stored', detail: [] } };

/** A request storing `name` where a key holds it; `setup` runs first with the same name. */
interface Case {
  setup?: (name: string) => [string, string, unknown];
  request: (name: string) => [string, string, unknown];
  created: number;
}

const CASES: [string, number, Case][] = [
  ['archive policy name', 1978, { request: (n) => ['POST', '/v1/archive_policy', { name: n, definition: [{ granularity: '1 hour', points: 10 }] }], created: 201 }],
  ['archive policy rule name', 1978, { request: (n) => ['POST', '/v1/archive_policy_rule', { name: n, metric_pattern: 'x*', archive_policy_name: 'low' }], created: 201 }],
  ['resource type name', 1978, { request: (n) => ['POST', '/v1/resource_type', { name: n }], created: 201 }],
  // After the resource's UUID: 18 bytes.
  ['metric name on a resource', 1960, { request: (n) => ['POST', '/v1/resource/generic', { id: `r${n.length}`, metrics: { [n]: { archive_policy_name: 'low' } } }], created: 201 }],
  // A type's resources are filed by type name, revision_start and UUID: 28 bytes besides the name.
  ['resource of a type', 1950, { setup: (n) => ['POST', '/v1/resource_type', { name: n }], request: (n) => ['POST', `/v1/resource/${n}`, { id: `r${n.length}` }], created: 201 }],
];

describe('names at the storage key limit', () => {
  it.each(CASES)('%s: %i bytes stored, one more refused', async (_what, longest, { setup, request, created }) => {
    for (const [n, status] of [[longest, created], [longest + 1, 400]] as const) {
      const name = 'a'.repeat(n);
      if (setup !== undefined) expect((await json(t.app, ...setup(name))).status).toBe(201);
      const [method, url, body] = request(name);
      const res = await json(t.app, method as 'POST', url, body);
      expect(res.status, `${n} bytes`).toBe(status);
      if (status === 400) expect(res.body).toEqual(TOO_LONG);
    }
  });

  it('refuses renaming a rule past the limit and keeps it under its name', async () => {
    await json(t.app, 'POST', '/v1/archive_policy_rule', { name: 'r', metric_pattern: 'x*', archive_policy_name: 'low' });
    const res = await json(t.app, 'PATCH', '/v1/archive_policy_rule/r', { name: 'a'.repeat(1979) });
    expect(res.body).toEqual(TOO_LONG);
    expect((await json(t.app, 'GET', '/v1/archive_policy_rule/r')).status).toBe(200);
  });
});
