/** /v1/metric: create, list, get, delete, and a metric's measures. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isCalendarGroup, type Grouping } from '../../engine/aggregation.js';
import type { Engine } from '../../engine/engine.js';
import { ArgumentError, BadRequest, InvalidInput, InvalidPagination, NamedMetricAlreadyExists, NoSuchMetric } from '../../engine/errors.js';
import { resourceUuid } from '../../engine/resource-id.js';
import { METRIC_SORT_KEYS, type MetricFilter, type MetricRecord, type MetricSortKey } from '../../engine/index.js';
import { checkObject, invalidValue } from '../../engine/validate.js';
import { parseDuration } from '../../formats/duration.js';
import { FormatError } from '../../formats/errors.js';
import { parseTimestamp } from '../../formats/timestamp.js';
import type { AppContext } from '../app.js';
import { creatorParts, identify, type Identity } from '../auth.js';
import { boolParam, queryOf, readJsonBody, setLocation, single, type Query } from '../http.js';
import { pageOptions, setNextLink } from '../pagination.js';
import { empty, errors, json, jsonBody, listOf, MEASURES_BODY, MEASURES_QUERY, PAGE_QUERY, params, query, ref } from '../openapi-schemas.js';
import { createdMetricToJson, metricToJson, metricsToJson } from '../json-shapes.js';
import { enforce, type RuleName } from '../policy.js';
import { listMetricsWhere, metricPolicyPredicate } from '../policy-filter.js';
import { readMeasuresBody } from './measures.js';

interface IdParams {
  id: string;
}

const TAGS = ['metrics'];
const ID = params({ id: 'Metric id' });

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** The form ids are given out in (measured: faster than a loop over the characters). */
const CANONICAL_UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Canonical lowercase dashed form of a UUID, or undefined. */
export function normalizeUuid(id: string): string | undefined {
  // Pushes look up every metric of a batch by id: one test and no copy for the usual form.
  if (CANONICAL_UUID_RE.test(id)) return id;
  const bare = id.replace(/^urn:uuid:/i, '').replace(/[{}]/g, '');
  if (!UUID_RE.test(bare)) return undefined;
  const hex = bare.replace(/-/g, '').toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** `resource_id` of a new metric: Gnocchi's ResourceID, any string mapped to a UUID. */
function metricResourceId(value: unknown, creator: string): string | null {
  if (value === null) return null;
  if (typeof value !== 'string') throw invalidValue('expected str', ['resource_id']);
  try {
    return resourceUuid(value, creator);
  } catch (err) {
    if (err instanceof FormatError) throw new InvalidInput(`${err.message} for dictionary value @ data['resource_id']`, ['resource_id']);
    throw err;
  }
}

/** Gnocchi loads a metric with its resource before checking it. */
async function policyTarget(engine: Engine, m: MetricRecord) {
  const { userId, projectId } = creatorParts(m.creator);
  const resource = m.resourceId === null ? undefined : await engine.index.get('generic', m.resourceId);
  return {
    creator: m.creator,
    created_by_user_id: userId,
    created_by_project_id: projectId,
    resource_id: m.resourceId,
    ...(resource === undefined
      ? {}
      : { 'resource.project_id': resource.projectId, 'resource.user_id': resource.userId, 'resource.creator': resource.creator }),
  };
}

/** The metric of the id in a path, as Gnocchi's routing looks it up. */
export async function findMetric(engine: Engine, id: string): Promise<MetricRecord> {
  const uuid = normalizeUuid(id);
  const metric = uuid === undefined ? undefined : await engine.index.getMetric(uuid);
  if (metric === undefined) throw new NoSuchMetric(id);
  return metric;
}

/** Looks a metric up by the id in the path and checks the caller may use it. */
export async function loadMetric(engine: Engine, who: Identity, id: string, rule: RuleName): Promise<MetricRecord> {
  const metric = await findMetric(engine, id);
  enforce(rule, who, await policyTarget(engine, metric));
  return metric;
}

function durationArg(query: Query, name: string): number | undefined {
  const raw = single(query, name);
  if (raw === undefined) return undefined;
  try {
    return parseDuration(raw);
  } catch (err) {
    if (err instanceof FormatError) throw new ArgumentError(err.message, name);
    throw err;
  }
}

/** The `start` and `stop` of a read, and whether either is relative to now: such a read names new instants every time. */
export interface TimeRange {
  start?: number;
  stop?: number;
  relative: boolean;
}

export function timeRange(query: Query): TimeRange {
  const range: TimeRange = { relative: false };
  for (const name of ['start', 'stop'] as const) {
    const raw = single(query, name);
    if (raw === undefined) continue;
    try {
      range[name] = parseTimestamp(raw, undefined, range);
    } catch (err) {
      if (err instanceof FormatError) throw new ArgumentError('Must be a datetime or a timestamp', name);
      throw err;
    }
  }
  return range;
}

export async function getMeasures(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, metric: MetricRecord) {
  const query = queryOf(request);
  const rawResample = single(query, 'resample');
  if (rawResample !== undefined && single(query, 'granularity') === undefined) {
    throw new BadRequest('A granularity must be specified to resample');
  }
  const { start, stop, relative } = timeRange(query);
  const granularity = durationArg(query, 'granularity');
  let resample: Grouping | undefined;
  if (rawResample !== undefined) {
    if (isCalendarGroup(rawResample)) resample = rawResample;
    else {
      try {
        resample = parseDuration(rawResample);
      } catch (err) {
        if (err instanceof FormatError) throw new BadRequest(err.message);
        throw err;
      }
    }
  }
  const answer = await ctx.engine.getMeasuresJson(metric, {
    method: single(query, 'aggregation') ?? 'mean',
    refresh: boolParam(query, 'refresh'),
    // A read relative to now will not come again: not worth keeping.
    cache: !relative,
    ...(start === undefined ? {} : { start }),
    ...(stop === undefined ? {} : { stop }),
    ...(granularity === undefined ? {} : { granularity }),
    ...(resample === undefined ? {} : { resample }),
  });
  // Fastify adds the charset to string bodies only: the answer is bytes.
  return reply.type('application/json; charset=utf-8').send(answer);
}

function parseSorts(query: Query): { key: MetricSortKey; direction: 'asc' | 'desc' }[] {
  const raw = query.sort === undefined ? ['id:asc'] : Array.isArray(query.sort) ? query.sort : [query.sort];
  return raw.map((s) => {
    const [key, dir = 'asc'] = s.split(':');
    if (!(METRIC_SORT_KEYS as readonly string[]).includes(key!)) {
      throw new InvalidPagination(`Sort key supplied is invalid: ${key}`);
    }
    const direction = dir.split('-')[0];
    if (direction !== 'asc' && direction !== 'desc') {
      throw new InvalidPagination('Unknown sort direction, must be one of: asc-nullsfirst, asc-nullslast, desc-nullsfirst, desc-nullslast');
    }
    return { key: key as MetricSortKey, direction };
  });
}

/**
 * Gnocchi's MetricListSchema: each filter once, `status` one of two values
 * (its other keys are dropped). `resource_id` is ours: Gnocchi drops it
 * and lists every metric, which no caller asking for it wants.
 */
const LIST_FILTERS = ['id', 'name', 'unit', 'archive_policy_name', 'creator', 'resource_id'] as const;
const LIST_PARAMS = [...LIST_FILTERS, 'user_id', 'project_id', 'status'];

function listParam(query: Query, name: string): string | undefined {
  const v = query[name];
  if (Array.isArray(v)) throw new BadRequest(`Invalid input: expected str for dictionary value @ data['${name}']`);
  return v;
}

export async function metricRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { engine, config } = ctx;
  const urls = { proxyHeaders: config.proxyHeaders };

  app.post('/v1/metric', {
    schema: {
      summary: 'Create a metric',
      description: 'Without `archive_policy_name`, the archive policy rule matching the name gives the policy.',
      tags: TAGS,
      operationId: 'createMetric',
      body: jsonBody({
        type: 'object',
        properties: {
          archive_policy_name: { type: 'string' },
          name: { type: 'string', description: 'Without `/`; required with `resource_id`' },
          unit: { type: 'string', maxLength: 31 },
          resource_id: { type: ['string', 'null'], description: 'A resource id (any string maps to a UUID)' },
        },
      }),
      response: { 201: json('Created', ref('CreatedMetric'), ['Location']), ...errors(400, 401, 403, 404, 406, 413, 415) },
    },
  }, async (request, reply) => {
    const who = identify(request);
    const body = checkObject(readJsonBody(request), [], { optional: ['archive_policy_name', 'name', 'unit', 'resource_id'] });
    for (const key of ['archive_policy_name', 'name', 'unit'] as const) {
      if (body[key] !== undefined && typeof body[key] !== 'string') throw invalidValue('expected str', [key]);
    }
    const name = (body.name as string | undefined | null) ?? null;
    const unit = (body.unit as string | undefined | null) ?? null;
    if (unit !== null && unit.length > 31) throw invalidValue('length of value must be at most 31', ['unit']);
    if (name !== null && name.includes('/')) throw new BadRequest("'/' is not supported in metric name");
    const resourceId = body.resource_id === undefined ? null : metricResourceId(body.resource_id, who.creator);
    const policyName = (body.archive_policy_name as string | undefined) ?? (await engine.index.policyNameForMetric(name));
    if (resourceId !== null && name === null) {
      throw new BadRequest({ cause: 'Attribute value error', detail: 'name', reason: 'Name cannot be null if resource_id is not null' });
    }
    enforce('create metric', who);
    let metric: MetricRecord;
    try {
      metric = await engine.index.createMetric({
        id: engine.newMetricId(),
        name,
        unit,
        archivePolicyName: policyName,
        creator: who.creator,
        resourceId,
      });
    } catch (err) {
      if (err instanceof NamedMetricAlreadyExists) {
        throw new BadRequest({ cause: 'Named metric already exists', detail: err.metricName });
      }
      throw err;
    }
    setLocation(reply, request, urls, `/v1/metric/${metric.id}`);
    return reply.code(201).send(createdMetricToJson(metric));
  });

  app.get('/v1/metric', {
    schema: {
      summary: 'List metrics',
      tags: TAGS,
      operationId: 'listMetrics',
      querystring: query({
        id: { type: 'string' },
        name: { type: 'string' },
        unit: { type: 'string' },
        archive_policy_name: { type: 'string' },
        creator: { type: 'string' },
        resource_id: { type: 'string' },
        user_id: { type: 'string' },
        project_id: { type: 'string' },
        status: { enum: ['active', 'delete'] },
        ...PAGE_QUERY,
      }),
      response: { 200: json('A page of metrics, by id unless sorted', listOf(ref('Metric')), ['Link']), ...errors(400, 401, 403, 406) },
    },
  }, async (request, reply) => {
    const who = identify(request);
    const query = queryOf(request);
    const params = Object.fromEntries(LIST_PARAMS.map((name) => [name, listParam(query, name)]));
    const status = params.status ?? 'active';
    if (status !== 'active' && status !== 'delete') {
      throw new BadRequest("Invalid input: not a valid value for dictionary value @ data['status']");
    }
    const filter: MetricFilter = {};
    for (const key of LIST_FILTERS) {
      if (params[key] !== undefined) filter[key] = params[key];
    }
    if (params.user_id !== undefined || params.project_id !== undefined) {
      filter.creator = `${params.user_id ?? ''}:${params.project_id ?? ''}`;
    }
    const page = pageOptions(query, config.maxLimit);
    const options = {
      filter,
      sorts: parseSorts(query),
      limit: page.limit,
      ...(page.marker === undefined ? {} : { marker: page.marker }),
    };
    const visible = await metricPolicyPredicate(engine, who, 'list metric');
    // A deleted metric leaves the index at once: none is ever waiting in `delete`.
    if (status === 'delete') return [];
    const metrics = visible === undefined ? await engine.index.listMetrics(options) : await listMetricsWhere(engine, options, visible);
    if (metrics.length >= page.limit) setNextLink(reply, request, urls, metrics[metrics.length - 1]!.id, page.limit);
    return metricsToJson(engine, metrics, 'resource_id');
  });

  app.get<{ Params: IdParams }>('/v1/metric/:id', {
    schema: {
      summary: 'Get a metric',
      tags: TAGS,
      operationId: 'getMetric',
      params: ID,
      response: { 200: json('The metric, with its resource', ref('MetricWithResource')), ...errors(401, 403, 404, 406) },
    },
  }, async (request) => {
    const metric = await loadMetric(engine, identify(request), request.params.id, 'get metric');
    return metricToJson(engine, metric, 'resource');
  });

  app.delete<{ Params: IdParams }>('/v1/metric/:id', {
    schema: {
      summary: 'Delete a metric and its measures',
      tags: TAGS,
      operationId: 'deleteMetric',
      params: ID,
      response: { 204: empty('Deleted'), ...errors(401, 403, 404) },
    },
  }, async (request, reply) => {
    const metric = await loadMetric(engine, identify(request), request.params.id, 'delete metric');
    await engine.deleteMetric(metric.id);
    return reply.code(204).send();
  });

  app.get<{ Params: IdParams }>('/v1/metric/:id/measures', {
    schema: {
      summary: 'Read the aggregated measures of a metric',
      tags: TAGS,
      operationId: 'getMeasures',
      params: ID,
      querystring: MEASURES_QUERY,
      response: { 200: json('Points of every granularity (or the one asked)', ref('Measures')), ...errors(400, 401, 403, 404, 406, 507) },
    },
  }, async (request, reply) => {
    const metric = await loadMetric(engine, identify(request), request.params.id, 'get measures');
    return getMeasures(ctx, request, reply, metric);
  });

  app.post<{ Params: IdParams }>('/v1/metric/:id/measures', {
    config: { pushesMeasures: true },
    schema: {
      summary: 'Push measures to a metric',
      tags: TAGS,
      operationId: 'pushMeasures',
      params: ID,
      body: MEASURES_BODY,
      response: { 202: empty('Accepted, to be processed'), ...errors(400, 401, 403, 404, 406, 413, 415, 503, 507) },
    },
  }, async (request, reply) => {
    const metric = await loadMetric(engine, identify(request), request.params.id, 'post measures');
    const measures = readMeasuresBody(request);
    await engine.addMeasures(new Map([[metric.id, measures]]));
    return reply.code(202).send();
  });
}
