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
 * the body limit is a 413. Past `--max-series` the samples of new series
 * are refused as the InfluxDB write refuses them (400, the rest stored).
 */
import type { FastifyInstance } from 'fastify';
import { CollectorBatch, collectorState, writeCollectorBatch } from '../../engine/collector.js';
import { BadRequest, EngineError, InvalidInput, ResourceTypeAlreadyExists } from '../../engine/errors.js';
import { attributeValue, type AttributeDef, type AttributeValue, type ResourceTypeRecord } from '../../engine/resource-type.js';
import { CollectorScope, hashBytes, namedResource, type MetricSlot, type ResourceSlot, type SeriesCache } from '../../engine/series-cache.js';
import { FormatError } from '../../formats/errors.js';
import {
  decodeWriteRequest,
  millisToMicros,
  PrometheusDecodeError,
  PrometheusTooLarge,
  readLabels,
  recycleScanned,
  scanWriteRequest,
  snappyUncompress,
  type Label,
  type ScannedWriteRequest,
  type WriteRequest,
} from '../../formats/prometheus-remote.js';
import { parseTimestamp } from '../../formats/timestamp.js';
import type { AppContext } from '../app.js';
import { identify } from '../auth.js';
import { HttpError } from '../errors.js';
import { bodyBytes } from '../http.js';
import { body, empty, errors } from '../openapi-schemas.js';
import { enforce } from '../policy.js';
import { creatorTarget } from '../policy-targets.js';
import { releaseBody } from '../raw-body.js';

export const PROMETHEUS_RESOURCE_TYPE = 'prometheus';

export const PROMETHEUS_ATTRIBUTES: AttributeDef[] = [
  { name: 'instance', type: 'string', required: true, minLength: 1, maxLength: 512 },
  { name: 'job', type: 'string', required: true, minLength: 1, maxLength: 512 },
];

/** What a series' labels map to: its metric, undefined without `__name__`. */
interface PrometheusSeries {
  metric: MetricSlot | undefined;
}

const noName = () => new BadRequest({ cause: 'Invalid input', reason: 'time series without a __name__ label', detail: [] });

/** Why Gnocchi refuses a sample's timestamp (`timestamp_ms / 1000.0` through its measures schema). */
function sampleRefusal(timestampMs: number): EngineError {
  try {
    parseTimestamp(timestampMs / 1000, 0);
  } catch (err) {
    if (err instanceof FormatError) return new InvalidInput(`unexpected timestamp '${err.message}'`);
    throw err;
  }
  throw new Error(`timestamp ${timestampMs} ms refused, then read`);
}

/**
 * Series in a scope of the cache: the resource `job@instance` (a missing
 * label reads `none`; keyed by the pair itself, as Gnocchi does, for
 * `job@instance` alone is ambiguous) and the metric named by `__name__`
 * (the last label of a name counting).
 */
function seriesOf(labels: readonly Label[], scope: CollectorScope<PrometheusSeries>, creator: string): PrometheusSeries {
  const byName = new Map(labels.map((l) => [l.name, l.value]));
  const name = byName.get('__name__');
  if (name === undefined) return { metric: undefined };
  const job = byName.get('job') ?? 'none';
  const instance = byName.get('instance') ?? 'none';
  const key = JSON.stringify([job, instance]);
  const resource = scope.resource(key, () => namedResource(key, `${job}@${instance}`, creator, { job, instance }));
  return { metric: scope.metric(resource, name) };
}

/**
 * Groups a request's samples by resource and metric, as Gnocchi does: each
 * series with samples goes to its metric, the last series of a metric
 * replacing the others. Throws the refusal of the first series without
 * `__name__` or with a timestamp Gnocchi refuses; answers null when a
 * label is not UTF-8 (the request must go through decodeWriteRequest,
 * which refuses it). The batch is on the scanned columns (its `columns`,
 * timestamps turned into microseconds): recycleScanned takes them back
 * once the batch is written.
 */
export function groupRemoteWrite(bytes: Buffer, creator: string, cache: SeriesCache): CollectorBatch | null {
  const scanned = scanWriteRequest(bytes);
  if (scanned === null) return null;
  let batch: CollectorBatch | null = null;
  try {
    batch = groupScanned(bytes, scanned, creator, cache);
    return batch;
  } finally {
    if (batch === null) recycleScanned({ timestamps: scanned.timestampsMs, values: scanned.values });
  }
}

function groupScanned(bytes: Buffer, scanned: ScannedWriteRequest, creator: string, cache: SeriesCache): CollectorBatch | null {
  const scope = new CollectorScope<PrometheusSeries>(cache, `prometheus\u0000${creator}`);
  const { count, labelsStart, labelsEnd, sampleStart, timestampsMs, values } = scanned;
  const batch = new CollectorBatch(sampleStart[count]!, scope.named, { timestamps: timestampsMs, values });
  let refusal: EngineError | undefined;
  for (let i = 0; i < count; i++) {
    const start = labelsStart[i]!;
    const end = labelsEnd[i]!;
    const expected = scope.expected();
    let entry = expected !== -1 && scope.isKey(expected, bytes, start, end) ? expected : -1;
    let hash = 0;
    if (entry === -1) {
      hash = hashBytes(bytes, start, end);
      entry = scope.seriesEntry(bytes, start, end, hash);
    }
    let series: PrometheusSeries;
    if (entry !== -1) {
      series = scope.seriesAt(entry);
    } else {
      const labels = readLabels(bytes, start, end);
      if (labels === null) return null;
      series = seriesOf(labels, scope, creator);
      entry = scope.rememberSeries(bytes, start, end, hash, series);
    }
    scope.seen(entry);
    // After a refusal, the labels are still read: one not UTF-8 refuses the whole request first.
    if (refusal !== undefined) continue;
    if (series.metric === undefined) {
      refusal = noName();
      continue;
    }
    refusal = addRun(batch, series.metric, timestampsMs, sampleStart[i]!, sampleStart[i + 1]!);
  }
  if (refusal !== undefined) throw refusal;
  scope.noteNamed(batch.resources.length, batch.metrics.length);
  return batch;
}

/** groupRemoteWrite of a request decodeWriteRequest read (shapes the scanner leaves to it). */
function groupDecoded(request: WriteRequest, creator: string, cache: SeriesCache): CollectorBatch {
  const scope = new CollectorScope<PrometheusSeries>(cache, `prometheus\u0000${creator}`);
  const total = request.timeseries.reduce((n, ts) => n + ts.samples.length, 0);
  const columns = { timestamps: new Float64Array(total), values: new Float64Array(total) };
  const batch = new CollectorBatch(total, undefined, columns);
  let at = 0;
  for (const ts of request.timeseries) {
    const { metric } = seriesOf(ts.labels, scope, creator);
    if (metric === undefined) throw noName();
    const from = at;
    for (const sample of ts.samples) {
      columns.timestamps[at] = sample.timestampMs;
      columns.values[at++] = sample.value;
    }
    const refusal = addRun(batch, metric, columns.timestamps, from, at);
    if (refusal !== undefined) throw refusal;
  }
  return batch;
}

/**
 * Samples [from, to) of a series (their timestamps in milliseconds, turned
 * into microseconds in place) as the points of its metric, replacing those
 * of an earlier series of it; the refusal of the first timestamp Gnocchi
 * refuses.
 */
function addRun(batch: CollectorBatch, metric: MetricSlot, timestamps: Float64Array, from: number, to: number): EngineError | undefined {
  if (from === to) return undefined;
  // parseTimestamp's reading of the seconds, without its try and throw per sample.
  const refused = millisToMicros(timestamps, from, to);
  if (refused !== -1) return sampleRefusal(timestamps[refused]!);
  batch.run(batch.metric(metric), from, to);
  return undefined;
}

/**
 * Per definition of the type's attributes (as JSON), each resource slot's
 * attributes as checked against it. A slot's labels never change: checking
 * them again on every write cost ~250 bytes of garbage per series. Slots
 * the series cache lets go are let go here too.
 */
const preparedByType = new Map<string, WeakMap<ResourceSlot, Readonly<Record<string, AttributeValue>>>>();
/** Definitions kept at most; a type redefined more often starts afresh. */
const PREPARED_TYPES = 8;

/** The attributes of a slot's resource, checked once per slot for a definition of the type. */
function preparer(rt: ResourceTypeRecord): (slot: ResourceSlot) => Readonly<Record<string, AttributeValue>> {
  const definition = JSON.stringify(rt.attributes);
  let prepared = preparedByType.get(definition);
  if (prepared === undefined) {
    if (preparedByType.size >= PREPARED_TYPES) preparedByType.clear();
    preparedByType.set(definition, (prepared = new WeakMap()));
  }
  return (slot) => {
    let attrs = prepared.get(slot);
    if (attrs === undefined) {
      attrs = Object.freeze(attributesOf(rt, slot.given));
      prepared.set(slot, attrs);
    }
    return attrs;
  };
}

/** A resource's attributes from its labels, checked against the type; throws as Gnocchi refuses them. */
function attributesOf(rt: ResourceTypeRecord, given: Readonly<Record<string, string>>): Record<string, AttributeValue> {
  const attrs: Record<string, AttributeValue> = {};
  for (const def of rt.attributes) {
    attrs[def.name] = Object.hasOwn(given, def.name) ? attributeValue(def, given[def.name], [def.name]) : null;
    if (attrs[def.name] === null && def.required) throw new InvalidInput(`required key not provided @ data['${def.name}']`, [def.name]);
  }
  return attrs;
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
    const { series } = collectorState(engine);
    let batch: CollectorBatch;
    try {
      let inflated: Uint8Array;
      try {
        inflated = snappyUncompress(bodyBytes(request), config.bodyLimit);
      } finally {
        // Inflated into a buffer of its own: nothing reads the body again.
        releaseBody(request);
      }
      const bytes = Buffer.from(inflated.buffer, inflated.byteOffset, inflated.byteLength);
      batch = groupRemoteWrite(bytes, who.creator, series) ?? groupDecoded(decodeWriteRequest(bytes), who.creator, series);
    } catch (err) {
      if (err instanceof PrometheusTooLarge) throw new HttpError(413, err.message);
      if (err instanceof PrometheusDecodeError) throw new BadRequest({ cause: 'Invalid input', reason: err.message, detail: [] });
      throw err;
    }
    try {
      if (batch.resources.length === 0) return reply.code(202).send();
      if ((await engine.index.findType(PROMETHEUS_RESOURCE_TYPE)) === undefined) {
        enforce('create resource type', who);
        try {
          await engine.index.createType({ name: PROMETHEUS_RESOURCE_TYPE, state: 'creating', attributes: PROMETHEUS_ATTRIBUTES });
        } catch (err) {
          if (!(err instanceof ResourceTypeAlreadyExists)) throw err;
        }
      }
      const rt = await engine.index.getType(PROMETHEUS_RESOURCE_TYPE);
      await writeCollectorBatch(engine, batch, {
        type: rt.name,
        creator: who.creator,
        prepare: preparer(rt),
        mayUpdate: (creator) => enforce('update resource', who, creatorTarget(creator)),
        mayPost: (creator) => enforce('post measures', who, creatorTarget(creator)),
        maxSeries: config.maxSeries,
      });
    } finally {
      // The incoming record holds a copy of the points: the columns serve the next request.
      if (batch.columns !== undefined) recycleScanned(batch.columns);
    }
    return reply.code(202).send();
  });
}
