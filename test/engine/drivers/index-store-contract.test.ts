/**
 * The IndexStore contract, held by the LMDB index (the reference) and the
 * PostgreSQL one: each scenario runs on both and their transcripts (answers
 * and typed errors, step by step) must be identical. Values that differ by
 * nature (clock readings, generated metric ids) are normalised; what they
 * must satisfy is checked on each.
 */
import { describe, expect, it } from 'vitest';
import type { ArchivePolicy } from '../../../engine/archive-policy.js';
import type { IndexStore } from '../../../engine/drivers/index-store.js';
import { EngineError } from '../../../engine/errors.js';
import { DEFAULT_RESOURCE_SORT, parseResourceSorts, type NewResource } from '../../../engine/resources.js';
import type { ResourceTypeRecord } from '../../../engine/resource-type.js';
import { validateResourceQuery, type QueryNode } from '../../../formats/resource-query.js';
import { openLmdbIndexStore } from './lmdb-index-store.js';
import { postgresMissing, usePgHarness } from './pg-harness.js';

type Transcript = unknown[];

/** Clock readings and generated ids vary between runs: replaced by markers. */
function normalise(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalise);
  if (v instanceof Map) return { map: [...v.entries()].map(([k, x]) => [normalise(k), normalise(x)]) };
  if (typeof v === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[47][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(v) && !v.startsWith('00000000')) return '<generated>';
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === 'revisionStart' || k === 'revisionEnd' ? (x === null ? null : '<time>') : normalise(x)]));
  }
  return v;
}

/** Runs steps, recording each answer or typed error. */
function recorder(t: Transcript) {
  return async <T>(label: string, f: () => Promise<T>): Promise<T | undefined> => {
    try {
      const value = await f();
      t.push([label, normalise(value)]);
      return value;
    } catch (err) {
      if (!(err instanceof EngineError)) throw err;
      t.push([label, { error: err.constructor.name, status: err.status, message: err.message }]);
      return undefined;
    }
  };
}

const policy = (name: string, backWindow = 0): ArchivePolicy => ({
  name,
  backWindow,
  definition: [{ granularity: 60_000_000, points: 60, timespan: 3_600_000_000 }],
  aggregationMethods: ['max', 'mean'],
});
const ID = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
const T0 = Date.UTC(2024, 0, 1) * 1000;
const MINUTE = 60_000_000;

async function policiesAndMetrics(s: IndexStore): Promise<Transcript> {
  const t: Transcript = [];
  const step = recorder(t);
  await step('create low', () => s.createPolicy(policy('low')));
  await step('create low again', () => s.createPolicy(policy('low')));
  await step('get low', () => s.getPolicy('low'));
  await step('get missing', () => s.getPolicy('nope'));
  await step('update low', () => s.updatePolicy('low', (p) => ({ ...p, backWindow: 2 })));
  await step('update missing', () => s.updatePolicy('nope', (p) => p));
  await step('rule disk', () => s.createRule({ name: 'r1', metricPattern: 'disk.*', archivePolicyName: 'low' }));
  await step('rule all', () => s.createRule({ name: 'r2', metricPattern: '*', archivePolicyName: 'low' }));
  await step('rule again', () => s.createRule({ name: 'r1', metricPattern: 'x', archivePolicyName: 'low' }));
  await step('rule bad policy', () => s.createRule({ name: 'r9', metricPattern: 'x', archivePolicyName: 'nope' }));
  await step('rename r1 r3', () => s.renameRule('r1', 'r3'));
  await step('rename onto r2', () => s.renameRule('r3', 'r2'));
  await step('rename missing', () => s.renameRule('nope', 'r5'));
  await step('get r3', () => s.getRule('r3'));
  await step('list rules', () => s.listRules());
  await step('policy disk.io', () => s.policyNameForMetric('disk.io'));
  await step('delete low in use', () => s.deletePolicy('low'));
  await step('delete r2', () => s.deleteRule('r2'));
  await step('policy cpu', () => s.policyNameForMetric('cpu'));
  await step('delete r2 again', () => s.deleteRule('r2'));
  await step('ensure', () => s.ensurePolicies([policy('low', 9), policy('high')], [{ name: 'r3', metricPattern: 'y', archivePolicyName: 'high' }, { name: 'r4', metricPattern: 'cpu*', archivePolicyName: 'high' }]));
  await step('list policies', () => s.listPolicies());
  await step('policy cpu after ensure', () => s.policyNameForMetric('cpu'));
  const creators = ['alice:p1', 'bob:p2', 'alice:p2'];
  for (let i = 0; i < 12; i++) {
    await step(`metric ${i}`, () => s.createMetric({
      id: ID(100 + i), name: i % 4 === 0 ? null : `m${i % 5}`, unit: i % 3 === 0 ? null : `u${i % 2}`,
      archivePolicyName: i % 2 === 0 ? 'low' : 'high', creator: creators[i % 3]!, resourceId: null,
    }));
  }
  await step('metric bad policy', () => s.createMetric({ id: ID(199), name: null, unit: null, archivePolicyName: 'nope', creator: 'a:b', resourceId: null }));
  await step('metric on missing resource', () => s.createMetric({ id: ID(198), name: 'x', unit: null, archivePolicyName: 'low', creator: 'a:b', resourceId: ID(1) }));
  await step('get metric', () => s.getMetric(ID(101)));
  await step('get metrics', () => s.getMetrics([ID(101), ID(102), ID(197)]));
  const sortings = [[], [{ key: 'name', direction: 'asc' }], [{ key: 'unit', direction: 'desc' }, { key: 'creator', direction: 'asc' }], [{ key: 'archive_policy_name', direction: 'desc' }]] as const;
  for (const sorts of sortings) {
    for (const filter of [{}, { creator: 'alice:p1' }, { archive_policy_name: 'high' }]) {
      const all = await step(`list ${JSON.stringify(sorts)} ${JSON.stringify(filter)}`, () => s.listMetrics({ filter, sorts: [...sorts], limit: 100 }));
      // Page by 5 through markers: the same sequence.
      const paged = [];
      let marker: string | undefined;
      for (;;) {
        const page = await s.listMetrics({ filter, sorts: [...sorts], limit: 5, ...(marker === undefined ? {} : { marker }) });
        paged.push(...page);
        if (page.length < 5) break;
        marker = page[4]!.id;
      }
      expect(paged).toEqual(all);
    }
  }
  await step('list bad marker', () => s.listMetrics({ filter: {}, sorts: [], limit: 5, marker: ID(197) }));
  await step('delete high in use', () => s.deletePolicy('high'));
  await step('delete metric', () => s.deleteMetric(ID(101)));
  await step('delete metric again', () => s.deleteMetric(ID(101)));
  await step('get deleted metric', () => s.getMetric(ID(101)));
  return t;
}

const SERVER: ResourceTypeRecord = {
  name: 'server',
  state: 'creating',
  attributes: [
    { name: 'flavor', type: 'string', required: true, minLength: 0, maxLength: 255 },
    { name: 'host', type: 'string', required: false, minLength: 0, maxLength: 255 },
    { name: 'vcpus', type: 'number', required: false, min: null, max: null },
    { name: 'booted_at', type: 'datetime', required: false },
    { name: 'active', type: 'bool', required: false },
    { name: 'owner', type: 'uuid', required: false },
  ],
};
/** Shares the name `flavor` with another kind: each type's searches must read only its own. */
const OTHER: ResourceTypeRecord = { name: 'other', state: 'creating', attributes: [{ name: 'flavor', type: 'number', required: false, min: null, max: null }] };

const FLAVORS = ['small', 'large', 'medium', 'Small', 'x_l%'];

function server(i: number): NewResource {
  return {
    id: ID(i),
    originalResourceId: `vm-${i}`,
    creator: ['alice:p1', 'bob:p2', 'alice:p2'][i % 3]!,
    userId: i % 4 === 0 ? null : `u${i % 3}`,
    projectId: i % 5 === 0 ? null : `p${i % 2}`,
    startedAt: T0 + i * MINUTE,
    endedAt: i % 6 === 0 ? T0 + i * MINUTE + (i % 12) * 30 * MINUTE : null,
    attrs: {
      flavor: FLAVORS[i % FLAVORS.length]!,
      host: i % 7 === 0 ? null : `h${i % 4}`,
      vcpus: i % 9 === 0 ? null : [1, 2, 4, 8, 0.5][i % 5]!,
      booted_at: i % 8 === 0 ? null : T0 + i * MINUTE + (i % 3) * 1_500_000,
      active: i % 5 === 0 ? null : i % 2 === 0,
      owner: i % 3 === 0 ? null : ID(900 + (i % 2)),
    },
  };
}

async function populate(s: IndexStore): Promise<void> {
  await s.createPolicy(policy('low'));
  await s.createType(SERVER);
  await s.createType(OTHER);
  for (let i = 1; i <= 40; i++) await s.create('server', server(i));
  for (let i = 41; i <= 45; i++) await s.create('other', { ...server(i), attrs: { flavor: i } });
  for (let i = 1; i <= 40; i += 3) await s.update('server', ID(i), { attrs: { vcpus: 16, host: `h${i % 2}` } });
  for (let i = 2; i <= 40; i += 7) await s.update('server', ID(i), { userId: 'u9', attrs: { flavor: 'large' } });
}

const QUERIES: unknown[] = [
  { '=': { flavor: 'small' } },
  { '!=': { flavor: 'small' } },
  { '=': { host: null } },
  { '!=': { host: null } },
  { '!=': { host: 'h1' } },
  { '<': { vcpus: 4 } },
  { '<=': { vcpus: '2' } },
  { '>': { vcpus: 2 } },
  { '>=': { booted_at: '2024-01-01T00:10:00' } },
  { '<': { booted_at: null } },
  { like: { flavor: 's%' } },
  { like: { flavor: '%\\_%' } },
  { like: { flavor: 'x_l\\%' } },
  { like: { vcpus: '%.5' } },
  { like: { vcpus: '1%' } },
  { like: { booted_at: '2024-01-01T00:1%' } },
  { like: { booted_at: '%.500000+00:00' } },
  { like: { active: 'tr%' } },
  { like: { flavor: null } },
  { like: { started_at: '%T00:2%' } },
  { in: { flavor: ['small', 'large', null] } },
  { in: { vcpus: [1, 8, '16'] } },
  { '=': { active: true } },
  { '!=': { active: false } },
  { '=': { active: 'true' } },
  { '>': { active: 0 } },
  { in: { active: [true] } },
  { '=': { owner: ID(900) } },
  { '=': { owner: ID(900).replace(/-/g, '') } },
  { and: [{ '=': { flavor: 'large' } }, { '>=': { vcpus: 2 } }] },
  { or: [{ '=': { host: 'h1' } }, { '=': { vcpus: null } }] },
  { not: { '=': { host: 'h1' } } },
  { not: { or: [{ '=': { host: 'h1' } }, { '<': { vcpus: 2 } }] } },
  { '=': { user_id: 'u1' } },
  { '!=': { project_id: 'p1' } },
  { '=': { created_by_user_id: 'alice' } },
  { '!=': { created_by_user_id: 'alice' } },
  { like: { created_by_project_id: 'p%' } },
  { '>': { lifespan: '1 hour' } },
  { '<=': { lifespan: 3600 } },
  { '=': { revision: 3 } },
  { '>=': { revision: -1 } },
  { '!=': { revision_end: null } },
  { '>=': { started_at: '2024-01-01T00:20:00' } },
  { '<': { ended_at: '2024-01-01T03:00:00' } },
  { '=': { id: ID(5) } },
  { in: { id: [ID(1), ID(2), ID(44)] } },
  { '=': { type: 'server' } },
  { '=': { original_resource_id: 'vm-3' } },
  { '=': { nope: 1 } },
  { '=': { vcpus: 'abc' } },
];
const SORTS = [DEFAULT_RESOURCE_SORT, ['flavor:desc'], ['booted_at:asc-nullsfirst'], ['vcpus:desc-nullslast', 'host:asc'], ['user_id:desc'], ['active:asc', 'ended_at:desc']];

/** A search's answer as comparable text: each revision with what a listing shows. */
const shown = (rs: { id: string; revision: number; attrs: object; userId: string | null }[]) => rs.map((r) => `${r.id}@${r.revision} ${r.userId} ${JSON.stringify(r.attrs, Object.keys(r.attrs).sort())}`);

async function searches(s: IndexStore): Promise<Transcript> {
  await populate(s);
  const t: Transcript = [];
  const step = recorder(t);
  const server = await s.getType('server');
  for (const type of ['server', 'generic']) {
    const rt = await s.getType(type);
    for (const raw of QUERIES) {
      if (type === 'generic' && Object.keys(Object.values(raw as object)[0] as object).some((f) => ['flavor', 'host', 'vcpus', 'booted_at', 'active', 'owner'].includes(f))) continue;
      const filter = validateResourceQuery(raw, { resourceId: (v) => v }) as QueryNode;
      for (const history of [false, true]) {
        await step(`${type} ${JSON.stringify(raw)} history=${history}`, async () => shown(await s.list(type, { filter, history, sorts: parseResourceSorts(DEFAULT_RESOURCE_SORT, rt, history), limit: 1000 })));
      }
    }
  }
  for (const raw of [{ '>=': { vcpus: 1 } }, { '!=': { flavor: 'medium' } }]) {
    const filter = validateResourceQuery(raw, { resourceId: (v) => v }) as QueryNode;
    for (const sort of SORTS) {
      for (const history of [false, true]) {
        const sorts = parseResourceSorts(sort, server, history);
        const all = await step(`sort ${sort} ${JSON.stringify(raw)} history=${history}`, async () => shown(await s.list('server', { filter, history, sorts, limit: 1000 })));
        const paged: string[] = [];
        let marker: string | undefined;
        for (;;) {
          const page = await s.list('server', { filter, history, sorts, limit: 7, marker });
          paged.push(...shown(page));
          if (page.length < 7) break;
          const last = page[6]!;
          marker = history ? `${last.id}@${last.revision}` : last.id;
        }
        expect(paged).toEqual(all);
      }
    }
  }
  await step('bad marker', () => s.list('server', { history: false, sorts: parseResourceSorts(DEFAULT_RESOURCE_SORT, server, false), limit: 5, marker: ID(999) }));
  await step('bad history marker', () => s.list('server', { history: true, sorts: parseResourceSorts(DEFAULT_RESOURCE_SORT, server, true), limit: 5, marker: `${ID(1)}@x` }));
  return t;
}

async function resourcesLifecycle(s: IndexStore): Promise<Transcript> {
  const t: Transcript = [];
  const step = recorder(t);
  await s.createPolicy(policy('low'));
  await step('create type', () => s.createType(SERVER));
  await step('create type again', () => s.createType(SERVER));
  await step('create generic', () => s.createType({ name: 'generic', state: 'creating', attributes: [] }));
  await step('find type', () => s.findType('server'));
  await step('list types', () => s.listTypes());
  await step('get missing type', () => s.getType('nope'));
  const metrics = new Map([['cpu', { kind: 'new' as const, archivePolicyName: 'low', unit: 'ns' }]]);
  await step('create r1', () => s.create('server', { ...server(1), metrics }));
  await step('create r1 again', () => s.create('server', server(1)));
  await step('create in missing type', () => s.create('nope', server(2)));
  await step('create ended before start', () => s.create('server', { ...server(2), endedAt: T0 }));
  await step('create with bad policy', () => s.create('server', { ...server(2), metrics: new Map([['x', { kind: 'new', archivePolicyName: 'nope', unit: null }]]) }));
  await step('create r2 with free metric', async () => {
    await s.createMetric({ id: ID(300), name: null, unit: null, archivePolicyName: 'low', creator: 'bob:p2', resourceId: null });
    return s.create('server', { ...server(2), metrics: new Map([['disk', { kind: 'existing', id: ID(300) }]]) });
  });
  await step('create with foreign metric', () => s.create('server', { ...server(3), metrics: new Map([['disk', { kind: 'existing', id: ID(300) }]]) }));
  await step('get r1', () => s.get('server', ID(1)));
  await step('get r1 generic', () => s.get('generic', ID(1)));
  await step('get r1 wrong type', () => s.get('other', ID(1)));
  await step('get resources', () => s.getResources([ID(1), ID(2), ID(3)]));
  await step('metrics of', () => s.metricsOfResources([ID(1), ID(2), ID(3)]));
  await step('metric by name', () => s.metricByName(ID(1), 'cpu'));
  const before = (await s.get('server', ID(1)))!;
  await step('update attrs', () => s.update('server', ID(1), { attrs: { host: 'elsewhere' }, userId: 'u7' }));
  const after = (await s.get('server', ID(1)))!;
  expect(after.revisionStart).toBeGreaterThan(before.revisionStart);
  expect(await s.firstRevisionStart(ID(1))).toBe(before.revisionStart);
  await step('update nothing', () => s.update('server', ID(1), { attrs: { host: 'elsewhere' } }));
  expect((await s.get('server', ID(1)))!.revisionStart).toBe(after.revisionStart);
  await step('update ended before start', () => s.update('server', ID(1), { endedAt: T0 }));
  await step('update missing', () => s.update('server', ID(9), { attrs: {} }));
  await step('append metric', () => s.update('server', ID(1), { metrics: new Map([['mem', { kind: 'new', archivePolicyName: 'low', unit: null }]]) }, true));
  await step('append taken name', () => s.update('server', ID(1), { metrics: new Map([['mem', { kind: 'new', archivePolicyName: 'low', unit: null }]]) }, true));
  await step('metrics after append', () => s.metricsOf(ID(1)));
  await step('replace metrics', () => s.update('server', ID(1), { metrics: new Map([['net', { kind: 'new', archivePolicyName: 'low', unit: null }]]) }));
  await step('metrics after replace', () => s.metricsOf(ID(1)));
  await step('history', async () => shown(await s.list('server', { history: true, sorts: parseResourceSorts(DEFAULT_RESOURCE_SORT, SERVER, true), limit: 100 })));
  await step('delete type in use', () => s.deleteType('server'));
  await step('add and remove attributes', () => s.updateTypeAttributes('server', [{ def: { name: 'zone', type: 'string', required: false, minLength: 0, maxLength: 255 }, fill: 'z1' }], ['host']));
  await step('search added attribute', async () => shown(await s.list('server', {
    filter: { kind: 'compare', op: 'eq', field: 'zone', value: 'z1' }, history: true, sorts: parseResourceSorts(DEFAULT_RESOURCE_SORT, SERVER, true), limit: 100,
  })));
  await step('search removed attribute', () => s.list('server', { filter: { kind: 'compare', op: 'eq', field: 'host', value: 'h1' }, history: false, sorts: [], limit: 100 }));
  await step('update type missing', () => s.updateTypeAttributes('nope', [], []));
  await step('delete r1 wrong type', () => s.delete('other', ID(1)));
  await step('delete r1', () => s.delete('server', ID(1)));
  await step('delete r1 again', () => s.delete('server', ID(1)));
  await step('r1 metric gone', () => s.metricByName(ID(1), 'net'));
  for (let i = 10; i < 16; i++) await s.create('server', server(i));
  await step('create and extend', () => s.createAndExtend('server', [server(20), server(21)], [{ id: ID(10), metrics: new Map([['cpu', { kind: 'new', archivePolicyName: 'low', unit: null }]]) }]));
  await step('create and extend conflict', () => s.createAndExtend('server', [server(22)], [{ id: ID(10), metrics: new Map([['cpu', { kind: 'new', archivePolicyName: 'low', unit: null }]]) }]));
  await step('r22 not created', () => s.get('server', ID(22)));
  const named = (names: string[], archivePolicyName = 'low') => new Map(names.map((n) => [n, { kind: 'new' as const, archivePolicyName, unit: n === 'cpu' ? 'ns' : null }]));
  await step('create and extend with metrics', () => s.createAndExtend('server', [
    { ...server(23), attrs: { ...server(23).attrs, host: 'a"b\\c,{x} é' }, metrics: named(['cpu', 'mem']) },
    { ...server(24), metrics: named(['cpu']) },
    server(25),
  ], []));
  await step('bulk created', () => s.getResources([ID(23), ID(24), ID(25)]));
  await step('bulk created metrics', async () => {
    const byResource = await s.metricsOfResources([ID(23), ID(24), ID(25)]);
    const ids = [...byResource.values()].flatMap((m) => [...m.values()]);
    return [...[...byResource.entries()].map(([id, m]) => [id, [...m.keys()]]), ...(await s.getMetrics(ids)).map((m) => [m!.name, m!.unit, m!.creator, m!.resourceId])];
  });
  // A collector chooses its new metrics' ids, to know them without reading them back.
  const chosen = (name: string, i: number) => new Map([[name, { kind: 'new' as const, archivePolicyName: 'low', unit: null, id: ID(900 + i) }]]);
  await step('create and extend with chosen ids', () => s.createAndExtend('server', [{ ...server(29), metrics: chosen('cpu', 1) }], [{ id: ID(10), metrics: chosen('disk', 2) }]));
  expect(await step('chosen ids kept', async () => [(await s.metricByName(ID(29), 'cpu'))?.id, (await s.metricByName(ID(10), 'disk'))?.id])).toEqual([ID(901), ID(902)]);
  await step('create and extend twice in a batch', () => s.createAndExtend('server', [server(26), server(26)], []));
  await step('create and extend taken', () => s.createAndExtend('server', [server(27), server(24)], []));
  await step('create and extend bad policy', () => s.createAndExtend('server', [{ ...server(28), metrics: named(['cpu'], 'nope') }], []));
  await step('none of those created', () => s.getResources([ID(26), ID(27), ID(28)]));
  await step('delete matching', () => s.deleteMatching('server', { kind: 'compare', op: 'ge', field: 'started_at', value: '2024-01-01T00:12:00' }));
  await step('left', async () => shown(await s.list('generic', { history: true, sorts: parseResourceSorts(DEFAULT_RESOURCE_SORT, SERVER, true), limit: 100 })));
  await step('delete matching all', () => s.deleteMatching('server', { kind: 'compare', op: 'ne', field: 'id', value: ID(0) }));
  await step('delete type', () => s.deleteType('server'));
  await step('delete type again', () => s.deleteType('server'));
  await step('types left', () => s.listTypes());
  return t;
}

const SCENARIOS: [string, (s: IndexStore) => Promise<Transcript>, string[]][] = [
  ['policies, rules and metrics', policiesAndMetrics, ['ArchivePolicyAlreadyExists', 'ArchivePolicyInUse', 'NoArchivePolicyRuleMatch', 'NoSuchMetric', 'InvalidPagination']],
  ['resource types and resources', resourcesLifecycle, ['ResourceTypeInUse', 'ResourceAlreadyExists', 'NamedMetricAlreadyExists', 'NoSuchResource', 'NoSuchResourceType']],
  ['searches', searches, ['QueryValueError', 'BadRequest', 'InvalidPagination']],
];

describe.skipIf(postgresMissing !== undefined)('IndexStore contract: LMDB and PostgreSQL answer alike', () => {
  const pg = usePgHarness();

  it.each(SCENARIOS)('%s', async (_name, scenario, errors) => {
    const lmdb = openLmdbIndexStore();
    const reference = await scenario(lmdb.store).finally(() => lmdb.close());
    // The reference itself went through the failures the scenario is about.
    const seen = JSON.stringify(reference);
    for (const e of errors) expect(seen).toContain(`"error":"${e}"`);
    const postgres = await pg.store();
    const answer = await scenario(postgres.store).finally(() => postgres.close());
    for (let i = 0; i < reference.length; i++) expect(answer[i], `step ${i}`).toEqual(reference[i]);
    expect(answer.length).toBe(reference.length);
  }, 120_000);
});
