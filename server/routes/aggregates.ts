/**
 * Cross-metric reads: `POST /v1/aggregates` (metrics referenced by id) and
 * the deprecated `GET|POST /v1/aggregation/metric`. Parsing and checks run
 * here; reading and evaluation run through an {@link AggregatesRunner}
 * (worker pool, or inline for small queries).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isCalendarGroup, type Grouping } from '../../engine/aggregation.js';
import { dropsPoint, FILL_MODES, type AggregatesResult, type Fill, type FillMode } from '../../engine/aggregates/align.js';
import { inlineAggregatesRunner, workerAggregatesRunner, type AggregatesRunner } from '../../engine/aggregates/runner.js';
import { estimatedPoints, planGranularities, type AggregatesTask, type SeriesRef } from '../../engine/aggregates/task.js';
import { unaggregable } from '../../engine/aggregates/errors.js';
import { metricsById } from '../../engine/drivers/index-store.js';
import type { Engine } from '../../engine/engine.js';
import { AggregationDoesNotExist, AggregationMethodDoesNotExist, ArgumentError, BadRequest, InvalidInput, InvalidPagination, NoSuchMetric, NotFound } from '../../engine/errors.js';
import { groupConsecutive } from '../../engine/aggregates/by-resource.js';
import { parseResourceSorts, type Revision, type SortSpec } from '../../engine/resources.js';
import type { MetricRecord } from '../../engine/index.js';
import { isPlainObject } from '../../engine/validate.js';
import { parseDuration, parsePythonFloat } from '../../formats/duration.js';
import { FormatError } from '../../formats/errors.js';
import { pyFloat, pyJson } from '../../formats/json.js';
import {
  extractReferences,
  mapReferences,
  OperationsError,
  parseOperations,
  parsePrefix,
  type OperationNode,
} from '../../formats/operations.js';
import { formatTimestamp } from '../../formats/timestamp.js';
import type { AppContext } from '../app.js';
import { creatorParts, identify, type Identity } from '../auth.js';
import { boolParam, many, queryOf, readJsonBody, single, type Query } from '../http.js';
import { enforce } from '../policy.js';
import { narrowed, resourcePolicyFilter } from '../policy-filter.js';
import { aggregatesByResource, groupValue, resourceSelection } from './aggregates-resources.js';
import { readResourceFilter } from './resource.js';
import { HttpError } from '../errors.js';
import { metricsToJson } from '../json-shapes.js';
import {
  AGGREGATION_QUERY,
  errors,
  FILTER_BODY,
  FILTER_QUERY,
  flag,
  json,
  jsonBody,
  listOf,
  params,
  query,
  ref,
  repeated,
  type JsonSchema,
} from '../openapi-schemas.js';
import { normalizeUuid, timeRange } from './metric.js';

/**
 * A query reading at most this many points runs inline. Measured with
 * bench/aggregates-split.bench.ts (stored splits, 2 shared cores): inline
 * 0.53 ms vs one worker 1.79 ms for 10 x 3,000 points, 8.9 vs 10.4 ms for
 * 100 x 3,000: a hand-off costs ~1.3 ms, the inline work of ~50,000 points
 * (18 to 35 ns a point). Bigger queries go to a worker so that the event
 * loop is never blocked longer than that.
 */
const INLINE_MAX_POINTS = 50_000;
/** When the points cannot be bounded (unbounded policies, open window): this many series reads. */
const INLINE_MAX_SERIES = 8;

// ---------------------------------------------------------------------------
// Query-string arguments (Gnocchi's validate_qs, same order and messages)

export interface CommonArgs {
  start?: number;
  stop?: number;
  /** Whether start or stop is relative to now (see timeRange). */
  relative?: boolean;
  granularity?: number;
  neededOverlap?: number;
  fill?: Fill;
}

function argError(name: string, reason: string): ArgumentError {
  return new ArgumentError(reason, name);
}

export function parseFill(raw: string): Fill {
  if ((FILL_MODES as readonly string[]).includes(raw)) return raw as FillMode;
  const n = parsePythonFloat(raw);
  if (n === undefined) throw argError('fill', "Must be a float, 'dropna' or 'null'");
  return n;
}

export function commonArgs(query: Query): CommonArgs {
  const out: CommonArgs = {};
  const overlap = single(query, 'needed_overlap');
  if (overlap !== undefined) {
    const n = parsePythonFloat(overlap);
    if (n === undefined) throw argError('needed_overlap', 'Must be a number');
    if (!(n >= 0 && n <= 100)) throw argError('needed_overlap', 'Must be a number between 0 and 100');
    out.neededOverlap = n;
  }
  Object.assign(out, timeRange(query));
  const granularity = single(query, 'granularity');
  if (granularity !== undefined) {
    try {
      out.granularity = parseDuration(granularity);
    } catch (err) {
      if (err instanceof FormatError) throw argError('granularity', err.message);
      throw err;
    }
  }
  const fill = single(query, 'fill');
  if (fill !== undefined) out.fill = parseFill(fill);
  return out;
}

/** The `resample` argument: needs a granularity; seconds, a timespan or a calendar letter. */
export function resampleArg(query: Query, granularity: number | undefined): Grouping | undefined {
  const raw = single(query, 'resample');
  if (raw === undefined || raw === '') return undefined;
  if (granularity === undefined) throw new BadRequest('A granularity must be specified to resample');
  if (isCalendarGroup(raw)) return raw;
  try {
    return parseDuration(raw);
  } catch (err) {
    if (err instanceof FormatError) throw new BadRequest(err.message);
    throw err;
  }
}

// ---------------------------------------------------------------------------
// Rendering

function granularityJson(g: Grouping): string {
  return typeof g === 'number' ? pyFloat(g / 1e6) : JSON.stringify(g);
}

/**
 * Appends the points of one column to `parts` as one `, `-separated chunk:
 * appending to one string is faster than an array of a string per point.
 */
function pointsJson(timestamps: Float64Array, granularity: Grouping, values: Float64Array, fill: Fill | undefined, parts: string[]): void {
  const g = granularityJson(granularity);
  let chunk = '';
  for (let i = 0; i < timestamps.length; i++) {
    const v = values[i]!;
    if (dropsPoint(fill, v)) continue;
    chunk += `${chunk === '' ? '' : ', '}["${formatTimestamp(timestamps[i]!)}", ${g}, ${pyFloat(v)}]`;
  }
  if (chunk !== '') parts.push(chunk);
}

/** `[[timestamp, granularity, value], ...]` of an aggregated result. */
export function aggregatedJson(result: AggregatesResult, fill: Fill | undefined): string {
  const parts: string[] = [];
  for (const s of result.samplings) pointsJson(s.timestamps, s.granularity, s.columns[0] ?? new Float64Array(0), fill, parts);
  return `[${parts.join(', ')}]`;
}

/**
 * The `measures` object: `{aggregated: [...]}`, or per reference
 * `{id: {aggregation: [...]}}` (`{resource: {name: {aggregation: [...]}}}`
 * for references selected through resources).
 */
export function measuresJson(result: AggregatesResult, refs: readonly SeriesRef[], fill: Fill | undefined): string {
  if (result.aggregated) return `{"aggregated": ${aggregatedJson(result, fill)}}`;
  const byResource = refs.some((r) => r.resourceId !== undefined);
  // Outer key -> inner key -> aggregation -> points
  const tree = new Map<string, Map<string, Map<string, string[]>>>();
  for (const s of result.samplings) {
    refs.forEach((ref, i) => {
      const column = s.columns[i];
      if (column === undefined) return;
      const outer = byResource ? (ref.resourceId ?? '') : ref.name;
      const inner = byResource ? ref.name : '';
      let a = tree.get(outer);
      if (a === undefined) tree.set(outer, (a = new Map()));
      let b = a.get(inner);
      if (b === undefined) a.set(inner, (b = new Map()));
      let points = b.get(ref.aggregation);
      if (points === undefined) b.set(ref.aggregation, (points = []));
      pointsJson(s.timestamps, s.granularity, column, fill, points);
    });
  }
  const obj = (entries: [string, string][]): string => `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${v}`).join(', ')}}`;
  return obj(
    [...tree].map(([outer, a]) => {
      const byAgg = (b: Map<string, string[]>): string => obj([...b].map(([agg, pts]) => [agg, `[${pts.join(', ')}]`]));
      return [outer, byResource ? obj([...a].map(([inner, b]) => [inner, byAgg(b)])) : byAgg(a.get('')!)];
    }),
  );
}

// ---------------------------------------------------------------------------
// Running

export interface AggregatesService {
  run(task: AggregatesTask): Promise<AggregatesResult>;
  close(): Promise<void>;
}

export function aggregatesService(engine: Engine): AggregatesService {
  const inline = inlineAggregatesRunner(engine.drivers.series, engine.decodedSplits);
  let pool: AggregatesRunner | undefined;
  return {
    async run(task) {
      const points = estimatedPoints(task);
      const small = Number.isFinite(points) ? points <= INLINE_MAX_POINTS : task.refs.length * task.granularities.length <= INLINE_MAX_SERIES;
      if (engine.options.workers === 0 || small) return inline.run(task);
      // One query is one worker task: cut in two time ranges on two workers it
      // measured 1.2-1.7x slower (bench/aggregates-split.bench.ts); both workers
      // serve concurrent queries and groups instead.
      pool ??= workerAggregatesRunner(engine.location, engine.options.workers, engine.options.splitCacheSize);
      return pool.run(task);
    },
    async close() {
      await pool?.destroy();
    },
  };
}

export async function refreshMetrics(engine: Engine, ids: readonly string[]): Promise<void> {
  const pending = ids.filter((id) => engine.processor.hasPending(id));
  if (pending.length > 0) await engine.refresh(pending);
}

/** Gnocchi checks `get metric` on the metric as listed, without its resource. */
function enforceGetMetric(who: Identity, metric: MetricRecord): void {
  const { userId, projectId } = creatorParts(metric.creator);
  enforce('get metric', who, {
    creator: metric.creator,
    created_by_user_id: userId,
    created_by_project_id: projectId,
    resource_id: metric.resourceId,
  });
}

function operationsOf(body: Record<string, unknown>): { node: OperationNode; raw: unknown } {
  try {
    const raw = typeof body.operations === 'string' ? parsePrefix(body.operations) : body.operations;
    return { node: parseOperations(raw), raw };
  } catch (err) {
    if (err instanceof OperationsError) throw new BadRequest({ ...err.description });
    throw err;
  }
}

const BODY_KEYS = new Set(['operations', 'resource_type', 'search']);

function checkBody(body: unknown): Record<string, unknown> {
  if (!isPlainObject(body)) throw new InvalidInput('expected a dictionary');
  if (!('operations' in body)) throw new InvalidInput("required key not provided @ data['operations']", ['operations']);
  for (const key of Object.keys(body)) {
    if (!BODY_KEYS.has(key)) throw new InvalidInput(`extra keys not allowed @ data['${key}']`, [key]);
  }
  if ('resource_type' in body && !('search' in body)) {
    throw new InvalidInput("extra keys not allowed @ data['resource_type']", ['resource_type']);
  }
  return body;
}

interface ResourceMetricParams {
  type: string;
  name: string;
}

const TAGS = ['aggregates'];
const AGGREGATION_METRICS_QUERY = {
  ...AGGREGATION_QUERY,
  aggregation: { type: 'string', description: 'Method within each metric; default mean' },
  reaggregation: { type: 'string', description: 'Method across metrics; default `aggregation`' },
};
const groups = (measures: JsonSchema): JsonSchema =>
  listOf({ type: 'object', properties: { group: { type: 'object', description: 'Attribute -> value' }, measures }, required: ['group', 'measures'] });

export async function aggregatesRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { engine } = ctx;
  const service = aggregatesService(engine);
  app.addHook('onClose', async () => service.close());

  app.post('/v1/aggregates', {
    schema: {
      summary: 'Compute operations over metrics',
      description:
        'Metrics by id (`(metric <id> <aggregation>)`), or by name over the resources `resource_type` and `search` select. ' +
        'Operations: metric, aggregate, resample, rolling, arithmetic and comparison operators, functions.',
      tags: TAGS,
      operationId: 'aggregates',
      querystring: query({
        ...AGGREGATION_QUERY,
        groupby: repeated('Group resources by these attributes, repeatable'),
        use_history: flag('Group each measure by the attribute values at its time'),
        details: flag('Add the referenced metrics or resources'),
      }),
      body: jsonBody({
        type: 'object',
        properties: {
          operations: { type: ['string', 'array'], description: 'Prefix expression, `"(aggregate mean (metric cpu mean))"`, or nested arrays' },
          resource_type: { type: 'string' },
          search: { anyOf: [ref('ResourceQuery'), { type: 'string' }] },
        },
        required: ['operations'],
        additionalProperties: false,
      }),
      response: {
        200: json('The result; with `groupby`, one per group', { anyOf: [ref('AggregatesResult'), groups(ref('AggregatesResult'))] }),
        ...errors(400, 401, 403, 404, 406, 413, 415, 507),
      },
    },
  }, async (request, reply) => {
    const who = identify(request);
    const query = queryOf(request);
    const details = boolParam(query, 'details');
    const args = commonArgs(query);
    if (single(query, 'fill') === undefined && single(query, 'needed_overlap') === undefined) args.fill = 'dropna';
    const body = checkBody(readJsonBody(request));
    const { node, raw } = operationsOf(body);
    const selection = 'resource_type' in body ? await resourceSelection(engine, who, body) : undefined;
    const references = extractReferences(node);
    if (references.length === 0) {
      throw new BadRequest({ cause: 'Operations is invalid', reason: "At least one 'metric' is required", detail: raw });
    }
    if (selection !== undefined) {
      // As Gnocchi: the search is narrowed by the policy, and the metrics
      // of the resources it finds are not checked one by one.
      const policyFilter = resourcePolicyFilter(who, 'search resource', selection.type.name);
      const text = await aggregatesByResource({
        engine,
        service,
        request,
        selection: { ...selection, filter: narrowed(policyFilter, selection.filter) },
        wildcards: references,
        operations: node,
        args,
        resample: resampleArg(query, args.granularity),
        details,
        pageSize: ctx.config.maxLimit,
      });
      return reply.type('application/json').send(text);
    }

    const ids = references.map((r) => normalizeUuid(r.name));
    if (ids.some((id) => id === undefined)) {
      throw new BadRequest({
        cause: 'Invalid metric references',
        reason: 'badly formed hexadecimal UUID string',
        detail: references.map((r) => [r.name, r.aggregation]),
      });
    }
    const unique = [...new Set(ids as string[])];
    const found = await metricsById(engine.index, unique);
    const metrics = new Map<string, MetricRecord>();
    const missing: string[] = [];
    for (const id of unique) {
      const m = found.get(id);
      if (m === undefined) missing.push(id);
      else metrics.set(id, m);
    }
    if (missing.length > 0) {
      throw new NotFound({ cause: 'Unknown metrics', reason: "Provided metrics don't exists", detail: missing.sort() });
    }
    for (const m of metrics.values()) enforceGetMetric(who, m);

    const policies = await engine.policiesOf(metrics.values());
    const refs: SeriesRef[] = references.map((r, i) => {
      const metric = metrics.get(ids[i]!)!;
      return { metricId: metric.id, policy: policies.get(metric.archivePolicyName)!, aggregation: r.aggregation, key: [metric.id, r.aggregation], name: metric.id };
    });
    const operations = mapReferences(node, (r) => ({ name: normalizeUuid(r.name)!, aggregation: r.aggregation }));
    const granularities = planGranularities(refs, args.granularity);
    const resample = resampleArg(query, args.granularity);
    if (boolParam(query, 'refresh')) await refreshMetrics(engine, unique);

    const task: AggregatesTask = {
      refs,
      granularities,
      operations,
      neededOverlap: args.neededOverlap ?? 100,
      ...(args.start === undefined ? {} : { start: args.start }),
      ...(args.stop === undefined ? {} : { stop: args.stop }),
      ...(args.fill === undefined ? {} : { fill: args.fill }),
      ...(resample === undefined ? {} : { resample }),
    };
    const result = await service.run(task);
    let text = `{"measures": ${measuresJson(result, refs, args.fill)}`;
    if (details) {
      const listed = [...metrics.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
      text += `, "references": ${pyJson(await metricsToJson(engine, listed, 'resource_id'))}`;
    }
    return reply.type('application/json').send(`${text}}`);
  });

  const aggregationMetric = async (request: FastifyRequest, ids: string[]) => {
    const unique = [...new Set(ids)];
    const found = await metricsById(engine.index, unique);
    const metrics: MetricRecord[] = [];
    for (const id of unique) {
      const m = found.get(id);
      if (m === undefined) throw new NoSuchMetric(id);
      metrics.push(m);
    }
    return crossMetricMeasures(request, metrics, (m) => enforceGetMetric(identify(request), m));
  };

  /**
   * Gnocchi's `get_cross_metric_measures_from_objs`: `aggregation` within
   * each metric, `reaggregation` across them, as a list of points.
   */
  const crossMetricMeasures = async (request: FastifyRequest, metrics: MetricRecord[], check: (m: MetricRecord) => void) => {
    const query = queryOf(request);
    const args = commonArgs(query);
    const aggregation = single(query, 'aggregation') ?? 'mean';
    const reaggregation = single(query, 'reaggregation') ?? aggregation;
    for (const m of metrics) check(m);
    if (metrics.length === 0) return '[]';
    const resample = resampleArg(query, args.granularity);
    const policies = await engine.policiesOf(metrics);
    const policyOf = (m: MetricRecord) => policies.get(m.archivePolicyName)!;

    let granularities: number[];
    if (args.granularity === undefined) {
      const counts = new Map<number, number>();
      for (const m of metrics) for (const d of policyOf(m).definition) counts.set(d.granularity, (counts.get(d.granularity) ?? 0) + 1);
      granularities = [...counts].filter(([, n]) => n === metrics.length).map(([g]) => g);
      if (granularities.length === 0) throw unaggregable(metrics.map((m) => [m.id, aggregation]), 'No granularity match');
    } else {
      granularities = [args.granularity];
    }
    for (const m of metrics) {
      const defined = policyOf(m).definition.map((d) => d.granularity);
      for (const g of granularities) if (!defined.includes(g)) throw new AggregationDoesNotExist(m.id, aggregation, g / 1e6);
    }
    if (boolParam(query, 'refresh')) await refreshMetrics(engine, metrics.map((m) => m.id));

    if (metrics.length === 1) {
      const metric = metrics[0]!;
      const policy = policyOf(metric);
      if (!policy.aggregationMethods.includes(aggregation)) throw new AggregationMethodDoesNotExist(metric.id, aggregation);
      return (await engine.readJson(metric, {
        method: aggregation,
        granularities,
        ...(args.start === undefined ? {} : { start: args.start }),
        ...(args.stop === undefined ? {} : { stop: args.stop }),
        ...(resample === undefined ? {} : { resample }),
      }, !args.relative)).toString('latin1');
    }
    for (const m of metrics) {
      const policy = policyOf(m);
      if (!policy.aggregationMethods.includes(aggregation)) {
        throw new AggregationDoesNotExist(m.id, aggregation, policy.definition[0]!.granularity / 1e6);
      }
    }
    const metricNode: OperationNode = { kind: 'metric', refs: metrics.map((m) => ({ name: m.id, aggregation })), single: false };
    let operations: OperationNode;
    try {
      const inner = parseOperations(['aggregate', reaggregation, ['metric', ['x', 'mean']]]);
      if (inner.kind !== 'aggregate') throw new Error('unreachable');
      const source: OperationNode = resample === undefined
        ? metricNode
        : { kind: 'resample', method: aggregation, granularity: resample, operand: metricNode };
      operations = { ...inner, operand: source };
    } catch (err) {
      if (err instanceof OperationsError) throw new BadRequest(`Invalid reaggregation method: ${reaggregation}`);
      throw err;
    }
    const refs: SeriesRef[] = metrics.map((m) => ({
      metricId: m.id,
      policy: policyOf(m),
      aggregation,
      key: [m.id, aggregation],
      name: m.id,
    }));
    const result = await service.run({
      refs,
      granularities,
      operations,
      neededOverlap: args.neededOverlap ?? 100,
      ...(args.start === undefined ? {} : { start: args.start }),
      ...(args.stop === undefined ? {} : { stop: args.stop }),
      ...(args.fill === undefined ? {} : { fill: args.fill }),
    });
    return aggregatedJson(result, args.fill);
  };

  // Deprecated: metrics by name on the resources a search selects.
  app.post<{ Params: ResourceMetricParams }>('/v1/aggregation/resource/:type/metric/:name', {
    schema: {
      summary: 'Aggregate a metric of the resources a search selects (deprecated)',
      tags: TAGS,
      deprecated: true,
      operationId: 'aggregationByResource',
      params: params({ type: 'Resource type', name: 'Metric name' }),
      querystring: query({ ...AGGREGATION_METRICS_QUERY, ...FILTER_QUERY, groupby: repeated('Group resources by these attributes, repeatable') }),
      body: FILTER_BODY,
      response: {
        200: json('The points; with `groupby`, one entry per group', { anyOf: [ref('Measures'), groups(ref('Measures'))] }),
        ...errors(400, 401, 403, 404, 406, 413, 415, 507),
      },
    },
  }, async (request, reply) => {
    const who = identify(request);
    const { type, name } = request.params;
    const rt = await engine.index.getType(type);
    const query = queryOf(request);
    const groupby = [...new Set(many(query, 'groupby'))].sort();
    const filter = narrowed(resourcePolicyFilter(who, 'search resource', type), readResourceFilter(request, who));
    let sorts: SortSpec[];
    try {
      sorts = parseResourceSorts(groupby, rt, false);
    } catch (err) {
      if (err instanceof InvalidPagination) throw new BadRequest('Invalid groupby attribute');
      throw err;
    }
    // As Gnocchi's search: one page of at most max_limit resources.
    const resources = await engine.index.list(type, { filter, history: false, sorts, limit: ctx.config.maxLimit });
    const named = await engine.index.metricsOfResources([...new Set(resources.map((r) => r.id))]);
    const records = await metricsById(engine.index, [...named.values()].flatMap((byName) => byName.get(name) ?? []));
    const metricsOf = (rs: readonly Revision[]) =>
      rs.flatMap((r) => {
        const id = named.get(r.id)?.get(name);
        const m = id === undefined ? undefined : records.get(id);
        return m === undefined ? [] : [m];
      });
    const projects = new Map(resources.map((r) => [r.id, r.projectId]));
    const check = (m: MetricRecord) =>
      enforce('get metric', who, {
        creator: m.creator,
        created_by_project_id: creatorParts(m.creator).projectId,
        'resource.project_id': m.resourceId === null ? null : (projects.get(m.resourceId) ?? null),
      });
    let text: string;
    if (groupby.length === 0) {
      text = await crossMetricMeasures(request, metricsOf(resources), check);
    } else {
      const parts: string[] = [];
      for (const g of groupConsecutive(resources, (r) => groupby.map((a) => groupValue(rt, r, a)))) {
        const group = pyJson(Object.fromEntries(groupby.map((a, i) => [a, g.values[i] ?? null])));
        parts.push(`{"group": ${group}, "measures": ${await crossMetricMeasures(request, metricsOf(g.members), check)}}`);
      }
      text = `[${parts.join(', ')}]`;
    }
    return reply.type('application/json').send(text);
  });

  app.get<{ Params: ResourceMetricParams }>('/v1/aggregation/resource/:type/metric/:name', { config: { anyAccept: true } }, async (request) => {
    await engine.index.getType(request.params.type);
    throw new HttpError(405, '', { Allow: 'POST' });
  });

  app.route({
    method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    url: '/v1/aggregation/resource/:type/metric',
    config: { anyAccept: true },
    handler: async () => {
      throw new HttpError(405, '');
    },
  });

  app.get('/v1/aggregation/metric', {
    schema: {
      summary: 'Aggregate metrics by id (deprecated)',
      tags: TAGS,
      deprecated: true,
      operationId: 'aggregationByMetricIds',
      querystring: query({ metric: repeated('Metric id, repeatable'), ...AGGREGATION_METRICS_QUERY }),
      response: { 200: json('The points', ref('Measures')), ...errors(400, 401, 403, 404, 406, 507) },
    },
  }, async (request, reply) => {
    const raw = many(queryOf(request), 'metric');
    const ids = raw.map((id, i) => {
      const uuid = normalizeUuid(id);
      if (uuid === undefined) throw new BadRequest(`Invalid input: not a valid value @ data[${i}]`);
      return uuid;
    });
    return reply.type('application/json').send(await aggregationMetric(request, ids));
  });

  app.post('/v1/aggregation/metric', {
    schema: {
      summary: 'Aggregate metrics by id, listed in the body (deprecated)',
      tags: TAGS,
      deprecated: true,
      operationId: 'aggregationByMetricIdsBody',
      querystring: query(AGGREGATION_METRICS_QUERY),
      body: jsonBody(listOf({ type: 'string', description: 'Metric id' })),
      response: { 200: json('The points', ref('Measures')), ...errors(400, 401, 403, 404, 406, 413, 415, 507) },
    },
  }, async (request, reply) => {
    const body = readJsonBody(request);
    if (!Array.isArray(body)) throw new InvalidInput('expected a list');
    const ids = body.map((id, i) => {
      const uuid = typeof id === 'string' ? normalizeUuid(id) : undefined;
      if (uuid === undefined) throw new InvalidInput(`not a valid value @ data[${i}]`, [i]);
      return uuid;
    });
    return reply.type('application/json').send(await aggregationMetric(request, ids));
  });
}
