/** Versions document, health check, capabilities and status. */
import type { FastifyInstance } from 'fastify';
import { VALID_AGGREGATION_METHODS } from '../../engine/archive-policy.js';
import type { AppContext } from '../app.js';
import { basicIdentity } from '../auth.js';
import { baseUrl, boolParam, queryOf } from '../http.js';
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
  app.get('/v1', async (request) => {
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

  app.get('/v1/capabilities', async () => ({ aggregation_methods: VALID_AGGREGATION_METHODS }));

  app.get('/v1/status', async (request) => {
    enforce('get status', basicIdentity(request));
    const details = boolParam(queryOf(request), 'details', true);
    const backlog = ctx.engine.processor.backlog(details);
    const storage: Record<string, unknown> = {
      summary: { metrics: backlog.metrics, measures: backlog.measures },
    };
    if (details) storage.measures_to_process = backlog.perMetric;
    return { storage, metricd: { processors: null, statistics: {} } };
  });
}
