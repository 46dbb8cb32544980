// The OpenAPI document at /openapi.json: a valid OpenAPI 3.1 document, listing
// every /v1 route the app serves, and true to what the routes answer (real
// requests' statuses and JSON bodies are checked against it).
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { compress } from 'snappyjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pyJson } from '../../formats/json.js';
import { encodeWriteRequest } from '../../formats/prometheus-remote.js';
import { ADMIN, json, startTestApp, type Headers, type JsonResponse, type TestApp } from './helpers.js';

interface Operation {
  parameters?: { in: string; name: string }[];
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object> };
}

let t: TestApp;
let doc: Document;
const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
// ajv-formats is CommonJS: its plugin is the module's `default` export.
ajvFormats.default(ajv);
const compiled = new Map<object, ValidateFunction>();

/** A validator of a schema of the document, its `#/components/...` references resolved in the document. */
function validatorOf(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (validate === undefined) {
    validate = ajv.compile({ ...schema, components: doc.components });
    compiled.set(schema, validate);
  }
  return validate;
}

const ERROR_SCHEMA = { $ref: '#/components/schemas/Error' };

beforeAll(async () => {
  t = await startTestApp({ maxLimit: 1000 });
  const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = JSON.parse(res.body) as Document;
});
afterAll(async () => {
  await t.close();
});

/** `/v1/metric/:id` as the document writes it. */
const documentedPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

/**
 * Every (url, methods) of `printRoutes({ commonPrefix: false })`: a tree in
 * which each line extends its parent's path, with the methods served there.
 */
function registeredRoutes(tree: string): Map<string, string[]> {
  const routes = new Map<string, string[]>();
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/u.exec(line);
    if (match === null) continue;
    const depth = match[1]!.length / 4;
    stack[depth] = (depth === 0 ? '' : stack[depth - 1]!) + match[2]!;
    stack.length = depth + 1;
    if (match[3] !== undefined) routes.set(stack[depth]!, match[3].split(', '));
  }
  return routes;
}

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document named after the package', async () => {
    const result = await new Validator().validate(doc as unknown as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(doc).toMatchObject({ openapi: '3.1.0', info: { title: 'gnocchi-ts', version: expect.any(String) }, servers: [{ url: '/' }] });
  });

  it('registers the shared shapes once, by name', () => {
    for (const name of ['Error', 'ArchivePolicy', 'ArchivePolicyRule', 'Metric', 'Resource', 'ResourceType', 'MeasurePoint']) {
      expect(doc.components.schemas).toHaveProperty(name);
    }
    expect(Object.keys(doc.components.schemas).filter((name) => name.startsWith('def-'))).toEqual([]);
  });

  it('documents only /v1 routes', () => {
    expect(Object.keys(doc.paths).filter((p) => !p.startsWith('/v1'))).toEqual([]);
  });

  it('documents every method of every /v1 route, with its path parameters; what it leaves out answers 405', async () => {
    const routes = registeredRoutes(t.app.printRoutes({ commonPrefix: false }));
    const v1 = [...routes].filter(([url]) => url === '/v1' || url.startsWith('/v1/'));
    expect(v1.length).toBeGreaterThan(20);
    const undocumented: string[] = [];
    for (const [url, methods] of v1) {
      // HEAD is the GET route's; OPTIONS is answered on every path.
      for (const method of methods.filter((m) => m !== 'HEAD' && m !== 'OPTIONS')) {
        const operation = doc.paths[documentedPath(url)]?.[method.toLowerCase()];
        if (operation === undefined) {
          undocumented.push(`${method} ${url}`);
          continue;
        }
        const pathParams = (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name).sort();
        expect(pathParams, `${method} ${url}`).toEqual([...url.matchAll(/:(\w+)/g)].map((m) => m[1]).sort());
      }
    }
    expect(undocumented.length).toBeGreaterThan(0);
    for (const route of undocumented) {
      const [method, url] = route.split(' ') as [string, string];
      const res = await json(t.app, method as 'GET', url.replace(/:\w+/g, 'generic'));
      expect(res.status, route).toBe(405);
    }
  });
});

interface Request {
  url: string;
  /** JSON-encoded unless a string. */
  body?: unknown;
  /** Bytes sent as they are. */
  payload?: Buffer;
  headers?: Headers;
}

/** `METHOD /documented/{path}`, the request (built when its turn comes), the status expected. */
type Case = [operation: string, request: () => Request, expected: number];

async function send(method: string, { url, body, payload, headers = ADMIN }: Request): Promise<JsonResponse> {
  if (payload === undefined) return json(t.app, method as 'GET', url, body, headers);
  const res = await t.app.inject({ method: method as 'GET', url, payload, headers: { 'content-type': 'application/json', accept: 'application/json', ...headers } });
  return { status: res.statusCode, body: undefined, headers: res.headers, text: res.body };
}

describe('the document describes the real answers', () => {
  const ids = { metric: '', etag: '' };
  /** What later requests need from an answer. */
  const KEEP: Record<string, (res: JsonResponse) => void> = {
    'POST /v1/metric': (res) => (ids.metric = res.body.id),
    'GET /v1/resource/{type}/{id}': (res) => {
      if (res.status === 200) ids.etag = String(res.headers.etag);
    },
  };
  const MEASURES = [
    { timestamp: '2024-01-01T00:00:00', value: 1 },
    { timestamp: '2024-01-01T00:01:00', value: 2.5 },
    { timestamp: '2024-01-01T00:02:00', value: 4 },
  ];
  const PATCH_JSON = { ...ADMIN, 'content-type': 'application/json-patch+json' };
  const aggregate = (operations: string, extra: Record<string, unknown> = {}) => ({ operations, ...extra });

  const CASES: Case[] = [
    ['POST /v1/archive_policy', () => ({ url: '/v1/archive_policy', body: { name: 'doc', definition: [{ granularity: '1 minute', points: 1000 }] } }), 201],
    ['POST /v1/archive_policy', () => ({ url: '/v1/archive_policy', body: { name: 'spare', definition: [{ granularity: 60, timespan: '1 day' }] } }), 201],
    ['GET /v1/archive_policy', () => ({ url: '/v1/archive_policy' }), 200],
    ['GET /v1/archive_policy/{name}', () => ({ url: '/v1/archive_policy/doc' }), 200],
    ['PATCH /v1/archive_policy/{name}', () => ({ url: '/v1/archive_policy/doc', body: { definition: [{ granularity: '1 minute', points: 2000 }] } }), 200],
    ['POST /v1/archive_policy_rule', () => ({ url: '/v1/archive_policy_rule', body: { name: 'all', metric_pattern: '*', archive_policy_name: 'doc' } }), 201],
    ['GET /v1/archive_policy_rule', () => ({ url: '/v1/archive_policy_rule' }), 200],
    ['GET /v1/archive_policy_rule/{name}', () => ({ url: '/v1/archive_policy_rule/all' }), 200],
    ['PATCH /v1/archive_policy_rule/{name}', () => ({ url: '/v1/archive_policy_rule/all', body: { name: 'every' } }), 200],
    ['POST /v1/resource_type', () => ({ url: '/v1/resource_type', body: { name: 'host', attributes: { display: { type: 'string', required: false } } } }), 201],
    ['GET /v1/resource_type', () => ({ url: '/v1/resource_type' }), 200],
    ['GET /v1/resource_type/{name}', () => ({ url: '/v1/resource_type/host' }), 200],
    ['PATCH /v1/resource_type/{name}', () => ({
      url: '/v1/resource_type/host',
      body: [{ op: 'add', path: '/attributes/rack', value: { type: 'number', required: false, min: 0 } }],
      headers: PATCH_JSON,
    }), 200],
    ['POST /v1/resource/{type}', () => ({ url: '/v1/resource/host', body: { id: 'srv-1', display: 'one', metrics: { cpu: { archive_policy_name: 'doc' } } } }), 201],
    ['GET /v1/resource', () => ({ url: '/v1/resource' }), 200],
    ['GET /v1/resource/{type}', () => ({ url: '/v1/resource/host' }), 200],
    ['GET /v1/resource/{type}', () => ({ url: '/v1/resource/generic?details=true&attrs=id&attrs=display' }), 200],
    ['GET /v1/resource/{type}/{id}', () => ({ url: '/v1/resource/host/srv-1' }), 200],
    ['GET /v1/resource/{type}/{id}', () => ({ url: '/v1/resource/host/srv-1', headers: { ...ADMIN, 'if-none-match': ids.etag } }), 304],
    ['PATCH /v1/resource/{type}/{id}', () => ({ url: '/v1/resource/host/srv-1', body: { display: 'uno', rack: 4 } }), 200],
    ['GET /v1/resource/{type}/{id}/history', () => ({ url: '/v1/resource/host/srv-1/history' }), 200],
    ['POST /v1/resource/{type}/{id}/metric', () => ({ url: '/v1/resource/host/srv-1/metric', body: { mem: { archive_policy_name: 'doc' } } }), 200],
    ['GET /v1/resource/{type}/{id}/metric', () => ({ url: '/v1/resource/host/srv-1/metric' }), 200],
    ['GET /v1/resource/{type}/{id}/metric/{name}', () => ({ url: '/v1/resource/host/srv-1/metric/cpu' }), 200],
    ['POST /v1/resource/{type}/{id}/metric/{name}/measures', () => ({ url: '/v1/resource/host/srv-1/metric/cpu/measures', body: MEASURES }), 202],
    ['GET /v1/resource/{type}/{id}/metric/{name}/measures', () => ({ url: '/v1/resource/host/srv-1/metric/cpu/measures?refresh=true' }), 200],
    ['POST /v1/metric', () => ({ url: '/v1/metric', body: { archive_policy_name: 'doc' } }), 201],
    ['GET /v1/metric', () => ({ url: '/v1/metric' }), 200],
    ['GET /v1/metric/{id}', () => ({ url: `/v1/metric/${ids.metric}` }), 200],
    ['POST /v1/metric/{id}/measures', () => ({ url: `/v1/metric/${ids.metric}/measures`, body: MEASURES }), 202],
    ['POST /v1/batch/metrics/measures', () => ({ url: '/v1/batch/metrics/measures', body: { [ids.metric]: [{ timestamp: 1704067380, value: 3 }] } }), 202],
    ['POST /v1/batch/resources/metrics/measures', () => ({
      url: '/v1/batch/resources/metrics/measures?create_metrics=true',
      body: { 'srv-1': { cpu: [{ timestamp: '2024-01-01T00:03:00', value: 5 }], disk: { archive_policy_name: 'doc', measures: MEASURES } } },
    }), 202],
    ['GET /v1/metric/{id}/measures', () => ({ url: `/v1/metric/${ids.metric}/measures?refresh=true` }), 200],
    ['GET /v1/metric/{id}/measures', () => ({ url: `/v1/metric/${ids.metric}/measures?resample=W&granularity=60` }), 200],
    ['POST /v1/aggregates', () => ({ url: '/v1/aggregates?details=true', body: aggregate(`(aggregate mean (metric ${ids.metric} mean))`) }), 200],
    ['POST /v1/aggregates', () => ({ url: '/v1/aggregates', body: aggregate(`(metric ${ids.metric} mean)`) }), 200],
    ['POST /v1/aggregates', () => ({
      url: '/v1/aggregates?details=true&refresh=true',
      body: aggregate('(metric cpu mean)', { resource_type: 'host', search: { '=': { display: 'uno' } } }),
    }), 200],
    ['POST /v1/aggregates', () => ({
      url: '/v1/aggregates?groupby=display',
      body: aggregate('(aggregate max (metric cpu mean))', { resource_type: 'host', search: "display = 'uno'" }),
    }), 200],
    ['GET /v1/aggregation/metric', () => ({ url: `/v1/aggregation/metric?metric=${ids.metric}` }), 200],
    ['POST /v1/aggregation/metric', () => ({ url: '/v1/aggregation/metric', body: [ids.metric] }), 200],
    ['POST /v1/aggregation/resource/{type}/metric/{name}', () => ({ url: '/v1/aggregation/resource/host/metric/cpu', body: { '=': { display: 'uno' } } }), 200],
    ['POST /v1/aggregation/resource/{type}/metric/{name}', () => ({ url: '/v1/aggregation/resource/host/metric/cpu?groupby=display', body: { '=': { display: 'uno' } } }), 200],
    ['POST /v1/search/metric', () => ({ url: `/v1/search/metric?metric_id=${ids.metric}`, body: { '>': 2 } }), 200],
    ['POST /v1/search/resource/{type}', () => ({ url: '/v1/search/resource/host', body: { '=': { display: 'uno' } } }), 200],
    ['POST /v1/search/resource/{type}', () => ({ url: `/v1/search/resource/host?history=true&filter=${encodeURIComponent("display = 'uno'")}`, payload: Buffer.alloc(0) }), 200],
    ['GET /v1', () => ({ url: '/v1' }), 200],
    ['GET /v1/capabilities', () => ({ url: '/v1/capabilities' }), 200],
    ['GET /v1/status', () => ({ url: '/v1/status' }), 200],
    ['GET /v1/influxdb/ping', () => ({ url: '/v1/influxdb/ping' }), 204],
    ['POST /v1/influxdb/query', () => ({ url: `/v1/influxdb/query?q=${encodeURIComponent('create database influx')}` }), 204],
    ['POST /v1/influxdb/write', () => ({
      url: '/v1/influxdb/write?db=influx&precision=s',
      payload: Buffer.from('cpu,host=h1 user=1.5 1704067200\n'),
      headers: { ...ADMIN, 'content-type': 'text/plain' },
    }), 204],
    ['POST /v1/prometheus/write', () => ({
      url: '/v1/prometheus/write',
      payload: Buffer.from(compress(encodeWriteRequest({
        timeseries: [{ labels: [{ name: '__name__', value: 'up' }, { name: 'job', value: 'node' }], samples: [{ timestampMs: 1704067200000, value: 1 }] }],
      }))),
      headers: { ...ADMIN, 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy' },
    }), 202],
    ['DELETE /v1/resource/{type}/{id}/metric/{name}', () => ({ url: '/v1/resource/host/srv-1/metric/mem' }), 204],
    ['DELETE /v1/resource/{type}', () => ({ url: '/v1/resource/host', body: { '=': { display: 'nobody' } } }), 200],
    ['DELETE /v1/resource/{type}/{id}', () => ({ url: '/v1/resource/host/srv-1' }), 204],
    ['DELETE /v1/metric/{id}', () => ({ url: `/v1/metric/${ids.metric}` }), 204],
    ['DELETE /v1/resource_type/{name}', () => ({ url: '/v1/resource_type/host' }), 204],
    ['DELETE /v1/archive_policy_rule/{name}', () => ({ url: '/v1/archive_policy_rule/every' }), 204],
    ['DELETE /v1/archive_policy/{name}', () => ({ url: '/v1/archive_policy/spare' }), 204],
  ];

  it('covers every documented operation', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
    expect(new Set(CASES.map(([operation]) => operation))).toEqual(new Set(documented));
  });

  it.each(CASES)('%s (case %#): answers a documented status, and a body that fits its schema', async (operation, request, expected) => {
    const [method, path] = operation.split(' ') as [string, string];
    const res = await send(method, request());
    expect(res.status, res.text).toBe(expected);
    const response = doc.paths[path]?.[method.toLowerCase()]?.responses[String(res.status)];
    expect(response, `${operation} documents ${res.status}`).toBeDefined();
    if (res.text === '') {
      expect(response!.content).toBeUndefined();
    } else {
      const schema = response!.content?.['application/json']?.schema;
      expect(schema, `${operation} ${res.status} documents a JSON body`).toBeDefined();
      const validate = validatorOf(schema!);
      expect(validate(JSON.parse(res.text)), JSON.stringify(validate.errors)).toBe(true);
    }
    KEEP[operation]?.(res);
  });
});

describe('error answers', () => {
  const UNKNOWN = '6b4b7d36-5f1e-4a7c-9d58-6f3f2d9d4f11';
  it.each([
    ['GET /v1/metric/{id}', 'an unknown metric', () => json(t.app, 'GET', `/v1/metric/${UNKNOWN}`), 404],
    ['GET /v1/resource/{type}/{id}', 'an unknown resource type', () => json(t.app, 'GET', `/v1/resource/nothing/${UNKNOWN}`), 404],
    ['POST /v1/metric', 'a body of the wrong shape', () => json(t.app, 'POST', '/v1/metric', { archive_policy_name: 5 }), 400],
    ['POST /v1/archive_policy', 'a body that is not JSON', () => json(t.app, 'POST', '/v1/archive_policy', '{"name":'), 400],
    ['POST /v1/metric', 'a body that is not JSON by its media type', () => json(t.app, 'POST', '/v1/metric', '{}', { ...ADMIN, 'content-type': 'text/plain' }), 415],
  ] as const)('%s, %s: a documented status, in the error shape', async (operation, _what, request, status) => {
    const res = await request();
    expect(res.status).toBe(status);
    expect(validatorOf(ERROR_SCHEMA)(res.body)).toBe(true);
    const [method, path] = operation.split(' ') as [string, string];
    const schema = doc.paths[path]![method.toLowerCase()]!.responses[String(status)]!.content!['application/json']!.schema;
    expect(validatorOf(schema)(res.body)).toBe(true);
  });

  it('leaves validation to the routes: the wording is Gnocchi\'s, not the schema validator\'s', async () => {
    const res = await json(t.app, 'POST', '/v1/metric', { archive_policy_name: 5 });
    expect(res.body.description).toEqual({
      cause: 'Invalid input',
      reason: "expected str for dictionary value @ data['archive_policy_name']",
      detail: ['archive_policy_name'],
    });
  });
});

describe('answers keep their bytes', () => {
  it('serialises a route with a response schema through pyJson', async () => {
    const res = await json(t.app, 'GET', '/v1/capabilities');
    expect(res.text).toBe(pyJson(res.body));
    expect(res.text).toContain('", "');
  });
});

describe('the browsable page', () => {
  // What browsers send: the page and the stylesheet would be 406s if negotiated as the API is.
  it.each([
    ['/openapi/', 'text/html,application/xhtml+xml', 'text/html'],
    ['/openapi/static/swagger-ui-bundle.js', '*/*', 'application/javascript'],
    ['/openapi/static/swagger-ui.css', 'text/css', 'text/css'],
    ['/openapi/json', 'application/json,*/*', 'application/json'],
  ])('%s answers a browser asking for %s', async (url, accept, type) => {
    const res = await t.app.inject({ method: 'GET', url, headers: { accept } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain(type);
  });

  it('shows the document served at /openapi.json', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/openapi/json' });
    expect(JSON.parse(page.body)).toEqual(doc);
  });
});
