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
 * and `create database` must be the whole query.
 */
import type { FastifyInstance } from 'fastify';
import type { Series } from '../../engine/aggregation.js';
import { getOrCreateResourceMetrics } from '../../engine/collector.js';
import { ArgumentError, BadRequest, EngineError, InvalidInput, ResourceTypeAlreadyExists } from '../../engine/errors.js';
import { resourceUuid } from '../../engine/resource-id.js';
import { isPrecision, LineProtocolError, parseLines, timestampMicros, type Point } from '../../formats/line-protocol.js';
import type { AppContext } from '../app.js';
import { identify } from '../auth.js';
import { HttpError } from '../errors.js';
import { bodyBytes, queryOf, single } from '../http.js';
import { body, empty, errors, query } from '../openapi-schemas.js';
import { enforce } from '../policy.js';
import { creatorTarget } from '../policy-targets.js';

export const INFLUXDB_VERSION = 'Gnocchi 4.4.2';
export const DEFAULT_TAG_RESOURCE_ID = 'host';
export const TAG_RESOURCE_ID_HEADER = 'x-gnocchi-influxdb-tag-resource-id';
const MAX_DATABASE_NAME_LENGTH = 255;

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

interface Grouped {
  /** resource name -> metric name -> [timestamps, values] */
  resources: Map<string, Map<string, { timestamps: number[]; values: number[] }>>;
}

/** Groups the points of a write by resource and metric name, as Gnocchi does. */
export function groupPoints(points: readonly Point[], tagToRid: string, precision: string, nowMicros: number): Grouped {
  const resources: Grouped['resources'] = new Map();
  for (const p of points) {
    let ts = nowMicros;
    if (p.timestamp !== null) {
      const t = timestampMicros(p.timestamp, precision);
      if (t === undefined) throw lineError(p.line);
      ts = t;
    }
    const rid = p.tags.get(tagToRid);
    if (rid === undefined) {
      throw new BadRequest({ cause: 'Value error', detail: 'key', reason: `Unable to find key \`${tagToRid}' in tags` });
    }
    const others = [...p.tags.keys()].filter((k) => k !== tagToRid).sort(byCodePoint);
    const suffix = others.length === 0 ? '' : '@' + others.map((k) => `${k}=${p.tags.get(k)}`).join(',');
    let metrics = resources.get(rid);
    if (metrics === undefined) resources.set(rid, (metrics = new Map()));
    for (const [field, value] of p.fields) {
      // Strings cannot be stored; booleans are 1 and 0.
      if (typeof value === 'string') continue;
      const name = `${p.measurement}.${field}${suffix}`.replaceAll('/', '_');
      let m = metrics.get(name);
      if (m === undefined) metrics.set(name, (m = { timestamps: [], values: [] }));
      m.timestamps.push(ts);
      m.values.push(typeof value === 'boolean' ? (value ? 1 : 0) : value);
    }
  }
  return { resources };
}

export async function influxdbRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { engine } = ctx;

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
        await engine.resources.createType({ name, state: 'creating', attributes: [] });
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

    let points: Point[];
    try {
      points = parseLines(body);
    } catch (err) {
      if (err instanceof LineProtocolError) throw lineError(err.line);
      throw err;
    }
    const grouped = groupPoints(points, tagToRid, precision, Date.now() * 1000);
    if (grouped.resources.size === 0) return reply.code(204).send();
    const rt = engine.resources.getType(db);

    // Everything that can be refused is checked before anything is written.
    const plans = [...grouped.resources].map(([original, metrics]) => ({
      original,
      rid: resourceUuid(original, who.creator),
      metrics,
    }));
    for (const plan of plans) {
      for (const name of plan.metrics.keys()) {
        if (engine.resources.metricByName(plan.rid, name) === undefined) engine.index.policyNameForMetric(name);
      }
    }

    const batch = new Map<string, Series>();
    for (const plan of plans) {
      const metrics = await getOrCreateResourceMetrics(
        engine,
        {
          type: rt.name,
          id: plan.rid,
          originalResourceId: plan.original,
          creator: who.creator,
          attrs: {},
          metricNames: [...plan.metrics.keys()],
        },
        (creator) => enforce('update resource', who, creatorTarget(creator)),
      );
      for (const [name, m] of metrics) {
        enforce('post measures', who, creatorTarget(m.creator));
        const measures = plan.metrics.get(name)!;
        batch.set(m.id, { timestamps: Float64Array.from(measures.timestamps), values: Float64Array.from(measures.values) });
      }
    }
    await engine.addMeasures(batch);
    return reply.code(204).send();
  });
}
