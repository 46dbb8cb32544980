/**
 * The InfluxDB compatibility layer (Gnocchi's `rest/influxdb.py`): a database
 * is a resource type, the `host` tag (or the tag named by the
 * `X-Gnocchi-InfluxDB-Tag-Resource-ID` header) names the resource, and each
 * numeric field becomes the metric `measurement.field@tag=value,...` (other
 * tags sorted by key, `/` replaced by `_`).
 *
 * Where this differs from Gnocchi 4.4 on purpose: lines are parsed strictly
 * (see formats/line-protocol.ts), booleans are stored as 1 and 0, the
 * `precision` parameter is honoured (Gnocchi ignores it and reads
 * nanoseconds), chunked bodies are accepted (Gnocchi needs uwsgi), an
 * unknown database answers 404 (Gnocchi hangs until its operation timeout),
 * `create database` must be the whole query, and past `--max-series` the
 * points of new series are refused as InfluxDB refuses a partial write
 * (400, the rest stored).
 */
import type { FastifyInstance } from 'fastify';
import { CollectorBatch, collectorState, writeCollectorBatch } from '../../engine/collector.js';
import { ArgumentError, BadRequest, EngineError, InvalidInput, ResourceTypeAlreadyExists } from '../../engine/errors.js';
import type { AttributeValue } from '../../engine/resource-type.js';
import { CollectorScope, namedResource, type MetricSlot, type ResourceSlot, type SeriesCache } from '../../engine/series-cache.js';
import {
  FIELD_STRING,
  isPrecision,
  LineProtocolError,
  LineScanner,
  NO_TIMESTAMP,
  parseFieldKey,
  parseSeries,
  type Point,
} from '../../formats/line-protocol.js';
import type { AppContext } from '../app.js';
import { identify } from '../auth.js';
import { HttpError } from '../errors.js';
import { bodyBytes, queryOf, single } from '../http.js';
import { body, empty, errors, query } from '../openapi-schemas.js';
import { enforce } from '../policy.js';
import { creatorTarget } from '../policy-targets.js';
import { releaseBody } from '../raw-body.js';

export const INFLUXDB_VERSION = 'Gnocchi 4.4.2';
export const DEFAULT_TAG_RESOURCE_ID = 'host';
export const TAG_RESOURCE_ID_HEADER = 'x-gnocchi-influxdb-tag-resource-id';
const MAX_DATABASE_NAME_LENGTH = 255;
const SPACE = 0x20;

/** `create database NAME` (NAME an identifier or a double-quoted string), optionally ending with `;`. */
const CREATE_DATABASE = /^\s*create\s+database\s+(?:"((?:[^"\\]|\\.)*)"|([A-Za-z_][A-Za-z0-9_]*))\s*;?\s*$/is;

/** The database a `create database` query names, or undefined for any other query. */
export function parseCreateDatabase(q: string): string | undefined {
  const m = CREATE_DATABASE.exec(q);
  if (m === null) return undefined;
  return m[1] !== undefined ? m[1].replace(/\\(.)/gs, '$1') : m[2];
}

const notImplemented = () =>
  new EngineError(501, { cause: 'Not implemented error', detail: 'q', reason: 'Query not implemented' });

const lineError = (line: number) =>
  new BadRequest({ cause: 'Value error', detail: 'line', reason: `Unable to parse line ${line}` });

const keyError = (tag: string) => new BadRequest({ cause: 'Value error', detail: 'key', reason: `Unable to find key \`${tag}' in tags` });

/** Python's `sorted()` on strings: by code point. */
function byCodePoint(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** A field of a series: its metric, and the line that last gave it (a key given twice in a line goes through parseLine). */
interface InfluxField {
  key: string;
  metric: MetricSlot;
  line: number;
}

/** What a series part (measurement and tags, as written) maps to in a scope. */
interface InfluxSeries {
  /** Undefined when the tags lack the resource's. */
  resource: ResourceSlot | undefined;
  measurement: string;
  /** `@k=v,...` of the other tags, sorted by key; '' without. */
  suffix: string;
  /** Field keys as written (Latin-1 of their bytes), several spellings possibly of the same field. */
  spellings: readonly string[];
  /** The field of each spelling. */
  fields: readonly InfluxField[];
  /**
   * How the series' last line read through fieldsOf wrote its fields
   * (LineScanner.layoutOf; '' before any), and the metric of each field:
   * kept flat on the series, as a known series' line reads nothing else.
   */
  layout: string;
  layoutMetrics: readonly MetricSlot[];
}

/** The attributes of the resources a write creates (none), shared: a write prepares every resource it names. */
const NO_ATTRIBUTES: Readonly<Record<string, AttributeValue>> = Object.freeze({});

/** layoutMetrics of a series without a layout, shared: most series of a first write never get one. */
const NO_METRICS: readonly MetricSlot[] = Object.freeze([]);

/** Spellings of field keys remembered per series: past them a line goes through parseLine. */
const MAX_SPELLINGS = 1000;

/** Stamps of lines for InfluxField.line. */
let lastLine = 0;

export interface LineWrite {
  /** The database (resource type). */
  db: string;
  /** The tag naming the resource. */
  tagToRid: string;
  precision: string;
  creator: string;
  /** The timestamp of lines without one. */
  nowMicros: number;
}

/**
 * Groups the points of a write by resource and metric, as Gnocchi does:
 * each numeric field of a line is a point of the metric
 * `measurement.field@tag=value,...` of the resource its resource tag names.
 * Throws LineProtocolError for the first line that does not parse, else the
 * refusal of the first line with a timestamp out of range or without the
 * resource tag.
 */
export function groupLines(body: Buffer, write: LineWrite, cache: SeriesCache): CollectorBatch {
  const scope = new CollectorScope<InfluxSeries>(cache, `influxdb\u0000${write.db}\u0000${write.tagToRid}\u0000${write.creator}`);
  const scan = new LineScanner(body, write.precision);
  // Lines of a collector take ~50 bytes.
  const batch = new CollectorBatch(Math.ceil(body.length / 40), scope.named);
  let refusal: EngineError | undefined;
  const lineFields: InfluxField[] = [];
  while (scan.nextLine()) {
    const expected = scope.expected();
    let known = expected === -1 ? -1 : scope.keyEndAt(expected, body, scan.lineStart, scan.lineEnd);
    if (known !== -1 && body[known] !== SPACE) known = -1;
    // A collector writes a series' fields the same way line after line.
    const before = known === -1 ? undefined : scope.seriesAt(expected);
    const asBefore = before !== undefined && scan.readAs(known, before.layout);
    if (!asBefore) scan.read(known);
    if (refusal !== undefined) continue;
    const ts = lineMicros(scan, write);
    if (Number.isNaN(ts)) {
      refusal = lineError(scan.line);
      continue;
    }
    if (asBefore) {
      scope.seen(expected);
      addAsBefore(batch, scan, before!, write);
      continue;
    }
    if (scan.point === null) {
      const { seriesStart: start, seriesEnd: end } = scan;
      let entry = known === -1 ? scope.seriesEntry(body, start, end, scan.seriesHash) : expected;
      let series: InfluxSeries;
      if (entry !== -1) {
        series = scope.seriesAt(entry);
      } else {
        series = newSeries(parseSeries(body.toString('utf8', start, end)), write, scope);
        entry = scope.rememberSeries(body, start, end, scan.seriesHash, series);
      }
      scope.seen(entry);
      if (series.resource === undefined) {
        refusal = keyError(write.tagToRid);
        continue;
      }
      batch.resource(series.resource);
      if (!fieldsOf(scan, series, entry !== -1, scope, lineFields)) scan.reparse();
      else if (known !== -1) {
        // Only for a series that came when expected: one written once, as on a first write, would not use it.
        series.layout = scan.layoutOf();
        series.layoutMetrics = lineFields.slice(0, scan.fieldCount).map((f) => f.metric);
      }
    }
    if (scan.point === null) {
      for (let i = 0; i < scan.fieldCount; i++) {
        if (scan.kind[i] !== FIELD_STRING) batch.add(batch.metric(lineFields[i]!.metric), ts, scan.value[i]!);
      }
    } else {
      scope.seen(-1);
      refusal = addPoint(batch, scan.point, ts, write, scope);
    }
  }
  if (refusal !== undefined) throw refusal;
  scope.noteNamed(batch.resources.length, batch.metrics.length);
  return batch;
}

/** The timestamp of the line read. */
const lineMicros = (scan: LineScanner, write: LineWrite): number => (scan.micros === NO_TIMESTAMP ? write.nowMicros : scan.micros);

/** The points of a line LineScanner.readAs read with the layout of `series`. */
function addAsBefore(batch: CollectorBatch, scan: LineScanner, series: InfluxSeries, write: LineWrite): void {
  const ts = lineMicros(scan, write);
  // The layout's fields were found for the series, whose resource its tags name.
  batch.resource(series.resource!);
  const metrics = series.layoutMetrics;
  for (let i = 0; i < scan.fieldCount; i++) {
    if (scan.kind[i] !== FIELD_STRING) batch.add(batch.metric(metrics[i]!), ts, scan.value[i]!);
  }
}

function newSeries({ measurement, tags }: Pick<Point, 'measurement' | 'tags'>, write: LineWrite, scope: CollectorScope<InfluxSeries>): InfluxSeries {
  const original = tags.get(write.tagToRid);
  return {
    resource: original === undefined ? undefined : scope.resource(original, () => namedResource(original, original, write.creator)),
    measurement,
    suffix: suffixOf(tags, write.tagToRid),
    spellings: [],
    fields: [],
    layout: '',
    layoutMetrics: NO_METRICS,
  };
}

/** `@k=v,...` of the tags other than the resource's, sorted by key as Python sorts. */
function suffixOf(tags: Map<string, string>, tagToRid: string): string {
  const others = [...tags.keys()].filter((k) => k !== tagToRid).sort(byCodePoint);
  return others.length === 0 ? '' : '@' + others.map((k) => `${k}=${tags.get(k)}`).join(',');
}

const metricName = (measurement: string, field: string, suffix: string) => `${measurement}.${field}${suffix}`.replaceAll('/', '_');

/**
 * The fields of the scanned line into `out`, by their spelling; false when
 * the line must go through parseLine (a key given twice, or a series with
 * too many spellings). `remembered`: whether the scope keeps the series.
 */
function fieldsOf(scan: LineScanner, series: InfluxSeries, remembered: boolean, scope: CollectorScope<InfluxSeries>, out: InfluxField[]): boolean {
  const { body, fieldCount } = scan;
  // A key given twice needs two fields: a collector's line of one is not stamped.
  const line = fieldCount > 1 ? ++lastLine : 0;
  let { spellings, fields } = series;
  for (let i = 0; i < fieldCount; i++) {
    const start = scan.keyStart[i]!;
    const length = scan.keyEnd[i]! - start;
    // Lines of a series usually give their fields in the same order.
    let at = i < spellings.length && sameBytes(body, start, length, spellings[i]!) ? i : -1;
    for (let j = 0; at === -1 && j < spellings.length; j++) if (sameBytes(body, start, length, spellings[j]!)) at = j;
    if (at === -1) {
      if (spellings.length === MAX_SPELLINGS) return false;
      const key = parseFieldKey(body.toString('utf8', start, start + length));
      const field = fields.find((f) => f.key === key) ?? {
        key,
        metric: scope.metric(series.resource!, metricName(series.measurement, key, series.suffix), remembered),
        line: 0,
      };
      at = spellings.length;
      spellings = series.spellings = appended(spellings, body.toString('latin1', start, start + length));
      fields = series.fields = appended(fields, field);
    }
    const field = fields[at]!;
    if (line !== 0) {
      if (field.line === line) return false;
      field.line = line;
    }
    out[i] = field;
  }
  return true;
}

/**
 * `items` and `item` in a new array of their exact length: a series rarely
 * gets a second spelling, and a push or a spread reserves 17 elements
 * (~150 bytes a series remembered), concat 16 in a dictionary (apache-arrow
 * sets Symbol.isConcatSpreadable, which sends every concat down V8's
 * generic path).
 */
function appended<T>(items: readonly T[], item: T): T[] {
  const out = new Array<T>(items.length + 1);
  for (let i = 0; i < items.length; i++) out[i] = items[i]!;
  out[items.length] = item;
  return out;
}

function sameBytes(body: Buffer, start: number, length: number, latin1: string): boolean {
  if (latin1.length !== length) return false;
  for (let j = 0; j < length; j++) if (body[start + j] !== latin1.charCodeAt(j)) return false;
  return true;
}

/** A line parseLine read (rare shapes), grouped without the series map. */
function addPoint(batch: CollectorBatch, p: Point, ts: number, write: LineWrite, scope: CollectorScope<InfluxSeries>): EngineError | undefined {
  const original = p.tags.get(write.tagToRid);
  if (original === undefined) return keyError(write.tagToRid);
  const resource = scope.resource(original, () => namedResource(original, original, write.creator));
  batch.resource(resource);
  const suffix = suffixOf(p.tags, write.tagToRid);
  for (const [field, value] of p.fields) {
    // Strings cannot be stored; booleans are 1 and 0.
    if (typeof value === 'string') continue;
    const metric = scope.metric(resource, metricName(p.measurement, field, suffix));
    batch.add(batch.metric(metric), ts, typeof value === 'boolean' ? (value ? 1 : 0) : value);
  }
  return undefined;
}

export async function influxdbRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { engine, config } = ctx;

  app.get('/v1/influxdb/ping', {
    exposeHeadRoute: false,
    config: { anyAccept: true },
    schema: {
      summary: 'InfluxDB ping',
      tags: ['ingestion'],
      operationId: 'influxdbPing',
      response: {
        204: empty('Up', { 'X-Influxdb-Version': { type: 'string', const: INFLUXDB_VERSION } }),
        ...errors(401),
      },
    },
  }, async (_request, reply) => {
    reply.header('X-Influxdb-Version', INFLUXDB_VERSION);
    return reply.code(204).send();
  });
  // As Gnocchi (Pecan) answers it.
  app.head('/v1/influxdb/ping', { config: { anyAccept: true } }, async () => {
    throw new HttpError(405, '', { Allow: '' });
  });

  app.post('/v1/influxdb/query', {
    schema: {
      summary: 'InfluxDB query: only `create database`',
      description: 'A database is a resource type; creating one that exists is not an error. Without `q`, nothing is done.',
      tags: ['ingestion'],
      operationId: 'influxdbQuery',
      querystring: query({ q: { type: 'string', description: '`create database <name>`' } }),
      response: { 204: empty('Done'), ...errors(400, 401, 403, 406, 501) },
    },
  }, async (request, reply) => {
    const q = single(queryOf(request), 'q');
    if (q !== undefined) {
      const name = parseCreateDatabase(q);
      if (name === undefined) throw notImplemented();
      const who = identify(request);
      enforce('create resource type', who);
      if (name === '' || [...name].length > MAX_DATABASE_NAME_LENGTH) {
        throw new InvalidInput(`length of value must be between 1 and ${MAX_DATABASE_NAME_LENGTH}`, ['name']);
      }
      try {
        await engine.index.createType({ name, state: 'creating', attributes: [] });
      } catch (err) {
        if (!(err instanceof ResourceTypeAlreadyExists)) throw err;
      }
    }
    return reply.code(204).send();
  });

  app.post('/v1/influxdb/write', {
    config: { pushesMeasures: true },
    schema: {
      summary: 'Write points in InfluxDB line protocol',
      description:
        'Each numeric field becomes the metric `measurement.field@tag=value,...` of the resource the `host` tag ' +
        '(or the tag the header names) identifies, in the resource type `db`; resources and metrics are created as needed.',
      tags: ['ingestion'],
      operationId: 'influxdbWrite',
      querystring: query({
        db: { type: 'string', default: 'influxdb', description: 'The resource type' },
        precision: { enum: ['ns', 'n', 'u', 'us', 'µ', 'µs', 'ms', 's', 'm', 'h'], default: 'ns' },
      }),
      headers: query({ [TAG_RESOURCE_ID_HEADER]: { type: 'string', default: DEFAULT_TAG_RESOURCE_ID, description: 'The tag naming the resource' } }),
      body: body({ 'text/plain': { type: 'string', description: 'Lines `measurement,tag=v field=1.5 1700000000000000000`' } }, false),
      response: { 204: empty('Written, to be processed'), ...errors(400, 401, 403, 404, 406, 413, 503, 507) },
    },
  }, async (request, reply) => {
    const who = identify(request);
    const query = queryOf(request);
    const db = single(query, 'db') ?? 'influxdb';
    const precision = single(query, 'precision') ?? 'ns';
    if (!isPrecision(precision)) throw new ArgumentError(`Invalid precision: ${precision}`, 'precision');
    const header = request.headers[TAG_RESOURCE_ID_HEADER];
    const tagToRid = (Array.isArray(header) ? header[0] : header) ?? DEFAULT_TAG_RESOURCE_ID;
    const body = bodyBytes(request);
    if (body.length === 0) return reply.code(204).send();

    const { series } = collectorState(engine);
    let batch: CollectorBatch;
    try {
      batch = groupLines(body, { db, tagToRid, precision, creator: who.creator, nowMicros: Date.now() * 1000 }, series);
    } catch (err) {
      if (err instanceof LineProtocolError) throw lineError(err.line);
      throw err;
    } finally {
      // The batch and the series cache hold copies: nothing reads the body again.
      releaseBody(request);
    }
    if (batch.resources.length === 0) return reply.code(204).send();
    const rt = await engine.index.getType(db);
    // Every resource name is checked before anything else, as Gnocchi does.
    // Indexed: a for-of in this handler, run too rarely to be optimized, allocates a result per resource.
    for (let r = 0; r < batch.resources.length; r++) if (batch.resources[r]!.id instanceof Error) throw batch.resources[r]!.id;
    await writeCollectorBatch(engine, batch, {
      type: rt.name,
      creator: who.creator,
      prepare: () => NO_ATTRIBUTES,
      mayUpdate: (creator) => enforce('update resource', who, creatorTarget(creator)),
      mayPost: (creator) => enforce('post measures', who, creatorTarget(creator)),
      maxSeries: config.maxSeries,
    });
    return reply.code(204).send();
  });
}
