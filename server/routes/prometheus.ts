/**
 * Prometheus remote write (Gnocchi's `PrometheusWriteController`): each
 * series goes to the resource of type `prometheus` whose id is
 * `job@instance` (a missing label reads `none`), as the metric named by its
 * `__name__` label. As in Gnocchi, series of one resource sharing a name
 * (differing by other labels) are one metric, and the last of them in the
 * request wins. The `prometheus` type (attributes `job` and `instance`) is
 * created on first use, which takes the right to create resource types.
 *
 * Unlike Gnocchi, which answers 500, a body that does not decompress or
 * decode, or a series without `__name__`, is a 400; a body inflating beyond
 * the body limit is a 413.
 */
import type { FastifyInstance } from 'fastify';
import type { Series } from '../../engine/aggregation.js';
import { getOrCreateResourceMetrics } from '../../engine/collector.js';
import { BadRequest, InvalidInput, ResourceTypeAlreadyExists } from '../../engine/errors.js';
import { resourceUuid } from '../../engine/resource-id.js';
import { attributeValue, type AttributeDef, type AttributeValue } from '../../engine/resource-type.js';
import { decodeMeasures, MeasuresError } from '../../formats/measures.js';
import { decodeRemoteWrite, PrometheusDecodeError, PrometheusTooLarge, type WriteRequest } from '../../formats/prometheus-remote.js';
import type { AppContext } from '../app.js';
import { identify } from '../auth.js';
import { HttpError } from '../errors.js';
import { bodyBytes } from '../http.js';
import { body, empty, errors } from '../openapi-schemas.js';
import { enforce } from '../policy.js';
import { creatorTarget } from '../policy-targets.js';

export const PROMETHEUS_RESOURCE_TYPE = 'prometheus';

export const PROMETHEUS_ATTRIBUTES: AttributeDef[] = [
  { name: 'instance', type: 'string', required: true, minLength: 1, maxLength: 512 },
  { name: 'job', type: 'string', required: true, minLength: 1, maxLength: 512 },
];

interface ResourceMeasures {
  job: string;
  instance: string;
  /** metric name -> measures */
  metrics: Map<string, Series>;
}

/** Groups the series of a request by (job, instance), then by `__name__`. */
export function groupSeries(request: WriteRequest): Map<string, ResourceMeasures> {
  const out = new Map<string, ResourceMeasures>();
  for (const ts of request.timeseries) {
    const labels = new Map(ts.labels.map((l) => [l.name, l.value]));
    const job = labels.get('job') ?? 'none';
    const instance = labels.get('instance') ?? 'none';
    const name = labels.get('__name__');
    if (name === undefined) throw new BadRequest({ cause: 'Invalid input', reason: 'time series without a __name__ label', detail: [] });
    if (ts.samples.length === 0) continue;
    let measures: Series;
    try {
      // Gnocchi passes `timestamp_ms / 1000.0` through its measures schema.
      measures = decodeMeasures(ts.samples.map((s) => ({ timestamp: s.timestampMs / 1000, value: s.value })));
    } catch (err) {
      if (err instanceof MeasuresError) throw new InvalidInput(err.message);
      throw err;
    }
    // Keyed by the pair itself, as Gnocchi does: `job@instance` alone is ambiguous.
    const pairKey = JSON.stringify([job, instance]);
    let entry = out.get(pairKey);
    if (entry === undefined) out.set(pairKey, (entry = { job, instance, metrics: new Map() }));
    entry.metrics.set(name, measures);
  }
  return out;
}

export async function prometheusRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { engine, config } = ctx;

  app.post('/v1/prometheus/write', {
    config: { pushesMeasures: true },
    schema: {
      summary: 'Prometheus remote write',
      description:
        'Each series goes to the `prometheus` resource `job@instance` (created with its type as needed), as the metric named by `__name__`.',
      tags: ['ingestion'],
      operationId: 'prometheusWrite',
      body: body({ 'application/x-protobuf': { type: 'string', format: 'binary', description: 'A snappy-compressed WriteRequest' } }),
      response: { 202: empty('Accepted, to be processed'), ...errors(400, 401, 403, 406, 413, 503, 507) },
    },
  }, async (request, reply) => {
    const who = identify(request);
    const body = bodyBytes(request);
    let decoded: WriteRequest;
    try {
      decoded = decodeRemoteWrite(body, config.bodyLimit);
    } catch (err) {
      if (err instanceof PrometheusTooLarge) throw new HttpError(413, err.message);
      if (err instanceof PrometheusDecodeError) throw new BadRequest({ cause: 'Invalid input', reason: err.message, detail: [] });
      throw err;
    }
    const grouped = groupSeries(decoded);
    if (grouped.size === 0) return reply.code(202).send();

    if (engine.resources.findType(PROMETHEUS_RESOURCE_TYPE) === undefined) {
      enforce('create resource type', who);
      try {
        await engine.resources.createType({ name: PROMETHEUS_RESOURCE_TYPE, state: 'creating', attributes: PROMETHEUS_ATTRIBUTES });
      } catch (err) {
        if (!(err instanceof ResourceTypeAlreadyExists)) throw err;
      }
    }
    const rt = engine.resources.getType(PROMETHEUS_RESOURCE_TYPE);

    // Everything that can be refused is checked before anything is written.
    const plans = [...grouped.values()].map((g) => {
      const original = `${g.job}@${g.instance}`;
      const given: Record<string, string> = { job: g.job, instance: g.instance };
      const attrs: Record<string, AttributeValue> = {};
      for (const def of rt.attributes) {
        attrs[def.name] = Object.hasOwn(given, def.name) ? attributeValue(def, given[def.name], [def.name]) : null;
        if (attrs[def.name] === null && def.required) throw new InvalidInput(`required key not provided @ data['${def.name}']`, [def.name]);
      }
      const rid = resourceUuid(original, who.creator);
      for (const name of g.metrics.keys()) {
        if (engine.resources.metricByName(rid, name) === undefined) engine.index.policyNameForMetric(name);
      }
      return { original, rid, attrs, metrics: g.metrics };
    });

    const batch = new Map<string, Series>();
    for (const plan of plans) {
      const metrics = await getOrCreateResourceMetrics(
        engine,
        {
          type: rt.name,
          id: plan.rid,
          originalResourceId: plan.original,
          creator: who.creator,
          attrs: plan.attrs,
          metricNames: [...plan.metrics.keys()],
        },
        (creator) => enforce('update resource', who, creatorTarget(creator)),
      );
      for (const [name, m] of metrics) {
        enforce('post measures', who, creatorTarget(m.creator));
        batch.set(m.id, plan.metrics.get(name)!);
      }
    }
    await engine.addMeasures(batch);
    return reply.code(202).send();
  });
}
