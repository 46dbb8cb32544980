// Gnocchi's key order for resources (observed on the reference, Gnocchi
// 4.4.2): a type's attributes, in their definition order, come between `type`
// and `revision_end`; in history listings `revision_end` comes before `type`.
// Clients that print what they get (`gnocchi resource show -f json`, Grafana's
// label templates over Object keys) show it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asRevision, resourceToJson } from '../../server/json-shapes.js';
import { json, startTestApp, type TestApp } from './helpers.js';

let t: TestApp;
const ID = '35b5516b-7065-44cd-bf41-f6d0d110abf9';
beforeAll(async () => {
  t = await startTestApp();
  const attribute = (type: string) => ({ type, required: false });
  const rt = await json(t.app, 'POST', '/v1/resource_type', {
    name: 'ordered',
    attributes: { zeta: attribute('string'), alpha: attribute('number'), mid: attribute('bool'), beta: attribute('datetime') },
  });
  expect(rt.status).toBe(201);
  expect((await json(t.app, 'POST', '/v1/resource/ordered', { id: ID, zeta: 'z', alpha: 1, mid: true })).status).toBe(201);
});
afterAll(async () => {
  await t.close();
});

const HEAD = ['creator', 'started_at', 'revision_start', 'ended_at', 'user_id', 'project_id', 'original_resource_id', 'id'];
const TAIL = ['metrics', 'created_by_user_id', 'created_by_project_id'];

describe('resourceToJson key order', () => {
  it.each<[string, string, boolean, string[]]>([
    ['a typed resource', 'ordered', false, [...HEAD, 'type', 'zeta', 'alpha', 'mid', 'beta', 'revision_end', ...TAIL]],
    ['a typed resource in a history listing', 'ordered', true, [...HEAD, 'revision_end', 'type', 'zeta', 'alpha', 'mid', 'beta', ...TAIL]],
    ['a generic resource', 'generic', false, [...HEAD, 'type', 'revision_end', ...TAIL]],
    ['a generic resource in a history listing', 'generic', true, [...HEAD, 'revision_end', 'type', ...TAIL]],
  ])('%s', async (_name, typeName, history, keys) => {
    const r = (await t.engine.index.get(typeName, ID))!;
    const shown = typeName === 'generic' ? undefined : await t.engine.index.getType(typeName);
    expect(Object.keys(await resourceToJson(t.engine, asRevision(r), shown, undefined, history))).toEqual(keys);
  });

  it('is what GET /v1/resource/TYPE/ID answers', async () => {
    const res = await json(t.app, 'GET', `/v1/resource/ordered/${ID}`);
    expect(Object.keys(res.body)).toEqual([...HEAD, 'type', 'zeta', 'alpha', 'mid', 'beta', 'revision_end', ...TAIL]);
  });
});
