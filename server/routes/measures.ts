/** Batch pushes, and the measure decoding helpers shared with the metric routes. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Series } from '../../engine/aggregation.js';
import { BadRequest, InvalidInput } from '../../engine/errors.js';
import type { Engine } from '../../engine/engine.js';
import type { MetricRecord } from '../../engine/index.js';
import { invalidValue, isPlainObject, type Path } from '../../engine/validate.js';
import { decodeMeasures, MeasuresError } from '../../formats/measures.js';
import { scanMeasureBatch, scanMeasureList } from '../../formats/measure-scan.js';
import type { AppContext } from '../app.js';
import { identify } from '../auth.js';
import { jsonBodyBytes, parseJsonText, utf8Text } from '../http.js';
import { empty, errors, jsonBody, listOf, ref } from '../openapi-schemas.js';
import { enforce } from '../policy.js';
import { creatorTarget } from '../policy-targets.js';
import { normalizeUuid } from './metric.js';

/** Decodes a measure list; `path` locates it inside a larger body, for the error. */
export function decodeMeasuresBody(body: unknown, path: Path = []): Series {
  try {
    return decodeMeasures(body);
  } catch (err) {
    if (err instanceof MeasuresError) throw path.length === 0 ? new InvalidInput(err.message) : invalidValue(err.message, path);
    throw err;
  }
}

function decodeBatch(body: unknown): Map<string, Series> {
  if (!isPlainObject(body)) throw new InvalidInput('expected a dictionary');
  const decoded = new Map<string, Series>();
  for (const [id, measures] of Object.entries(body)) {
    const uuid = normalizeUuid(id);
    if (uuid === undefined) throw new InvalidInput(`extra keys not allowed @ data['${id}']`, [id]);
    decoded.set(uuid, decodeMeasuresBody(measures, [id]));
  }
  return decoded;
}

/**
 * A batch to store, keyed by the metrics' own ids (keys read from the body
 * may be slices of it, which would keep the whole body alive as long as the
 * measures are pending), with the creators of its metrics.
 */
class Push {
  readonly measures = new Map<string, Series>();
  readonly creators = new Set<string>();

  /** False when the metric is in already. */
  add(metric: MetricRecord, series: Series): boolean {
    const size = this.measures.size;
    this.creators.add(metric.creator);
    return this.measures.set(metric.id, series).size > size;
  }
}

/**
 * The fast path: each key the id of a known metric, in the form ids are given
 * out, once; null when the general path must decide (other forms of ids,
 * unknown or repeated metrics, bodies the scanner does not read).
 */
async function scannedPush(engine: Engine, body: Buffer): Promise<Push | null> {
  const scanned = scanMeasureBatch(body);
  if (scanned === null) return null;
  for (const id of scanned.keys) if (normalizeUuid(id) !== id) return null;
  const metrics = await engine.index.getMetrics(scanned.keys);
  const push = new Push();
  for (let i = 0; i < scanned.keys.length; i++) {
    const metric = metrics[i];
    if (metric === undefined || !push.add(metric, scanned.lists[i]!)) return null;
  }
  return push;
}

/** The general path: JSON, then Gnocchi's checks and errors. */
async function decodedPush(engine: Engine, text: string): Promise<Push> {
  const push = new Push();
  const missing: string[] = [];
  const batch = decodeBatch(parseJsonText(text));
  const metrics = await engine.index.getMetrics([...batch.keys()]);
  let i = 0;
  for (const [id, series] of batch) {
    const metric = metrics[i++];
    if (metric === undefined) missing.push(id);
    else push.add(metric, series);
  }
  if (missing.length > 0) throw new BadRequest(`Unknown metrics: ${missing.sort().join(', ')}`);
  return push;
}

/** A measure list body: the fast path, else JSON and `decodeMeasures`. */
export function readMeasuresBody(request: FastifyRequest): Series {
  const body = jsonBodyBytes(request);
  return scanMeasureList(body) ?? decodeMeasuresBody(parseJsonText(utf8Text(body)));
}

export async function measuresRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { engine } = ctx;

  app.post('/v1/batch/metrics/measures', {
    config: { pushesMeasures: true },
    schema: {
      summary: 'Push measures to several metrics',
      tags: ['metrics'],
      operationId: 'pushMeasuresBatch',
      body: jsonBody({
        type: 'object',
        description: 'Metric id -> measures',
        additionalProperties: listOf(ref('MeasureInput')),
      }),
      response: { 202: empty('Accepted, to be processed'), ...errors(400, 401, 403, 406, 413, 415, 503, 507) },
    },
  }, async (request, reply) => {
    const who = identify(request);
    const body = jsonBodyBytes(request);
    const push = (await scannedPush(engine, body)) ?? (await decodedPush(engine, utf8Text(body)));
    // The policy sees a metric only through its creator: one check per creator decides for all.
    for (const creator of push.creators) enforce('post measures', who, creatorTarget(creator));
    await engine.addMeasures(push.measures);
    return reply.code(202).send();
  });
}
