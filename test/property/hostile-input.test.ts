// Hostile input, property-based: generated requests against every route
// must never get a 5xx, never hang, leave the server answering
// /healthcheck, and leave data written beforehand untouched.
//
// Requests may target a set of sacrificial objects (a policy, a rule, a
// metric, a resource type and resource) so that they reach the handlers'
// deeper paths; the protected objects compared before and after are never
// named in a generated request (their names and ids are not in any
// generator), and batch deletes are never aimed at their resource type.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, createMetric, createPolicy, json, pushMeasures, startTestApp, type TestApp } from '../server/helpers.js';
import { body, headers, queryString, segment } from './arbitraries.js';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';
const METHODS: Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

/** Every route registered by server/routes/*.ts, with the methods it serves. */
const ROUTES: [string, Method[]][] = [
  ['/', ['GET']],
  ['/v1', ['GET']],
  ['/healthcheck', ['GET']],
  ['/v1/capabilities', ['GET']],
  ['/v1/status', ['GET']],
  ['/v1/archive_policy', ['GET', 'POST']],
  ['/v1/archive_policy/:policy', ['GET', 'PATCH', 'DELETE']],
  ['/v1/archive_policy_rule', ['GET', 'POST']],
  ['/v1/archive_policy_rule/:rule', ['GET', 'PATCH', 'DELETE']],
  ['/v1/metric', ['GET', 'POST']],
  ['/v1/metric/:metric', ['GET', 'DELETE']],
  ['/v1/metric/:metric/measures', ['GET', 'POST']],
  ['/v1/batch/metrics/measures', ['POST']],
  ['/v1/aggregates', ['POST']],
  ['/v1/aggregation/metric', ['GET', 'POST']],
  ['/v1/aggregation/resource/:type/metric', ['GET', 'POST']],
  ['/v1/aggregation/resource/:type/metric/:mname', ['GET', 'POST']],
  ['/v1/search/metric', ['POST']],
  ['/v1/search/resource/:type', ['GET', 'POST']],
  ['/v1/resource_type', ['GET', 'POST']],
  ['/v1/resource_type/:rtype', ['GET', 'PATCH', 'DELETE']],
  ['/v1/resource', ['GET']],
  ['/v1/resource/:type', ['GET', 'POST', 'DELETE']],
  ['/v1/resource/:type/:rid', ['GET', 'PATCH', 'DELETE']],
  ['/v1/resource/:type/:rid/history', ['GET']],
  ['/v1/resource/:type/:rid/metric', ['GET', 'POST']],
  ['/v1/resource/:type/:rid/metric/:mname', ['GET']],
  ['/v1/resource/:type/:rid/metric/:mname/measures', ['GET', 'POST']],
  ['/v1/batch/resources/metrics/measures', ['POST']],
  ['/v1/influxdb/ping', ['GET', 'HEAD']],
  ['/v1/influxdb/query', ['POST']],
  ['/v1/influxdb/write', ['POST']],
  ['/v1/prometheus/write', ['POST']],
];

// Sacrificial objects, fair game for generated requests.
const VICTIM = {
  policy: 'victim-policy',
  rule: 'victim-rule',
  rtype: 'victimtype',
  rid: 'victim-resource',
  mname: 'victim.metric',
  metric: '', // filled in beforeAll
};
// Protected objects, compared before and after.
const KEEP = { policy: `keep-${randomUUID()}`, metric: '', rid: randomUUID(), mname: 'keep.metric' };

const REQUEST_TIMEOUT_MS = 15_000;

interface GeneratedRequest {
  method: Method;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

function requestArbitrary(): fc.Arbitrary<GeneratedRequest> {
  const params: Record<string, fc.Arbitrary<string>> = {
    policy: segment([VICTIM.policy, 'low', 'medium']),
    rule: segment([VICTIM.rule]),
    metric: segment([VICTIM.metric, randomUUID()]),
    type: segment([VICTIM.rtype, 'generic']),
    rtype: segment([VICTIM.rtype, 'generic']),
    rid: segment([VICTIM.rid, randomUUID()]),
    mname: segment([VICTIM.mname, 'cpu']),
  };
  return fc
    .record({
      // Mostly a method the route serves, sometimes any method.
      routeAndMethod: fc.constantFrom(...ROUTES).chain(([route, served]) =>
        fc.tuple(fc.constant(route), fc.oneof({ arbitrary: fc.constantFrom(...served), weight: 6 }, { arbitrary: fc.constantFrom(...METHODS), weight: 1 })),
      ),
      values: fc.record(params),
      extraSegments: fc.oneof({ arbitrary: fc.constant(''), weight: 8 }, { arbitrary: fc.constantFrom('/', '//', '/..', '/%00', '/./x', '/../../etc/passwd'), weight: 1 }),
      query: queryString,
      headers,
      body,
    })
    .map(({ routeAndMethod: [route, method], values, extraSegments, query, headers: h, body: b }) => {
      const path = route.replace(/:([a-z]+)/g, (_, name: string) => values[name] ?? '');
      // A batch delete may match anything of the type it is aimed at: keep it
      // away from the protected resource's type.
      const deletesGeneric = method === 'DELETE' && route === '/v1/resource/:type' && decodeURIComponentSafe(values.type!) === 'generic';
      return {
        method: deletesGeneric ? 'GET' : method,
        url: path + extraSegments + query,
        headers: h,
        body: b,
      };
    });
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

async function send(t: TestApp, req: GeneratedRequest): Promise<{ status: number; text: string }> {
  const options: InjectOptions = { method: req.method, url: req.url, headers: req.headers };
  if (req.body !== undefined) options.payload = req.body;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`request hung for ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS);
  });
  try {
    const res = await Promise.race([t.app.inject(options), timeout]);
    return { status: res.statusCode, text: res.body };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The one deliberate 5xx: like Gnocchi, the InfluxDB query endpoint answers
 * 501 to any query other than CREATE DATABASE.
 */
function expected5xx(req: GeneratedRequest, status: number): boolean {
  return status === 501 && req.method === 'POST' && req.url.startsWith('/v1/influxdb/query?');
}

async function healthy(t: TestApp): Promise<void> {
  const res = await t.app.inject({ method: 'GET', url: '/healthcheck' });
  expect(res.statusCode).toBe(200);
}

/** Reads of the protected data, compared before and after the runs. */
async function snapshot(t: TestApp): Promise<unknown> {
  const reads = [
    `/v1/archive_policy/${KEEP.policy}`,
    `/v1/metric/${KEEP.metric}`,
    `/v1/metric/${KEEP.metric}/measures?refresh=true`,
    `/v1/metric/${KEEP.metric}/measures?aggregation=max&refresh=true`,
    `/v1/resource/generic/${KEEP.rid}`,
    `/v1/resource/generic/${KEEP.rid}/history`,
    `/v1/resource/generic/${KEEP.rid}/metric/${KEEP.mname}/measures?refresh=true`,
  ];
  const out: Record<string, unknown> = {};
  for (const url of reads) {
    const res = await json(t.app, 'GET', url);
    out[url] = { status: res.status, body: res.body };
  }
  return out;
}

let t: TestApp;
let before: unknown;

beforeAll(async () => {
  t = await startTestApp({ workers: 0 });
  const definition = [
    { granularity: '1 minute', points: 60 },
    { granularity: '1 hour', points: 24 },
  ];
  await createPolicy(t.app, { name: KEEP.policy, back_window: 0, definition });
  await createPolicy(t.app, { name: VICTIM.policy, definition });
  const rule = await json(t.app, 'POST', '/v1/archive_policy_rule', { name: VICTIM.rule, metric_pattern: 'victim.*', archive_policy_name: VICTIM.policy });
  if (rule.status !== 201) throw new Error(`cannot create rule: ${rule.status} ${rule.text}`);
  const rt = await json(t.app, 'POST', '/v1/resource_type', { name: VICTIM.rtype, attributes: { host: { type: 'string', required: false } } });
  if (rt.status !== 201) throw new Error(`cannot create resource type: ${rt.status} ${rt.text}`);
  const vr = await json(t.app, 'POST', `/v1/resource/${VICTIM.rtype}`, { id: VICTIM.rid, metrics: { [VICTIM.mname]: { archive_policy_name: VICTIM.policy } } });
  if (vr.status !== 201) throw new Error(`cannot create resource: ${vr.status} ${vr.text}`);
  VICTIM.metric = await createMetric(t.app, { archive_policy_name: VICTIM.policy });

  KEEP.metric = await createMetric(t.app, { archive_policy_name: KEEP.policy, name: 'keep', unit: 'ms' });
  await pushMeasures(t.app, KEEP.metric, [
    { timestamp: '2015-03-06T14:33:57', value: 43.1 },
    { timestamp: '2015-03-06T14:34:12', value: 12 },
    { timestamp: '2015-03-06T15:00:00', value: -7.5 },
  ]);
  const kr = await json(t.app, 'POST', '/v1/resource/generic', {
    id: KEEP.rid,
    user_id: 'keep-user',
    project_id: 'keep-project',
    metrics: { [KEEP.mname]: { archive_policy_name: KEEP.policy } },
  });
  if (kr.status !== 201) throw new Error(`cannot create resource: ${kr.status} ${kr.text}`);
  const km = await json(t.app, 'POST', `/v1/resource/generic/${KEEP.rid}/metric/${KEEP.mname}/measures`, [
    { timestamp: '2015-03-06T14:33:57', value: 1 },
    { timestamp: '2015-03-06T16:33:57', value: 2 },
  ]);
  if (km.status !== 202) throw new Error(`cannot push measures: ${km.status} ${km.text}`);
  before = await snapshot(t);
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe('hostile input', () => {
  it('generated requests against every route never get a 5xx, nor hang', async () => {
    await fc.assert(
      fc.asyncProperty(requestArbitrary(), async (req) => {
        const res = await send(t, req);
        if (res.status >= 500 && !expected5xx(req, res.status)) throw new Error(`${req.method} ${req.url.slice(0, 300)} -> ${res.status} ${res.text.slice(0, 500)}`);
        await healthy(t);
      }),
      // A fixed seed keeps CI reproducible; FC_SEED=random explores new inputs.
      // Seed 297264275 found names too long to be storage keys answering 500
      // (now pinned in test/server/path-params.test.ts).
      { numRuns: 220, ...(process.env.FC_SEED === 'random' ? {} : { seed: Number(process.env.FC_SEED ?? 20261122) }) },
    );
    expect(await snapshot(t)).toEqual(before);
  }, 120_000);

  it('measure pushes with hostile values never get a 5xx and leave other metrics alone', async () => {
    const leaf = fc.oneof(
      fc.double(),
      fc.constantFrom('NaN', 'Infinity', '-Infinity', 'nan', '1e400', '', 'now', '-2 days', '2200-01-01', '1969-12-31T23:59:59', '9999-12-31', '0001-01-01'),
      fc.integer({ min: -1e15, max: 1e15 }),
      fc.constant(null),
    );
    const measure = fc.record({ timestamp: leaf, value: leaf }, { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(fc.array(measure, { maxLength: 8 }), fc.constantFrom(`/v1/metric/${VICTIM.metric}/measures`, `/v1/resource/${VICTIM.rtype}/${VICTIM.rid}/metric/${VICTIM.mname}/measures`), async (measures, url) => {
        const res = await send(t, { method: 'POST', url, headers: { ...ADMIN, 'content-type': 'application/json' }, body: JSON.stringify(measures) });
        if (res.status >= 500) throw new Error(`POST ${url} -> ${res.status} ${res.text.slice(0, 500)}`);
        const read = await send(t, { method: 'GET', url: `/v1/metric/${VICTIM.metric}/measures?refresh=true`, headers: { ...ADMIN }, body: undefined });
        if (read.status >= 500) throw new Error(`read after push -> ${read.status} ${read.text.slice(0, 500)}`);
        await healthy(t);
      }),
      { numRuns: 60 },
    );
    expect(await snapshot(t)).toEqual(before);
  }, 120_000);

  // Found by this property: nesting thousands of levels deep overflowed the
  // recursive parsers (500, and near the stack limit a process abort, see
  // deep-nesting-crash.test.ts); formats/nesting.ts now bounds depth first.
  // Shrinking stays off (endOnFailure) so a regression cannot walk the depth
  // down into the window where the process aborts.
  it('deeply nested filters and operations are refused with a 4xx, not a stack overflow', async () => {
    const kinds = ['search', 'batch-delete', 'aggregates-search', 'operations-string', 'operations-json'] as const;
    const build = (kind: (typeof kinds)[number], depth: number): GeneratedRequest => {
      const h = { ...ADMIN, 'content-type': 'application/json', accept: 'application/json' };
      const filter = '{"not":'.repeat(depth) + '{"=":{"id":"x"}}' + '}'.repeat(depth);
      const metric = `(metric ${VICTIM.metric} mean)`;
      switch (kind) {
        case 'search':
          return { method: 'POST', url: `/v1/search/resource/${VICTIM.rtype}`, headers: h, body: filter };
        case 'batch-delete':
          // Aimed at the sacrificial type only: an odd number of "not" matches everything but x.
          return { method: 'DELETE', url: `/v1/resource/${VICTIM.rtype}`, headers: h, body: filter };
        case 'aggregates-search':
          return { method: 'POST', url: '/v1/aggregates', headers: h, body: `{"operations":"(metric cpu mean)","resource_type":"${VICTIM.rtype}","search":${filter}}` };
        case 'operations-string':
          return { method: 'POST', url: '/v1/aggregates', headers: h, body: JSON.stringify({ operations: '(negative '.repeat(depth) + metric + ')'.repeat(depth) }) };
        case 'operations-json':
          return { method: 'POST', url: '/v1/aggregates', headers: h, body: `{"operations":${'["negative",'.repeat(depth) + `["metric","${VICTIM.metric}","mean"]` + ']'.repeat(depth)}}` };
      }
    };
    try {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 10_000, max: 20_000 }), fc.constantFrom(...kinds), async (depth, kind) => {
          const req = build(kind, depth);
          const res = await send(t, req);
          if (res.status >= 500) throw new Error(`${kind} nested ${depth} deep: ${req.method} ${req.url} -> ${res.status} ${res.text.slice(0, 200)}`);
          await healthy(t);
        }),
        { numRuns: 15, endOnFailure: true, examples: [[10_000, 'search']] },
      );
    } finally {
      // Whatever the outcome, the server is still up and the protected data intact.
      await healthy(t);
      expect(await snapshot(t)).toEqual(before);
    }
  }, 120_000);
});
