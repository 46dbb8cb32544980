/** Batch pushes, and the measure encoding helpers shared with the metric routes. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Series } from '../../engine/aggregation.js';
import { BadRequest, InvalidInput } from '../../engine/errors.js';
import type { Engine } from '../../engine/engine.js';
import type { MetricRecord } from '../../engine/index.js';
import type { AggregatedSeries } from '../../engine/read-measures.js';
import { invalidValue, isPlainObject, type Path } from '../../engine/validate.js';
import { decodeMeasures, MeasuresError } from '../../formats/measures.js';
import { scanMeasureBatch, scanMeasureList } from '../../formats/measure-scan.js';
import { copyBytes } from '../../formats/ascii.js';
import { MAX_PY_FLOAT_LENGTH, pyFloat, writePyFloat } from '../../formats/json.js';
import { MAX_TIMESTAMP_LENGTH, writeTimestamp } from '../../formats/timestamp.js';
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

// `, ["` before a point, `", ` and `, ` around its granularity, and `]` after it.
const POINT_PUNCTUATION = 10;

// Answers are written into one reused buffer and copied out as a string: a
// fresh Buffer per answer is external memory to V8, and allocating it made
// V8 run a full collection every few hundred reads. Buffers needed for
// larger answers than this are not kept.
const MAX_KEPT_SCRATCH = 4 * 1024 * 1024;
let scratch = Buffer.allocUnsafe(64 * 1024);

function scratchOf(capacity: number): Buffer {
  if (capacity <= scratch.length) return scratch;
  const buf = Buffer.allocUnsafe(capacity);
  if (capacity <= MAX_KEPT_SCRATCH) scratch = buf;
  return buf;
}

function granularityBytes(granularity: number | string): Buffer {
  return Buffer.from(typeof granularity === 'number' ? pyFloat(granularity / 1e6) : JSON.stringify(granularity), 'latin1');
}

/**
 * `[[timestamp, granularity, value], ...]` as JSON text. This is the hot
 * read path: the text is written as bytes in place, room being made for
 * the longest possible points, so that no string is built per point.
 */
export function serializePoints(series: AggregatedSeries[]): string {
  const granularities = series.map((s) => granularityBytes(s.granularity));
  const capacity = series.reduce(
    (sum, s, i) => sum + s.timestamps.length * (POINT_PUNCTUATION + MAX_TIMESTAMP_LENGTH + granularities[i]!.length + MAX_PY_FLOAT_LENGTH),
    2,
  );
  const buf = scratchOf(capacity);
  let pos = 0;
  buf[pos++] = 0x5b;
  series.forEach((s, i) => {
    pos = writePoints(buf, pos, s, granularities[i]!);
  });
  buf[pos++] = 0x5d;
  return buf.toString('latin1', 0, pos);
}

/** The points of `s`, each preceded by `, ` unless it is the first of the answer. */
function writePoints(buf: Buffer, pos: number, s: AggregatedSeries, granularity: Buffer): number {
  for (let i = 0; i < s.timestamps.length; i++) {
    if (pos > 1) pos = writeComma(buf, pos);
    buf[pos++] = 0x5b;
    buf[pos++] = 0x22;
    pos = writeTimestamp(buf, pos, s.timestamps[i]!);
    buf[pos++] = 0x22;
    pos = writeComma(buf, pos);
    pos = copyBytes(buf, pos, granularity);
    pos = writeComma(buf, pos);
    pos = writePyFloat(buf, pos, s.values[i]!);
    buf[pos++] = 0x5d;
  }
  return pos;
}

function writeComma(buf: Buffer, pos: number): number {
  buf[pos] = 0x2c;
  buf[pos + 1] = 0x20;
  return pos + 2;
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
function scannedPush(engine: Engine, text: string): Push | null {
  const scanned = scanMeasureBatch(text);
  if (scanned === null) return null;
  const push = new Push();
  for (let i = 0; i < scanned.keys.length; i++) {
    const id = scanned.keys[i]!;
    const metric = normalizeUuid(id) === id ? engine.index.getMetric(id) : undefined;
    if (metric === undefined || !push.add(metric, scanned.lists[i]!)) return null;
  }
  return push;
}

/** The general path: JSON, then Gnocchi's checks and errors. */
function decodedPush(engine: Engine, text: string): Push {
  const push = new Push();
  const missing: string[] = [];
  for (const [id, series] of decodeBatch(parseJsonText(text))) {
    const metric = engine.index.getMetric(id);
    if (metric === undefined) missing.push(id);
    else push.add(metric, series);
  }
  if (missing.length > 0) throw new BadRequest(`Unknown metrics: ${missing.sort().join(', ')}`);
  return push;
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
    const push = scannedPush(engine, text) ?? decodedPush(engine, text);
    // The policy sees a metric only through its creator: one check per creator decides for all.
    for (const creator of push.creators) enforce('post measures', who, creatorTarget(creator));
    await engine.addMeasures(push.measures);
    return reply.code(202).send();
  });
}
