// A request refused after the engine had begun writing leaves nothing
// written: each write of the index is one transaction that a failed check
// (a name too long to be stored, a missing policy, a taken name) rolls back
// whole, whatever it wrote before the check. What every listing answers is
// the same before and after the refused request.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPolicy, json, startTestApp, type TestApp } from './helpers.js';

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
  await createPolicy(t.app, { name: 'low', definition: [{ granularity: '1 hour', points: 10 }] });
  await json(t.app, 'POST', '/v1/archive_policy_rule', { name: 'r', metric_pattern: 'x*', archive_policy_name: 'low' });
  await json(t.app, 'POST', '/v1/resource/generic', { id: 'existing', user_id: 'u1', metrics: { m: { archive_policy_name: 'low' } } });
});
afterEach(async () => {
  await t.close();
});

/** A metric name over the storage key limit once after its resource's UUID (storage-key-limit.test.ts). */
const TOO_LONG = 'a'.repeat(1961);

/** Everything the API lists, as it answers it. */
async function listings(): Promise<unknown[]> {
  const urls = [
    '/v1/archive_policy',
    '/v1/archive_policy_rule',
    '/v1/resource_type',
    '/v1/metric?sort=name:asc',
    '/v1/resource/generic?history=true',
    '/v1/resource/generic/existing',
    '/v1/resource/generic/fresh',
  ];
  return Promise.all(urls.map(async (url) => {
    const res = await json(t.app, 'GET', url);
    return [url, res.status, res.body];
  }));
}

/** A request that the engine refuses after a write of its transaction: [what it writes first, request, status]. */
const CASES: [string, [string, string, unknown], number][] = [
  ['the rule under its new name, before removing the old one', ['PATCH', '/v1/archive_policy_rule/r', { name: 'a'.repeat(1979) }], 400],
  ['the resource and its first metric, before a name too long', ['POST', '/v1/resource/generic', { id: 'fresh', metrics: { ok: { archive_policy_name: 'low' }, [TOO_LONG]: { archive_policy_name: 'low' } } }], 400],
  ['the resource and its first metric, before a missing policy', ['POST', '/v1/resource/generic', { id: 'fresh', metrics: { ok: { archive_policy_name: 'low' }, other: { archive_policy_name: 'nope' } } }], 400],
  ['a new revision and the metrics detached, before a name too long', ['PATCH', '/v1/resource/generic/existing', { user_id: 'u2', metrics: { ok: { archive_policy_name: 'low' }, [TOO_LONG]: { archive_policy_name: 'low' } } }], 400],
  ['a new revision and the metrics detached, before a missing policy', ['PATCH', '/v1/resource/generic/existing', { user_id: 'u2', metrics: { ok: { archive_policy_name: 'nope' } } }], 400],
];

describe('a refused write leaves nothing written', () => {
  it.each(CASES)('%s', async (_written, [method, url, body], status) => {
    const before = await listings();
    const res = await json(t.app, method as 'POST', url, body);
    expect(res.status, res.text).toBe(status);
    expect(await listings()).toEqual(before);
  });
});
