/** Versions document, health check, capabilities and status. */
import type { FastifyInstance } from 'fastify';
import { VALID_AGGREGATION_METHODS } from '../../engine/archive-policy.js';
import type { AppContext } from '../app.js';
import { identify } from '../auth.js';
import { baseUrl, boolParam, queryOf } from '../http.js';
import { errors, flag, json, query } from '../openapi-schemas.js';
import { enforce } from '../policy.js';

export async function rootRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const urls = { proxyHeaders: ctx.config.proxyHeaders };

  app.get('/', async (request) => ({
    build: '4.4.2',
    versions: [
      {
        status: 'CURRENT',
        links: [{ rel: 'self', href: `${baseUrl(request, urls)}/v1/` }],
        id: 'v1.0',
        updated: '2015-03-19',
      },
    ],
  }));

  const v1Links = ['aggregates', 'aggregation', 'archive_policy', 'archive_policy_rule', 'batch', 'capabilities',
    'influxdb', 'metric', 'resource', 'resource_type', 'search', 'status'];
  app.get('/v1', {
    schema: {
      summary: 'The v1 API and its sections',
      tags: ['service'],
      operationId: 'getV1',
      response: {
        200: json('Version and links to each section', {
          type: 'object',
          properties: {
            version: { const: '1.0' },
            links: {
              type: 'array',
              items: { type: 'object', properties: { rel: { type: 'string' }, href: { type: 'string', format: 'uri' } }, required: ['rel', 'href'] },
            },
          },
          required: ['version', 'links'],
        }),
        ...errors(401, 406),
      },
    },
  }, async (request) => {
    const base = `${baseUrl(request, urls)}/v1`;
    return {
      version: '1.0',
      links: [{ rel: 'self', href: base }, ...v1Links.map((rel) => ({ rel, href: `${base}/${rel}` }))],
    };
  });

  // As oslo.middleware's healthcheck: any client may ask, JSON if it wants it.
  app.get('/healthcheck', { config: { anyAccept: true } }, async (request, reply) => {
    if (/application\/json/i.test(request.headers.accept ?? '')) return { detailed: false, reasons: [] };
    return reply.type('text/plain; charset=UTF-8').send('');
  });

  app.get('/v1/capabilities', {
    schema: {
      summary: 'Supported aggregation methods',
      tags: ['service'],
      operationId: 'getCapabilities',
      response: {
        200: json('Every method, `Npct` and `rate:` forms included', {
          type: 'object',
          properties: { aggregation_methods: { type: 'array', items: { type: 'string' } } },
          required: ['aggregation_methods'],
        }),
        ...errors(401, 406),
      },
    },
  }, async () => ({ aggregation_methods: VALID_AGGREGATION_METHODS }));

  app.get('/v1/status', {
    schema: {
      summary: 'Processing backlog',
      tags: ['service'],
      operationId: 'getStatus',
      querystring: query({ details: flag('Include the backlog of each metric (default true)') }),
      response: {
        200: json('Measures waiting to be processed', {
          type: 'object',
          properties: {
            storage: {
              type: 'object',
              properties: {
                summary: {
                  type: 'object',
                  properties: { metrics: { type: 'integer' }, measures: { type: 'integer' } },
                  required: ['metrics', 'measures'],
                },
                measures_to_process: {
                  type: 'object',
                  description: 'With `details`: metric id -> measures waiting',
                  additionalProperties: { type: 'integer' },
                },
              },
              required: ['summary'],
            },
            metricd: {
              type: 'object',
              properties: { processors: { type: ['array', 'null'] }, statistics: { type: 'object' } },
              required: ['processors', 'statistics'],
            },
            cluster: {
              type: 'object',
              description: "Cluster mode: the nodes alive, the shards each holds and its backlog, as of the nodes' last heartbeats",
              properties: {
                nodes: {
                  type: 'array',
                  items: {
                    type: 'object',
                    properties: {
                      id: { type: 'string' },
                      shards: { type: 'array', items: { type: 'integer' } },
                      metrics: { type: 'integer' },
                      measures: { type: 'integer' },
                      lag_seconds: { type: 'number' },
                      fenced_commits: { type: 'integer', description: 'Its processing commits refused since it started' },
                    },
                  },
                },
                shard_holders: { type: 'object', description: 'shard -> node id', additionalProperties: { type: 'string' } },
                lag_seconds: { type: 'number', description: 'Age of the oldest measure waiting, on any node' },
                fenced_commits: { type: 'integer', description: "This node's processing commits refused since it started: their shard's lease had passed to another node" },
                janitor_deleted_objects: {
                  type: 'integer',
                  description: "Split objects this node's janitor deleted since it started, nothing referencing them any more (with --splits s3:// only)",
                },
              },
            },
          },
          required: ['storage', 'metricd'],
        }),
        ...errors(400, 401, 403, 406),
      },
    },
  }, async (request) => {
    enforce('get status', identify(request));
    const details = boolParam(queryOf(request), 'details', true);
    const backlog = ctx.engine.processor.backlog(details);
    const cluster = ctx.engine.clusterStatus();
    const storage: Record<string, unknown> = {
      summary: cluster === undefined ? { metrics: backlog.metrics, measures: backlog.measures } : { metrics: cluster.metrics, measures: cluster.measures },
    };
    // Per metric: this node's shards' (the others' are in their own answers).
    if (details) storage.measures_to_process = backlog.perMetric;
    if (cluster === undefined) return { storage, metricd: { processors: null, statistics: {} } };
    const janitorDeleted = ctx.engine.janitorDeletedObjects();
    return {
      storage,
      metricd: { processors: cluster.nodes.map((n) => n.id), statistics: {} },
      cluster: {
        nodes: cluster.nodes.map(({ lagSeconds, fencedCommits, ...n }) => ({ ...n, lag_seconds: lagSeconds, fenced_commits: fencedCommits })),
        shard_holders: cluster.holders,
        lag_seconds: cluster.lagSeconds,
        fenced_commits: ctx.engine.processor.fencedCommits(),
        ...(janitorDeleted === undefined ? {} : { janitor_deleted_objects: janitorDeleted }),
      },
    };
  });
}
