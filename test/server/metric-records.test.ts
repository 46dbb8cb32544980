// Metrics named on a resource are stored without what the resource holds
// (engine/metric-records.ts): through HTTP, after a restart (nothing cached),
// a metric answers its name, creator and resource as created, and as moved,
// renamed or detached by resource updates; a resource's deletion takes its
// metrics with it. Resources, whose records hold their type and creator as
// codes (engine/resource-records.ts), and metrics, whose records hold their
// archive policy's, answer and are found by them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN, json, startTestApp, USER, type TestApp } from './helpers.js';

const R1 = '6f0a4c44-1e2b-4bb5-9d8f-0c5d7b3c7a01';
const R2 = '6f0a4c44-1e2b-4bb5-9d8f-0c5d7b3c7a02';

let dataDir: string;
let t: TestApp;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-ts-metric-records-'));
  t = await startTestApp({ dataDir });
  const policy = { name: 'p', definition: [{ granularity: '1m', points: 10 }], aggregation_methods: ['mean'] };
  expect((await json(t.app, 'POST', '/v1/archive_policy', policy, ADMIN)).status).toBe(201);
});

afterEach(async () => {
  await t.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function restart(): Promise<void> {
  await t.close();
  t = await startTestApp({ dataDir });
}

/** A metric as GET /v1/metric/ID answers it (its resource whole): the fields this pins. */
async function metric(id: string): Promise<{ status: number; name?: string; creator?: string; resource_id?: string | null }> {
  const res = await json(t.app, 'GET', `/v1/metric/${id}`, undefined, ADMIN);
  if (res.status !== 200) return { status: res.status };
  const { name, creator, resource } = res.body as { name: string; creator: string; resource: { id: string } | null };
  return { status: 200, name, creator, resource_id: resource === null ? null : resource.id };
}

const idOf = async (resource: string, name: string): Promise<string> => {
  const res = await json(t.app, 'GET', `/v1/resource/generic/${resource}`, undefined, ADMIN);
  return (res.body as { metrics: Record<string, string> }).metrics[name]!;
};

describe('metrics named on resources, read after a restart', () => {
  it('answer their name, creator and resource through every change of their naming', async () => {
    expect((await json(t.app, 'POST', '/v1/resource/generic', { id: R1, metrics: { cpu: { archive_policy_name: 'p' } } }, USER)).status).toBe(201);
    const cpu = await idOf(R1, 'cpu');
    const disk = (await json(t.app, 'POST', '/v1/metric', { archive_policy_name: 'p', resource_id: R1, name: 'disk' }, ADMIN)).body.id as string;
    await restart();
    const user = (await metric(cpu)).creator!;
    expect(user).not.toBe((await metric(disk)).creator);
    expect(await metric(cpu)).toEqual({ status: 200, name: 'cpu', creator: user, resource_id: R1 });
    expect(await metric(disk)).toMatchObject({ name: 'disk', resource_id: R1 });
    const byName = await json(t.app, 'GET', `/v1/resource/generic/${R1}/metric/cpu`, undefined, USER);
    expect(byName.body).toMatchObject({ id: cpu, name: 'cpu', creator: user });
    const listed = await json(t.app, 'GET', '/v1/metric?name=cpu', undefined, ADMIN);
    expect(listed.body.map((m: { id: string; creator: string }) => [m.id, m.creator])).toEqual([[cpu, user]]);

    // Moved to another resource under another name.
    expect((await json(t.app, 'POST', '/v1/resource/generic', { id: R2, metrics: { load: cpu } }, USER)).status).toBe(201);
    await restart();
    expect(await metric(cpu)).toEqual({ status: 200, name: 'load', creator: user, resource_id: R2 });
    expect(await idOf(R1, 'cpu')).toBeUndefined();

    // Renamed on its resource.
    expect((await json(t.app, 'PATCH', `/v1/resource/generic/${R2}`, { metrics: { 'load.renamed': cpu } }, USER)).status).toBe(200);
    await restart();
    expect(await metric(cpu)).toEqual({ status: 200, name: 'load.renamed', creator: user, resource_id: R2 });

    // Detached: it keeps its name, without a resource.
    expect((await json(t.app, 'PATCH', `/v1/resource/generic/${R2}`, { metrics: {} }, USER)).status).toBe(200);
    await restart();
    expect(await metric(cpu)).toEqual({ status: 200, name: 'load.renamed', creator: user, resource_id: null });

    // Deleted with their resource.
    expect((await json(t.app, 'DELETE', `/v1/resource/generic/${R1}`, undefined, ADMIN)).status).toBe(204);
    await restart();
    expect((await metric(disk)).status).toBe(404);
    expect((await metric(cpu)).status).toBe(200);
  });
});

describe('resources and metrics read after a restart', () => {
  it('answer their type, creator and archive policy, which their records hold as codes, and are found by them', async () => {
    expect((await json(t.app, 'POST', '/v1/resource_type', { name: 'host', attributes: {} }, ADMIN)).status).toBe(201);
    expect((await json(t.app, 'POST', '/v1/resource/host', { id: R1 }, USER)).status).toBe(201);
    expect((await json(t.app, 'POST', '/v1/resource/generic', { id: R2 }, ADMIN)).status).toBe(201);
    const cpu = (await json(t.app, 'POST', '/v1/metric', { archive_policy_name: 'p', resource_id: R1, name: 'cpu' }, ADMIN)).body.id as string;
    await restart();
    expect((await json(t.app, 'GET', `/v1/metric/${cpu}`, undefined, ADMIN)).body).toMatchObject({ id: cpu, archive_policy: { name: 'p' } });
    expect((await json(t.app, 'GET', '/v1/metric?archive_policy_name=p', undefined, ADMIN)).body.map((m: { id: string }) => m.id)).toEqual([cpu]);
    expect((await json(t.app, 'GET', `/v1/resource/generic/${R1}`, undefined, ADMIN)).body).toMatchObject({ id: R1, type: 'host', creator: 'foobar' });
    expect((await json(t.app, 'GET', `/v1/resource/generic/${R2}`, undefined, ADMIN)).body).toMatchObject({ id: R2, type: 'generic', creator: 'admin' });
    const ids = (res: { body: { id: string }[] }) => res.body.map((r) => r.id);
    expect(ids(await json(t.app, 'GET', '/v1/resource/host', undefined, ADMIN))).toEqual([R1]);
    expect(ids(await json(t.app, 'POST', '/v1/search/resource/generic', { '=': { creator: 'foobar' } }, ADMIN))).toEqual([R1]);
  });
});
