/**
 * `POST /v1/search/metric`: the points of some metrics whose value satisfies
 * a query such as `{">=": [{"+": 5}, 10]}` or `{"and": [{">": 0}, {"<": 40}]}`.
 */
import type { FastifyInstance } from 'fastify';
import { metricsById } from '../../engine/drivers/index-store.js';
import type { Engine } from '../../engine/engine.js';
import { ArgumentError, BadRequest, InvalidInput } from '../../engine/errors.js';
import type { MetricRecord } from '../../engine/index.js';
import { isPlainObject } from '../../engine/validate.js';
import { parseDuration } from '../../formats/duration.js';
import { FormatError } from '../../formats/errors.js';
import { pyFloat } from '../../formats/json.js';
import { formatTimestamp, parseTimestamp } from '../../formats/timestamp.js';
import type { AppContext } from '../app.js';
import { creatorParts, identify } from '../auth.js';
import { many, queryOf, readJsonBody, single } from '../http.js';
import { enforce } from '../policy.js';
import { metricToJson } from '../json-shapes.js';
import { errors, json, jsonBody, query, ref, repeated } from '../openapi-schemas.js';
import { normalizeUuid } from './metric.js';

type Predicate = (value: number) => number;

const ARITHMETIC: Readonly<Record<string, (a: number, b: number) => number>> = {
  '=': (a, b) => +(a === b), '==': (a, b) => +(a === b), eq: (a, b) => +(a === b),
  '<': (a, b) => +(a < b), lt: (a, b) => +(a < b),
  '>': (a, b) => +(a > b), gt: (a, b) => +(a > b),
  '<=': (a, b) => +(a <= b), '≤': (a, b) => +(a <= b), le: (a, b) => +(a <= b),
  '>=': (a, b) => +(a >= b), '≥': (a, b) => +(a >= b), ge: (a, b) => +(a >= b),
  '!=': (a, b) => +(a !== b), '≠': (a, b) => +(a !== b), ne: (a, b) => +(a !== b),
  '%': pyMod, mod: pyMod,
  '+': (a, b) => a + b, add: (a, b) => a + b,
  '-': (a, b) => a - b, sub: (a, b) => a - b,
  '*': (a, b) => a * b, '×': (a, b) => a * b, mul: (a, b) => a * b,
  '/': pyDiv, '÷': pyDiv, div: pyDiv,
  '**': Math.pow, '^': Math.pow, pow: Math.pow,
};

const LOGICAL = new Set(['and', '∧', 'or', '∨', 'not']);

function pyDiv(a: number, b: number): number {
  if (b === 0) throw new BadRequest('float division by zero');
  return a / b;
}

function pyMod(a: number, b: number): number {
  if (b === 0) throw new BadRequest('float modulo');
  const m = a % b;
  return m !== 0 && b < 0 !== m < 0 ? m + b : m;
}

const isNumber = (v: unknown): v is number => typeof v === 'number';

/** Validates the query as Gnocchi's MetricSearchSchema does and builds the predicate. */
export function buildPredicate(tree: unknown): Predicate {
  if (!isPlainObject(tree)) {
    if (Array.isArray(tree) && tree.length === 0) throw new InvalidInput('length of value must be at least 1');
    throw new InvalidInput('expected a dictionary');
  }
  const entries = Object.entries(tree);
  if (entries.length !== 1) {
    throw new InvalidInput(entries.length === 0 ? 'length of value must be at least 1' : 'length of value must be at most 1');
  }
  const [op, nodes] = entries[0]!;
  if (LOGICAL.has(op)) {
    if (!Array.isArray(nodes)) throw new InvalidInput(`expected a list for dictionary value @ data['${op}']`, [op]);
    const children = nodes.map(buildPredicate);
    if (op === 'not') throw new BadRequest('Unknown operator not');
    const any = op === 'or' || op === '∨';
    return (v) => +(any ? children.some((c) => c(v) !== 0) : children.every((c) => c(v) !== 0));
  }
  const f = ARITHMETIC[op];
  if (f === undefined) throw new InvalidInput(`extra keys not allowed @ data['${op}']`, [op]);
  if (isNumber(nodes)) return (v) => f(v, nodes);
  if (!Array.isArray(nodes)) throw new InvalidInput(`expected float for dictionary value @ data['${op}']`, [op]);
  if (nodes.length !== 2) {
    throw new InvalidInput(`length of value must be ${nodes.length < 2 ? 'at least' : 'at most'} 2 for dictionary value @ data['${op}']`, [op]);
  }
  const [a, b] = nodes.map((n): Predicate => {
    if (isNumber(n)) return () => n;
    return buildPredicate(n);
  });
  return (v) => f(a!(v), b!(v));
}

function argTimestamp(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined) return undefined;
  try {
    return parseTimestamp(raw);
  } catch (err) {
    if (err instanceof FormatError) throw new BadRequest(`Invalid value for ${name}`);
    throw err;
  }
}

async function lookupMetrics(engine: Engine, raw: string[]): Promise<MetricRecord[]> {
  if (raw.length === 0) throw new ArgumentError('Missing argument', 'metric_id');
  const uuids = new Set<string>();
  for (const id of raw) {
    const uuid = normalizeUuid(id);
    if (uuid === undefined) throw new ArgumentError('badly formed hexadecimal UUID string', 'metric_id');
    uuids.add(uuid);
  }
  const found = await metricsById(engine.index, [...uuids]);
  return [...uuids].flatMap((uuid) => found.get(uuid) ?? []);
}

export async function searchMetricRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { engine } = ctx;

  app.post('/v1/search/metric', {
    schema: {
      summary: 'The points of some metrics whose value satisfies a query',
      tags: ['search'],
      operationId: 'searchMetricValues',
      querystring: query(
        {
          metric_id: repeated('Metric id, repeatable'),
          granularity: repeated('Only these granularities (seconds or timespans), repeatable; default: those of the first metric'),
          start: { type: 'string' },
          stop: { type: 'string' },
          aggregation: { type: 'string', description: 'Default mean' },
        },
        ['metric_id'],
      ),
      body: jsonBody({
        type: 'object',
        description: 'A value query such as `{">=": [{"+": 5}, 10]}` or `{"and": [{">": 0}, {"<": 40}]}`',
        minProperties: 1,
        maxProperties: 1,
      }),
      response: {
        200: json('Metric id -> matching points', { type: 'object', additionalProperties: ref('Measures') }),
        ...errors(400, 401, 403, 406, 413, 415),
      },
    },
  }, async (request, reply) => {
    const who = identify(request);
    const query = queryOf(request);
    const metrics = await lookupMetrics(engine, many(query, 'metric_id'));
    for (const m of metrics) {
      enforce('search metric', who, { creator: m.creator, created_by_project_id: creatorParts(m.creator).projectId });
    }
    const rawBody = request.body;
    if (rawBody === undefined || rawBody === null || (Buffer.isBuffer(rawBody) && rawBody.length === 0)) {
      throw new BadRequest('No query specified in body');
    }
    const predicate = buildPredicate(readJsonBody(request));
    const start = argTimestamp(single(query, 'start'), 'start');
    const stop = argTimestamp(single(query, 'stop'), 'stop');
    const aggregation = single(query, 'aggregation') ?? 'mean';
    let granularities: number[] | undefined;
    const rawGranularities = many(query, 'granularity');
    if (rawGranularities.length > 0) {
      granularities = rawGranularities
        .map((g) => {
          try {
            return parseDuration(g);
          } catch (err) {
            if (err instanceof FormatError) throw new ArgumentError(err.message, 'granularity');
            throw err;
          }
        })
        .sort((a, b) => b - a);
    }
    const parts: string[] = [];
    const policies = await engine.policiesOf(metrics);
    const snapshot = await engine.loadSeries(metrics.map((m) => m.id));
    try {
      for (const metric of metrics) {
        const policy = policies.get(metric.archivePolicyName)!;
        // As Gnocchi does, the first metric's granularities serve for all.
        granularities ??= policy.definition.map((d) => d.granularity).sort((a, b) => b - a);
        for (const g of granularities) {
          if (!policy.definition.some((d) => d.granularity === g)) {
            throw new BadRequest({ cause: 'Aggregation does not exist', detail: { granularity: g / 1e6, aggregation_method: aggregation } });
          }
        }
        if (!policy.aggregationMethods.includes(aggregation)) {
          throw new BadRequest({ cause: 'Metric does not exist', detail: { metric: await metricToJson(engine, metric, 'resource_id') } });
        }
        const series = engine.readSeries(snapshot, metric, policy, {
          method: aggregation,
          granularities,
          ...(start === undefined ? {} : { start }),
          ...(stop === undefined ? {} : { stop }),
        });
        const points: string[] = [];
        for (const s of series) {
          const g = pyFloat((s.granularity as number) / 1e6);
          for (let i = 0; i < s.timestamps.length; i++) {
            const v = s.values[i]!;
            if (predicate(v) !== 0) points.push(`["${formatTimestamp(s.timestamps[i]!)}", ${g}, ${pyFloat(v)}]`);
          }
        }
        parts.push(`${JSON.stringify(metric.id)}: [${points.join(', ')}]`);
      }
    } finally {
      snapshot.release();
    }
    return reply.type('application/json').send(`{${parts.join(', ')}}`);
  });
}
