// The shipped `instance` resource type (`--builtin-resource-types instance`):
// attributes of the spec's Resource section, created at startup when asked.
import { afterEach, describe, expect, it } from 'vitest';
import { ensureBuiltinResourceTypes } from '../../engine/resources.js';
import { ConfigError, loadConfig } from '../../server/config.js';
import { ADMIN, json, startTestApp, USER, type TestApp } from './helpers.js';

const STRING = { type: 'string', required: true, min_length: 0, max_length: 255 };
const INSTANCE_SCHEMA = {
  name: 'instance',
  state: 'active',
  attributes: {
    display_name: STRING,
    flavor_id: STRING,
    host: STRING,
    image_ref: STRING,
    launched_at: { type: 'datetime', required: false },
    server_group: { ...STRING, required: false },
  },
};

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('--builtin-resource-types', () => {
  it('is off by default: no instance type', async () => {
    t = await startTestApp();
    const res = await json(t.app, 'GET', '/v1/resource_type/instance');
    expect(res.status).toBe(404);
    expect((await json(t.app, 'GET', '/v1/resource_type')).body.map((rt: { name: string }) => rt.name)).toEqual(['generic']);
  });

  it('creates instance at startup, which validates resources', async () => {
    t = await startTestApp({ builtinResourceTypes: ['instance'] });
    const rt = await json(t.app, 'GET', '/v1/resource_type/instance');
    expect(rt.status).toBe(200);
    expect(rt.body).toEqual(INSTANCE_SCHEMA);

    const body = {
      id: 'vm-1',
      display_name: 'my vm',
      flavor_id: '2',
      host: 'compute-1',
      image_ref: 'cirros',
      launched_at: '2024-01-02T03:04:05Z',
    };
    const created = await json(t.app, 'POST', '/v1/resource/instance', body, USER);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      type: 'instance',
      original_resource_id: 'vm-1',
      display_name: 'my vm',
      flavor_id: '2',
      host: 'compute-1',
      image_ref: 'cirros',
      launched_at: '2024-01-02T03:04:05+00:00',
      server_group: null,
    });

    const missing = await json(t.app, 'POST', '/v1/resource/instance', { id: 'vm-2', display_name: 'x', flavor_id: '2', host: 'h' }, USER);
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toContain('image_ref');

    const tooLong = await json(t.app, 'POST', '/v1/resource/instance', { ...body, id: 'vm-3', host: 'h'.repeat(256) }, USER);
    expect(tooLong.status).toBe(400);
    expect(JSON.stringify(tooLong.body)).toContain('length of value must be at most 255');

    const wrongType = await json(t.app, 'POST', '/v1/resource/instance', { ...body, id: 'vm-4', launched_at: 'not a date' }, USER);
    expect(wrongType.status).toBe(400);

    const found = await json(t.app, 'POST', '/v1/search/resource/instance', { '=': { flavor_id: '2' } }, USER);
    expect(found.status).toBe(200);
    expect(found.body.map((r: { original_resource_id: string }) => r.original_resource_id)).toEqual(['vm-1']);
  });

  it('leaves an existing instance type alone on the next startup', async () => {
    t = await startTestApp({ builtinResourceTypes: ['instance'] });
    const again = await json(t.app, 'POST', '/v1/resource_type', { name: 'instance' }, ADMIN);
    expect(again.status).toBe(409);
    const patched = await json(t.app, 'PATCH', '/v1/resource_type/instance', [
      { op: 'add', path: '/attributes/az', value: { type: 'string', required: false } },
    ], { ...ADMIN, 'content-type': 'application/json-patch+json' });
    expect(patched.status).toBe(200);
    // What startup runs: the type exists, so nothing is created or reset.
    expect(await ensureBuiltinResourceTypes(t.engine.index, ['instance'])).toEqual([]);
    expect(Object.keys((await json(t.app, 'GET', '/v1/resource_type/instance')).body.attributes)).toContain('az');
  });
});

describe('config', () => {
  it('reads the flag and the environment variable, and refuses unknown types', () => {
    expect(loadConfig([], {}).builtinResourceTypes).toEqual([]);
    expect(loadConfig(['--builtin-resource-types', 'instance'], {}).builtinResourceTypes).toEqual(['instance']);
    expect(loadConfig([], { GNOCCHI_BUILTIN_RESOURCE_TYPES: 'instance' }).builtinResourceTypes).toEqual(['instance']);
    expect(() => loadConfig(['--builtin-resource-types', 'instance,volume'], {})).toThrow(ConfigError);
  });
});
