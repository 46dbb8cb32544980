/**
 * /v1/resource_type, /v1/resource (resources, their history and named
 * metrics) and /v1/batch/resources/metrics/measures.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Series } from '../../engine/aggregation.js';
import { metricsById } from '../../engine/drivers/index-store.js';
import type { Engine } from '../../engine/engine.js';
import { BadRequest, InvalidInput, NamedMetricAlreadyExists, NoSuchMetric, NoSuchResource } from '../../engine/errors.js';
import type { MetricRecord } from '../../engine/index.js';
import { pythonUuid, resourceUuid } from '../../engine/resource-id.js';
import {
  attributeValue,
  checkPatchedAttributes,
  parseAddedAttribute,
  parseResourceTypeBody,
  resourceTypeToJson,
  timestampValue,
  type AttributeValue,
  type ResourceTypeRecord,
} from '../../engine/resource-type.js';
import {
  DEFAULT_RESOURCE_SORT,
  ensureBuiltinResourceTypes,
  parseResourceSorts,
  type MetricSpec,
  type ResourceChanges,
  type ResourceRecord,
  type Revision,
} from '../../engine/resources.js';
import { checkObject, invalidValue, isPlainObject, type Path } from '../../engine/validate.js';
import { FormatError } from '../../formats/errors.js';
import { QueryInputError, validateResourceQuery, type QueryNode } from '../../formats/resource-query.js';
import { parseResourceQueryString } from '../../formats/resource-query-string.js';
import { formatTimestamp } from '../../formats/timestamp.js';
import type { AppContext } from '../app.js';
import { creatorParts, identify, type Identity } from '../auth.js';
import { HttpError } from '../errors.js';
import { baseUrl, boolParam, many, queryOf, readJsonBody, setLocation, single, type UrlOptions } from '../http.js';
import { asRevision, metricToJson, metricsToJson, resourceToJson, resourcesToJson } from '../json-shapes.js';
import {
  body,
  CONDITIONAL_HEADERS,
  empty,
  errors,
  FILTER_BODY,
  FILTER_QUERY,
  flag,
  json,
  jsonBody,
  listOf,
  MEASURES_BODY,
  MEASURES_QUERY,
  PAGE_QUERY,
  params,
  query,
  ref,
  RESOURCE_LIST_QUERY,
  type JsonSchema,
} from '../openapi-schemas.js';
import { pageOptions, setNextLink } from '../pagination.js';
import { enforce, type RuleName } from '../policy.js';
import { narrowed, resourcePolicyFilter } from '../policy-filter.js';
import { creatorTarget } from '../policy-targets.js';
import { decodeMeasuresBody, readMeasuresBody } from './measures.js';
import { getMeasures } from './metric.js';

function policyTarget(r: ResourceRecord) {
  return { creator: r.creator, created_by_project_id: creatorParts(r.creator).projectId, project_id: r.projectId };
}

// --- ETag and conditional requests -----------------------------------------

function etagOf(r: ResourceRecord): string {
  return createHash('sha1').update(r.id).update(formatTimestamp(r.revisionStart)).digest('hex');
}

function lastModifiedOf(r: ResourceRecord): number {
  return Math.floor(r.revisionStart / 1e6) * 1000;
}

function setEtagHeaders(reply: FastifyReply, r: ResourceRecord): void {
  reply.header('ETag', `"${etagOf(r)}"`);
  reply.header('Last-Modified', new Date(lastModifiedOf(r)).toUTCString());
}

function etagList(header: string | undefined): string[] | '*' | undefined {
  if (header === undefined) return undefined;
  if (header.trim() === '*') return '*';
  return header.split(',').map((t) => t.trim().replace(/^W\//, '').replace(/^"|"$/g, ''));
}

function httpDate(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const t = Date.parse(header);
  return Number.isNaN(t) ? undefined : t;
}

/** Gnocchi's `etag_precondition_check` (RFC 7232 order); true means answer 304. */
function notModified(request: FastifyRequest, r: ResourceRecord): boolean {
  const etag = etagOf(r);
  const lastModified = lastModifiedOf(r);
  const h = request.headers;
  const ifMatch = etagList(h['if-match'] as string | undefined);
  const precondition = () => new HttpError(412, '');
  if (ifMatch !== undefined && ifMatch !== '*' && !ifMatch.includes(etag)) throw precondition();
  const ius = httpDate(h['if-unmodified-since'] as string | undefined);
  if (ifMatch === undefined && ius !== undefined && ius < lastModified) throw precondition();
  const ifNoneMatch = etagList(h['if-none-match'] as string | undefined);
  const read = request.method === 'GET' || request.method === 'HEAD';
  if (ifNoneMatch !== undefined && (ifNoneMatch === '*' || ifNoneMatch.includes(etag))) {
    if (read) return true;
    throw precondition();
  }
  const ims = httpDate(h['if-modified-since'] as string | undefined);
  return ifNoneMatch === undefined && ims !== undefined && ims >= lastModified && read;
}

// --- input ------------------------------------------------------------------

/** Gnocchi's MetricsSchema: name -> metric UUID or `{archive_policy_name?, unit?}`. */
export async function parseMetricsSpec(engine: Engine, raw: unknown, path: Path): Promise<Map<string, MetricSpec>> {
  if (!isPlainObject(raw)) throw invalidValue('expected a dictionary', path);
  const out = new Map<string, MetricSpec>();
  for (const [name, def] of Object.entries(raw)) {
    const at = [...path, name];
    if (typeof def === 'string' && pythonUuid(def) !== undefined) {
      out.set(name, { kind: 'existing', id: pythonUuid(def)! });
      continue;
    }
    if (!isPlainObject(def)) throw invalidValue('expected a dictionary', at);
    const d = checkObject({ ...def, name }, at, { optional: ['archive_policy_name', 'name', 'unit', 'resource_id'] });
    for (const key of ['archive_policy_name', 'unit'] as const) {
      if (d[key] !== undefined && typeof d[key] !== 'string') throw invalidValue('expected str', [...at, key]);
    }
    const unit = (d.unit as string | undefined) ?? null;
    if (unit !== null && unit.length > 31) throw invalidValue('length of value must be at most 31', [...at, 'unit']);
    if (name.includes('/')) throw new BadRequest("'/' is not supported in metric name");
    const policy = (d.archive_policy_name as string | undefined) ?? (await engine.index.policyNameForMetric(name));
    out.set(name, { kind: 'new', archivePolicyName: policy, unit });
  }
  return out;
}

function stringOrNull(v: unknown, path: Path): string | null {
  if (v !== null && typeof v !== 'string') throw invalidValue('expected str', path);
  return v;
}

interface ParsedResourceBody extends ResourceChanges {
  id?: { original: string; uuid: string };
}

/** A resource body checked against the type's schema (create: required attributes and `id`). */
async function parseResourceBody(engine: Engine, rt: ResourceTypeRecord, body: unknown, creator: string, create: boolean): Promise<ParsedResourceBody> {
  if (!isPlainObject(body)) throw invalidValue('expected a dictionary', []);
  const out: ParsedResourceBody = {};
  const attrs: Record<string, AttributeValue> = {};
  for (const [key, value] of Object.entries(body)) {
    const at = [key];
    const def = rt.attributes.find((a) => a.name === key);
    if (def !== undefined) attrs[key] = attributeValue(def, value, at);
    else if (key === 'id' && create) {
      if (typeof value !== 'string') throw invalidValue('expected str', at);
      try {
        out.id = { original: value, uuid: resourceUuid(value, creator) };
      } catch (err) {
        if (err instanceof FormatError) throw invalidValue(err.message, at);
        throw err;
      }
    } else if (key === 'started_at') out.startedAt = timestampValue(value, at);
    else if (key === 'ended_at') out.endedAt = value === null ? null : timestampValue(value, at);
    else if (key === 'user_id') out.userId = stringOrNull(value, at);
    else if (key === 'project_id') out.projectId = stringOrNull(value, at);
    else if (key === 'metrics') out.metrics = await parseMetricsSpec(engine, value, at);
    else throw new InvalidInput(`extra keys not allowed @ data['${key}']`, at);
  }
  if (create) {
    for (const key of ['id', ...rt.attributes.filter((a) => a.required).map((a) => a.name)]) {
      if (!Object.hasOwn(body, key)) throw new InvalidInput(`required key not provided @ data['${key}']`, [key]);
    }
  }
  if (Object.keys(attrs).length > 0) out.attrs = attrs;
  return out;
}

/** The filter of a search or batch delete: JSON body, else the STRING form in `filter`. */
export function readResourceFilter(request: FastifyRequest, who: Identity): QueryNode | undefined {
  const raw = request.body;
  let json: unknown;
  if (Buffer.isBuffer(raw) && raw.length > 0) json = readJsonBody(request);
  else {
    const filter = single(queryOf(request), 'filter');
    if (filter === undefined || filter === '') return undefined;
    json = parseResourceQueryString(filter);
  }
  try {
    return validateResourceQuery(json, {
      resourceId: (v) => resourceUuid(v, who.creator),
    });
  } catch (err) {
    if (err instanceof QueryInputError) throw new InvalidInput(err.reason, err.path);
    throw err;
  }
}

/** Lists a page of resources and sets the `Link` header; shared with search. */
export async function listResources(
  engine: Engine,
  request: FastifyRequest,
  reply: FastifyReply,
  urls: UrlOptions,
  maxLimit: number,
  typeName: string,
  filter: QueryNode | undefined,
) {
  const query = queryOf(request);
  const details = boolParam(query, 'details');
  const history = boolParam(query, 'history');
  const page = pageOptions(query, maxLimit);
  const rt = await engine.index.getType(typeName);
  const rawSorts = many(query, 'sort');
  const sorts = parseResourceSorts(rawSorts.length > 0 ? rawSorts : DEFAULT_RESOURCE_SORT, rt, history);
  const revisions = await engine.index.list(typeName, { filter, history, sorts, limit: page.limit, marker: page.marker });
  if (revisions.length > 0 && revisions.length >= page.limit) {
    const last = revisions[revisions.length - 1]!;
    setNextLink(reply, request, urls, history ? `${last.id}@${last.revision}` : last.id, page.limit, DEFAULT_RESOURCE_SORT);
  }
  const attrs = many(query, 'attrs');
  const types = new Map<string, ResourceTypeRecord | undefined>();
  if (typeName === 'generic' && details) {
    const names = [...new Set(revisions.map((r) => r.type))].filter((t) => t !== 'generic');
    const found = await Promise.all(names.map((name) => engine.index.findType(name)));
    names.forEach((name, i) => types.set(name, found[i]));
  }
  const shownType = (r: Revision) => (typeName !== 'generic' ? rt : types.get(r.type));
  return resourcesToJson(engine, revisions, shownType, attrs, history);
}

// --- routes ----------------------------------------------------------------

interface TypeParams {
  type: string;
}
interface ResourceParams extends TypeParams {
  id: string;
}
interface NamedMetricParams extends ResourceParams {
  name: string;
}

const TYPE_TAGS = ['resource types'];
const TAGS = ['resources'];
const TYPE_NAME = params({ name: 'Resource type name' });
const TYPE = params({ type: 'Resource type (`generic` for every type)' });
const RESOURCE = params({ type: 'Resource type (`generic` for every type)', id: 'Resource id, or the original id it was created with' });
const NAMED_METRIC = params({ type: 'Resource type', id: 'Resource id, or the original id', name: 'Metric name' });
const ETAG_HEADERS = ['ETag', 'Last-Modified'] as const;
const NOT_MODIFIED = empty('Not modified (`If-None-Match`, `If-Modified-Since`)');

/** Metric name -> an existing metric's id, or a metric to create. */
const METRICS_SPEC: JsonSchema = {
  type: 'object',
  additionalProperties: {
    anyOf: [
      { type: 'string', format: 'uuid', description: 'An existing metric' },
      {
        type: 'object',
        properties: { archive_policy_name: { type: 'string' }, unit: { type: 'string', maxLength: 31 } },
        description: 'A metric to create',
      },
    ],
  },
};

function resourceBody(create: boolean): JsonSchema {
  return jsonBody({
    type: 'object',
    description: 'Generic attributes and those of the type',
    properties: {
      ...(create ? { id: { type: 'string', description: 'A UUID, or any string (mapped to a UUID per creator)' } } : {}),
      started_at: { type: ['string', 'number'] },
      ended_at: { type: ['string', 'number', 'null'] },
      user_id: { type: ['string', 'null'] },
      project_id: { type: ['string', 'null'] },
      metrics: METRICS_SPEC,
    },
    additionalProperties: { description: 'An attribute of the resource type' },
    ...(create ? { required: ['id'] } : {}),
  });
}

const ATTRIBUTE_INPUT: JsonSchema = {
  type: 'object',
  properties: {
    type: { enum: ['string', 'bool', 'datetime', 'uuid', 'number'] },
    required: { type: 'boolean', default: true },
    min_length: { type: 'integer', minimum: 0 },
    max_length: { type: 'integer', minimum: 0 },
    min: { type: 'number' },
    max: { type: 'number' },
    options: { type: 'object', properties: { fill: {} }, description: 'Patch only: `fill`, the value of existing resources' },
  },
  required: ['type'],
};

/** The metric a `/v1/resource/{type}/{id}/metric/{name}` path names, as Gnocchi's routing looks it up. */
export async function findNamedMetric(engine: Engine, who: Identity, params: NamedMetricParams): Promise<MetricRecord> {
  const resources = engine.index;
  await resources.getType(params.type);
  let id: string;
  try {
    id = resourceUuid(params.id, who.creator);
  } catch {
    throw new NoSuchResource(params.id);
  }
  const m = await resources.metricByName(id, params.name);
  if (m === undefined) {
    if ((await resources.get(params.type, id)) === undefined) throw new NoSuchResource(id);
    throw new NoSuchMetric(params.name);
  }
  return m;
}

export async function resourceRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { engine, config } = ctx;
  const urls = { proxyHeaders: config.proxyHeaders };
  const resources = engine.index;
  // `--builtin-resource-types`: create the requested shipped types if missing.
  await ensureBuiltinResourceTypes(resources, config.builtinResourceTypes);

  /** The resource of a path, after the policy check. */
  async function load(request: FastifyRequest<{ Params: ResourceParams }>, rule: RuleName): Promise<{ who: Identity; r: ResourceRecord; rt: ResourceTypeRecord }> {
    const who = identify(request);
    const rt = await resources.getType(request.params.type);
    let id: string;
    try {
      id = resourceUuid(request.params.id, who.creator);
    } catch {
      throw new NoSuchResource(request.params.id);
    }
    const r = await resources.get(rt.name, id);
    if (r === undefined) throw new NoSuchResource(id);
    enforce(rule, who, policyTarget(r));
    return { who, r, rt };
  }

  // Resource types

  app.get('/v1/resource_type', {
    schema: {
      summary: 'List resource types',
      tags: TYPE_TAGS,
      operationId: 'listResourceTypes',
      response: { 200: json('Every type', listOf(ref('ResourceType'))), ...errors(401, 403, 406) },
    },
  }, async (request) => {
    enforce('list resource type', identify(request));
    return (await resources.listTypes()).map(resourceTypeToJson);
  });

  app.post('/v1/resource_type', {
    schema: {
      summary: 'Create a resource type',
      tags: TYPE_TAGS,
      operationId: 'createResourceType',
      body: jsonBody({
        type: 'object',
        properties: { name: { type: 'string' }, attributes: { type: 'object', additionalProperties: ATTRIBUTE_INPUT } },
        required: ['name'],
      }),
      response: { 201: json('Created, defaults filled in', ref('ResourceType'), ['Location']), ...errors(400, 401, 403, 406, 409, 413, 415) },
    },
  }, async (request, reply) => {
    const who = identify(request);
    const rt = parseResourceTypeBody(readJsonBody(request));
    enforce('create resource type', who);
    const created = await resources.createType(rt);
    setLocation(reply, request, urls, `/v1/resource_type/${created.name}`);
    return reply.code(201).send(resourceTypeToJson(created));
  });

  app.get<{ Params: { name: string } }>('/v1/resource_type/:name', {
    schema: {
      summary: 'Get a resource type',
      tags: TYPE_TAGS,
      operationId: 'getResourceType',
      params: TYPE_NAME,
      response: { 200: json('The type', ref('ResourceType')), ...errors(401, 403, 404, 406) },
    },
  }, async (request) => {
    const who = identify(request);
    const rt = await resources.getType(request.params.name);
    enforce('get resource type', who);
    return resourceTypeToJson(rt);
  });

  app.delete<{ Params: { name: string } }>('/v1/resource_type/:name', {
    schema: {
      summary: 'Delete a resource type no resource has',
      tags: TYPE_TAGS,
      operationId: 'deleteResourceType',
      params: TYPE_NAME,
      response: { 204: empty('Deleted'), ...errors(400, 401, 403, 404) },
    },
  }, async (request, reply) => {
    const who = identify(request);
    await resources.getType(request.params.name);
    enforce('delete resource type', who);
    await resources.deleteType(request.params.name);
    return reply.code(204).send();
  });

  app.patch<{ Params: { name: string } }>('/v1/resource_type/:name', {
    schema: {
      summary: 'Add or remove attributes of a resource type',
      tags: TYPE_TAGS,
      operationId: 'updateResourceType',
      params: TYPE_NAME,
      body: body({
        'application/json-patch+json': listOf({
          type: 'object',
          properties: {
            op: { enum: ['add', 'remove'] },
            path: { type: 'string', pattern: '^/attributes/', description: '`/attributes/<name>`' },
            value: ATTRIBUTE_INPUT,
          },
          required: ['op', 'path'],
        }),
      }),
      response: { 200: json('The updated type', ref('ResourceType')), ...errors(400, 401, 403, 404, 406, 413, 415) },
    },
  }, async (request) => {
    const who = identify(request);
    const rt = await resources.getType(request.params.name);
    enforce('update resource type', who);
    const patch = readJsonBody(request, ['application/json-patch+json']);
    if (!Array.isArray(patch)) throw invalidValue('expected a list', []);
    // The document the patch applies to: the type's JSON form.
    const attributes: Record<string, unknown> = resourceTypeToJson(rt).attributes;
    patch.forEach((op, i) => {
      const o = checkObject(op, [i], { required: ['op', 'path'], optional: ['value'] });
      if (o.op !== 'add' && o.op !== 'remove') throw invalidValue('not a valid value', [i, 'op']);
      if (typeof o.path !== 'string' || !o.path.startsWith('/attributes')) {
        throw invalidValue('Only attributes can be modified', [i, 'path']);
      }
      if (o.value !== undefined && !isPlainObject(o.value)) throw invalidValue('expected dict', [i, 'value']);
    });
    for (const op of patch as { op: string; path: string; value?: unknown }[]) {
      const parts = op.path.split('/').slice(2).map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
      if (parts.length !== 1) throw new BadRequest(`Invalid input: can't apply ${op.op} at ${op.path}`);
      const name = parts[0]!;
      if (op.op === 'remove') {
        if (!Object.hasOwn(attributes, name)) throw new BadRequest(`can't remove a non-existent object '${name}'`);
        delete attributes[name];
      } else {
        if (op.value === undefined) throw new BadRequest("The operation does not contain a 'value' member");
        attributes[name] = op.value;
      }
    }
    checkPatchedAttributes(attributes);
    const existing = new Set(rt.attributes.map((a) => a.name));
    const added = Object.keys(attributes).filter((n) => !existing.has(n));
    const removed = rt.attributes.map((a) => a.name).filter((n) => !Object.hasOwn(attributes, n));
    if (added.length === 0 && removed.length === 0) return resourceTypeToJson(rt);
    const add = added.map((n) => parseAddedAttribute(n, attributes[n]));
    return resourceTypeToJson(await resources.updateTypeAttributes(rt.name, add, removed));
  });

  // Resources

  app.get('/v1/resource', {
    schema: {
      summary: 'The resource types, with the URL listing each',
      tags: TAGS,
      operationId: 'listResourceUrls',
      response: {
        200: json('Type name -> URL of its resources', { type: 'object', additionalProperties: { type: 'string', format: 'uri' } }),
        ...errors(401, 406),
      },
    },
  }, async (request) => {
    const base = baseUrl(request, urls);
    return Object.fromEntries((await resources.listTypes()).map((t) => [t.name, `${base}/v1/resource/${t.name}`]));
  });

  app.get<{ Params: TypeParams }>('/v1/resource/:type', {
    schema: {
      summary: 'List resources of a type',
      tags: TAGS,
      operationId: 'listResources',
      params: TYPE,
      querystring: query(RESOURCE_LIST_QUERY),
      response: {
        200: json('A page of resources, by `revision_start` and `started_at` unless sorted', listOf(ref('ResourceAttributes')), ['Link']),
        ...errors(400, 401, 403, 404, 406),
      },
    },
  }, async (request, reply) => {
    const who = identify(request);
    await resources.getType(request.params.type);
    const filter = resourcePolicyFilter(who, 'list resource', request.params.type);
    return listResources(engine, request, reply, urls, config.maxLimit, request.params.type, filter);
  });

  app.post<{ Params: TypeParams }>('/v1/resource/:type', {
    schema: {
      summary: 'Create a resource',
      tags: TAGS,
      operationId: 'createResource',
      params: TYPE,
      body: resourceBody(true),
      response: {
        201: json('Created', ref('Resource'), ['Location', ...ETAG_HEADERS]),
        ...errors(400, 401, 403, 404, 406, 409, 413, 415),
      },
    },
  }, async (request, reply) => {
    const who = identify(request);
    const rt = await resources.getType(request.params.type);
    const body = await parseResourceBody(engine, rt, readJsonBody(request), who.creator, true);
    enforce('create resource', who);
    const r = await resources.create(rt.name, {
      id: body.id!.uuid,
      originalResourceId: body.id!.original,
      creator: who.creator,
      userId: body.userId ?? null,
      projectId: body.projectId ?? null,
      ...(body.startedAt === undefined ? {} : { startedAt: body.startedAt }),
      endedAt: body.endedAt ?? null,
      attrs: Object.fromEntries(rt.attributes.map((a) => [a.name, body.attrs?.[a.name] ?? null])),
      ...(body.metrics === undefined ? {} : { metrics: body.metrics }),
    });
    setLocation(reply, request, urls, `/v1/resource/${rt.name}/${r.id}`);
    setEtagHeaders(reply, r);
    return reply.code(201).send(await resourceToJson(engine, asRevision(r), rt));
  });

  app.delete<{ Params: TypeParams }>('/v1/resource/:type', {
    schema: {
      summary: 'Delete the resources a filter selects',
      description: 'The filter is required: an empty one would delete every resource.',
      tags: TAGS,
      operationId: 'deleteResources',
      params: TYPE,
      querystring: query(FILTER_QUERY),
      body: FILTER_BODY,
      response: {
        200: json('How many were deleted', { type: 'object', properties: { deleted: { type: 'integer' } }, required: ['deleted'] }),
        ...errors(400, 401, 403, 404, 413, 415),
      },
    },
  }, async (request) => {
    const who = identify(request);
    await resources.getType(request.params.type);
    const filter = readResourceFilter(request, who);
    if (filter === undefined) throw new BadRequest('caution: the query can not be empty, or it will delete entire database');
    const scope = narrowed(resourcePolicyFilter(who, 'delete resources', request.params.type), filter);
    return { deleted: await resources.deleteMatching(request.params.type, scope) };
  });

  app.get<{ Params: ResourceParams }>('/v1/resource/:type/:id', {
    schema: {
      summary: 'Get a resource',
      tags: TAGS,
      operationId: 'getResource',
      params: RESOURCE,
      headers: CONDITIONAL_HEADERS,
      response: { 200: json('The resource', ref('Resource'), [...ETAG_HEADERS]), 304: NOT_MODIFIED, ...errors(401, 403, 404, 406, 412) },
    },
  }, async (request, reply) => {
    const { r, rt } = await load(request, 'get resource');
    if (notModified(request, r)) return reply.code(304).send();
    setEtagHeaders(reply, r);
    return await resourceToJson(engine, asRevision(r), rt);
  });

  app.patch<{ Params: ResourceParams }>('/v1/resource/:type/:id', {
    schema: {
      summary: 'Change a resource (a new revision)',
      tags: TAGS,
      operationId: 'updateResource',
      params: RESOURCE,
      headers: CONDITIONAL_HEADERS,
      body: resourceBody(false),
      response: {
        200: json('The resource, with a new `revision_start` if anything changed', ref('Resource'), [...ETAG_HEADERS]),
        304: NOT_MODIFIED,
        ...errors(400, 401, 403, 404, 406, 409, 412, 413, 415),
      },
    },
  }, async (request, reply) => {
    const { who, r, rt } = await load(request, 'update resource');
    if (notModified(request, r)) return reply.code(304).send();
    const raw = readJsonBody(request);
    const body = await parseResourceBody(engine, rt, raw, who.creator, false);
    let next = r;
    if (Object.keys(raw as object).length > 0) next = await resources.update(rt.name, r.id, body);
    setEtagHeaders(reply, next);
    return await resourceToJson(engine, asRevision(next), rt);
  });

  app.delete<{ Params: ResourceParams }>('/v1/resource/:type/:id', {
    schema: {
      summary: 'Delete a resource and its metrics',
      tags: TAGS,
      operationId: 'deleteResource',
      params: RESOURCE,
      headers: CONDITIONAL_HEADERS,
      response: { 204: empty('Deleted'), 304: NOT_MODIFIED, ...errors(401, 403, 404, 412) },
    },
  }, async (request, reply) => {
    const { r, rt } = await load(request, 'delete resource');
    if (notModified(request, r)) return reply.code(304).send();
    await resources.delete(rt.name, r.id);
    return reply.code(204).send();
  });

  app.get<{ Params: ResourceParams }>('/v1/resource/:type/:id/history', {
    schema: {
      summary: 'The revisions of a resource',
      tags: TAGS,
      operationId: 'getResourceHistory',
      params: RESOURCE,
      querystring: query(PAGE_QUERY),
      response: { 200: json('A page of revisions, oldest first', listOf(ref('Resource')), ['Link']), ...errors(400, 401, 403, 404, 406) },
    },
  }, async (request, reply) => {
    const { r } = await load(request, 'get resource');
    const filter: QueryNode = { kind: 'compare', op: 'eq', field: 'id', value: r.id };
    const query = queryOf(request);
    const page = pageOptions(query, config.maxLimit);
    const rt = await resources.getType(request.params.type);
    const rawSorts = many(query, 'sort');
    const sorts = parseResourceSorts(rawSorts.length > 0 ? rawSorts : DEFAULT_RESOURCE_SORT, rt, true);
    const revisions = await resources.list(rt.name, { filter, history: true, sorts, limit: page.limit, marker: page.marker });
    if (revisions.length > 0 && revisions.length >= page.limit) {
      const last = revisions[revisions.length - 1]!;
      setNextLink(reply, request, urls, `${last.id}@${last.revision}`, page.limit, DEFAULT_RESOURCE_SORT);
    }
    return resourcesToJson(engine, revisions, () => rt, undefined, true);
  });

  // Named metrics of a resource

  const metricsJson = async (r: ResourceRecord) => {
    const ids = [...(await resources.metricsOf(r.id)).values()];
    const metrics = await metricsById(resources, ids);
    return metricsToJson(engine, ids.flatMap((id) => metrics.get(id) ?? []), 'resource_id');
  };

  app.get<{ Params: ResourceParams }>('/v1/resource/:type/:id/metric', {
    schema: {
      summary: 'The metrics of a resource',
      tags: TAGS,
      operationId: 'listResourceMetrics',
      params: RESOURCE,
      response: { 200: json('Its metrics', listOf(ref('Metric'))), ...errors(401, 403, 404, 406) },
    },
  }, async (request) => {
    const { r } = await load(request, 'get resource');
    return metricsJson(r);
  });

  app.post<{ Params: ResourceParams }>('/v1/resource/:type/:id/metric', {
    schema: {
      summary: 'Add metrics to a resource',
      tags: TAGS,
      operationId: 'addResourceMetrics',
      params: RESOURCE,
      body: jsonBody(METRICS_SPEC),
      response: { 200: json('All its metrics', listOf(ref('Metric'))), ...errors(400, 401, 403, 404, 406, 409, 413, 415) },
    },
  }, async (request) => {
    const { r, rt } = await load(request, 'update resource');
    const metrics = await parseMetricsSpec(engine, readJsonBody(request), []);
    try {
      await resources.update(rt.name, r.id, { metrics }, true);
    } catch (err) {
      if (err instanceof NamedMetricAlreadyExists) throw new HttpError(409, err.message);
      throw err;
    }
    return metricsJson(r);
  });

  async function namedMetric(request: FastifyRequest<{ Params: NamedMetricParams }>, rule: RuleName): Promise<MetricRecord> {
    const who = identify(request);
    const m = await findNamedMetric(engine, who, request.params);
    const r = await resources.get('generic', m.resourceId!);
    enforce(rule, who, { creator: m.creator, created_by_project_id: creatorParts(m.creator).projectId, 'resource.project_id': r?.projectId ?? null });
    return m;
  }

  app.get<{ Params: NamedMetricParams }>('/v1/resource/:type/:id/metric/:name', {
    schema: {
      summary: 'Get a metric of a resource by name',
      tags: TAGS,
      operationId: 'getResourceMetric',
      params: NAMED_METRIC,
      response: { 200: json('The metric', ref('MetricWithResource')), ...errors(401, 403, 404, 406) },
    },
  }, async (request) => {
    return metricToJson(engine, await namedMetric(request, 'get metric'), 'resource');
  });

  app.delete<{ Params: NamedMetricParams }>('/v1/resource/:type/:id/metric/:name', {
    schema: {
      summary: 'Delete a metric of a resource by name',
      tags: TAGS,
      operationId: 'deleteResourceMetric',
      params: NAMED_METRIC,
      response: { 204: empty('Deleted'), ...errors(401, 403, 404) },
    },
  }, async (request, reply) => {
    await engine.deleteMetric((await namedMetric(request, 'delete metric')).id);
    return reply.code(204).send();
  });

  app.get<{ Params: NamedMetricParams }>('/v1/resource/:type/:id/metric/:name/measures', {
    schema: {
      summary: 'Read the aggregated measures of a metric of a resource',
      tags: TAGS,
      operationId: 'getResourceMetricMeasures',
      params: NAMED_METRIC,
      querystring: MEASURES_QUERY,
      response: { 200: json('Points of every granularity (or the one asked)', ref('Measures')), ...errors(400, 401, 403, 404, 406, 507) },
    },
  }, async (request, reply) => {
    const m = await namedMetric(request, 'get measures');
    return getMeasures(ctx, request, reply, m);
  });

  app.post<{ Params: NamedMetricParams }>('/v1/resource/:type/:id/metric/:name/measures', {
    config: { pushesMeasures: true },
    schema: {
      summary: 'Push measures to a metric of a resource',
      tags: TAGS,
      operationId: 'pushResourceMetricMeasures',
      params: NAMED_METRIC,
      body: MEASURES_BODY,
      response: { 202: empty('Accepted, to be processed'), ...errors(400, 401, 403, 404, 406, 413, 415, 503, 507) },
    },
  }, async (request, reply) => {
    const m = await namedMetric(request, 'post measures');
    const measures = readMeasuresBody(request);
    await engine.addMeasures(new Map([[m.id, measures]]));
    return reply.code(202).send();
  });

  // Batch of measures by resource and metric name

  app.post('/v1/batch/resources/metrics/measures', {
    config: { pushesMeasures: true },
    schema: {
      summary: 'Push measures to metrics of several resources, by name',
      tags: ['metrics'],
      operationId: 'pushResourceMeasuresBatch',
      querystring: query({ create_metrics: flag('Create the missing metrics (of existing resources), policy from the rules') }),
      body: jsonBody({
        type: 'object',
        description: 'Resource id -> metric name -> measures',
        additionalProperties: {
          type: 'object',
          additionalProperties: {
            anyOf: [
              listOf(ref('MeasureInput')),
              {
                type: 'object',
                properties: { measures: listOf(ref('MeasureInput')), archive_policy_name: { type: 'string' }, unit: { type: 'string' } },
                required: ['measures'],
              },
            ],
          },
        },
      }),
      response: { 202: empty('Accepted, to be processed'), ...errors(400, 401, 403, 406, 413, 415, 503, 507) },
    },
  }, async (request, reply) => {
    const who = identify(request);
    const create = boolParam(queryOf(request), 'create_metrics');
    const body = readJsonBody(request);
    if (!isPlainObject(body)) throw invalidValue('expected a dictionary', []);
    interface Entry {
      original: string;
      rid: string;
      metrics: Map<string, { measures: Series; archivePolicyName?: string; unit?: string }>;
    }
    const entries: Entry[] = [];
    for (const [original, perMetric] of Object.entries(body)) {
      let rid: string;
      try {
        rid = resourceUuid(original, who.creator);
      } catch (err) {
        if (err instanceof FormatError) throw new InvalidInput(`${err.message} @ data['${original}']`, [original]);
        throw err;
      }
      if (!isPlainObject(perMetric)) throw invalidValue('expected a dictionary', [original]);
      const metrics: Entry['metrics'] = new Map();
      for (const [name, v] of Object.entries(perMetric)) {
        if (isPlainObject(v)) {
          const o = checkObject(v, [original, name], { required: ['measures'], optional: ['archive_policy_name', 'unit'] });
          const item: { measures: Series; archivePolicyName?: string; unit?: string } = { measures: decodeMeasuresBody(o.measures) };
          if (typeof o.archive_policy_name === 'string') item.archivePolicyName = o.archive_policy_name;
          if (typeof o.unit === 'string') item.unit = o.unit;
          metrics.set(name, item);
        } else {
          metrics.set(name, { measures: decodeMeasuresBody(v) });
        }
      }
      entries.push({ original, rid, metrics });
    }
    const known = new Map<string, Series>();
    const toCreate: { rid: string; name: string; policy: string; unit: string | null; measures: Series }[] = [];
    const unknownMetrics: string[] = [];
    const unknownResources: { resource_id: string; original_resource_id: string }[] = [];
    const rids = entries.map((e) => e.rid);
    const [existing, named] = await Promise.all([resources.getResources(rids), resources.metricsOfResources(rids)]);
    const records = await metricsById(resources, [...named.values()].flatMap((byName) => [...byName.values()]));
    for (const e of entries) {
      const exists = existing.has(e.rid);
      const byName = named.get(e.rid);
      for (const [name, item] of e.metrics) {
        const id = byName?.get(name);
        const m = id === undefined ? undefined : records.get(id);
        if (m !== undefined) {
          enforce('post measures', who, creatorTarget(m.creator));
          known.set(m.id, item.measures);
        } else if (!create) {
          unknownMetrics.push(`${e.rid}/${name}`);
        } else if (!exists) {
          unknownResources.push({ resource_id: e.rid, original_resource_id: e.original });
          break;
        } else {
          if (name.includes('/')) throw new BadRequest("'/' is not supported in metric name");
          const policy = item.archivePolicyName ?? (await engine.index.policyNameForMetric(name));
          toCreate.push({ rid: e.rid, name, policy, unit: item.unit ?? null, measures: item.measures });
        }
      }
    }
    if (unknownResources.length > 0) throw new BadRequest({ cause: 'Unknown resources', detail: unknownResources });
    if (unknownMetrics.length > 0) throw new BadRequest(`Unknown metrics: ${unknownMetrics.sort().join(', ')}`);
    const policies = [...new Set(toCreate.map((c) => c.policy))];
    const found = await Promise.all(policies.map((name) => engine.index.getPolicy(name)));
    for (const c of toCreate) {
      if (found[policies.indexOf(c.policy)] === undefined) throw new BadRequest(`Archive policy ${c.policy} does not exist`);
    }
    for (const c of toCreate) {
      let m: MetricRecord;
      try {
        m = await engine.index.createMetric({
          id: engine.newMetricId(),
          name: c.name,
          unit: c.unit,
          archivePolicyName: c.policy,
          creator: who.creator,
          resourceId: c.rid,
        });
      } catch (err) {
        if (!(err instanceof NamedMetricAlreadyExists)) throw err;
        m = (await resources.metricByName(c.rid, c.name))!;
      }
      known.set(m.id, c.measures);
    }
    await engine.addMeasures(known);
    return reply.code(202).send();
  });
}
