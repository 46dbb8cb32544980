/** Batch pushes, and the measure encoding helpers shared with the metric routes. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Series } from '../../engine/aggregation.js';
import { BadRequest, InvalidInput } from '../../engine/errors.js';
import type { AggregatedSeries } from '../../engine/read-measures.js';
import { invalidValue, isPlainObject, type Path } from '../../engine/validate.js';
import { decodeMeasures, MeasuresError } from '../../formats/measures.js';
import { scanMeasureBatch, scanMeasureList } from '../../formats/measure-scan.js';
import { pyFloat } from '../../formats/json.js';
import { formatTimestamp } from '../../formats/timestamp.js';
import type { AppContext } from '../app.js';
import { identify } from '../auth.js';
import { jsonBodyText, parseJsonText } from '../http.js';
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

/** `[[timestamp, granularity, value], ...]`, built as text: this is the hot read path. */
export function serializePoints(series: AggregatedSeries[]): string {
  const parts: string[] = [];
  for (const s of series) {
    const g = typeof s.granularity === 'number' ? pyFloat(s.granularity / 1e6) : JSON.stringify(s.granularity);
    for (let i = 0; i < s.timestamps.length; i++) {
      parts.push(`["${formatTimestamp(s.timestamps[i]!)}", ${g}, ${pyFloat(s.values[i]!)}]`);
    }
  }
  return `[${parts.join(', ')}]`;
}

/** The fast path's reading of a batch, by metric UUID; null when the general path must decide. */
function scannedBatch(text: string): Map<string, Series> | null {
  const scanned = scanMeasureBatch(text);
  if (scanned === null) return null;
  const decoded = new Map<string, Series>();
  for (const [id, measures] of scanned) {
    const uuid = normalizeUuid(id);
    if (uuid === undefined || decoded.has(uuid)) return null;
    decoded.set(uuid, measures);
  }
  return decoded;
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

/** A measure list body: the fast path, else JSON and `decodeMeasures`. */
export function readMeasuresBody(request: FastifyRequest): Series {
  const text = jsonBodyText(request);
  return scanMeasureList(text) ?? decodeMeasuresBody(parseJsonText(text));
}

export async function measuresRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { engine } = ctx;

  app.post('/v1/batch/metrics/measures', async (request, reply) => {
    const who = identify(request);
    const text = jsonBodyText(request);
    const decoded = scannedBatch(text) ?? decodeBatch(parseJsonText(text));
    const metrics = [...decoded.keys()].map((id) => engine.index.getMetric(id));
    const missing = [...decoded.keys()].filter((_, i) => metrics[i] === undefined);
    if (missing.length > 0) throw new BadRequest(`Unknown metrics: ${missing.sort().join(', ')}`);
    for (const metric of metrics) enforce('post measures', who, creatorTarget(metric!.creator));
    await engine.addMeasures(decoded);
    return reply.code(202).send();
  });
}
