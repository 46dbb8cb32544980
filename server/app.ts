/**
 * The Fastify application: parsers, hooks and error handling common to every
 * route, then one plugin per API area.
 */
import Fastify, { type FastifyInstance, type HTTPMethods } from 'fastify';
import type { Engine } from '../engine/engine.js';
import { pyJson } from '../formats/json.js';
import { authHook } from './auth.js';
import type { Config } from './config.js';
import { corsHook } from './cors.js';
import { errorHandler, HttpError, sendError } from './errors.js';
import { boolParam, type Query } from './http.js';
import { negotiationHook } from './negotiation.js';
import { registerOpenApi } from './openapi.js';
import { registerRawBody } from './raw-body.js';
import { installProcessingLog, RequestLog } from './request-log.js';
import { aggregatesRoutes } from './routes/aggregates.js';
import { archivePolicyRoutes } from './routes/archive-policy.js';
import { archivePolicyRuleRoutes } from './routes/archive-policy-rule.js';
import { influxdbRoutes } from './routes/influxdb.js';
import { measuresRoutes } from './routes/measures.js';
import { metricRoutes } from './routes/metric.js';
import { prometheusRoutes } from './routes/prometheus.js';
import { resourceRoutes } from './routes/resource.js';
import { rootRoutes } from './routes/root.js';
import { searchMetricRoutes } from './routes/search-metric.js';
import { searchRoutes } from './routes/search.js';
import { uiRoutes } from './routes/ui.js';
import { installSelfMetrics } from './self-metrics.js';
import type { StatsdStats } from './statsd.js';

/** What routes declare about themselves to the app's hooks. */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route negotiates nothing: any client gets its answer. */
    anyAccept?: boolean;
    /** The route takes measures (its refusals are counted by reason in /metrics). */
    pushesMeasures?: boolean;
  }
}

export interface AppContext {
  engine: Engine;
  config: Config;
  /** The statsd listener's counts, for `/metrics`, when it runs. */
  statsdStats?: StatsdStats;
}

/** Longest path parameter accepted (a name or id used as a storage key). */
export const MAX_PARAM_LENGTH = 2048;

const METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: ctx.config.logLevel },
    logController: new RequestLog(ctx.config.logLevel),
    bodyLimit: ctx.config.bodyLimit,
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: MAX_PARAM_LENGTH },
    // Errors the router raises before any route runs (a path segment past
    // maxParamLength, bad percent-encoding), in Gnocchi's error shape.
    frameworkErrors: (error, request, reply) => {
      const status = (error as { statusCode?: number }).statusCode ?? 400;
      const description =
        status === 414 ? `A path segment is longer than ${MAX_PARAM_LENGTH} characters` : 'The request path is not valid';
      void sendError(request, reply, status, description);
    },
  });

  // Bodies stay raw: each route checks the media type and decodes as
  // Gnocchi does, with its error messages.
  registerRawBody(app);

  // From the moment a push's headers are read until it is answered (its
  // resources created, its points appended), the pushes noted after it
  // arrived are not processed (engine/reorder-window.ts). A response always
  // closes, when answered or when its connection is lost.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.routeOptions.config?.pushesMeasures === true) reply.raw.once('close', ctx.engine.processor.receiving());
    done();
  });
  app.addHook('onRequest', corsHook(ctx.config.corsOrigins));
  app.addHook('onRequest', authHook(ctx.config));
  app.addHook('onRequest', negotiationHook(ctx.engine));
  // A read with `refresh` includes what any node acknowledged before it:
  // the index writes too, which other nodes' caches hear of asynchronously.
  app.addHook('preHandler', async (request) => {
    if (refreshRequested(request.query as Query)) await ctx.engine.index.sync();
  });
  app.setErrorHandler(errorHandler);
  app.setReplySerializer((payload) => pyJson(payload));
  installProcessingLog(app, ctx.engine, ctx.config.logInterval);
  if (ctx.config.metrics) installSelfMetrics(app, ctx);

  // Answer 405 with `Allow` for the methods a known path does not serve.
  const served = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const set = served.get(route.url) ?? new Set<string>();
    for (const m of methods) set.add(m);
    served.set(route.url, set);
  });

  await registerOpenApi(app);
  await app.register(rootRoutes, ctx);
  await app.register(archivePolicyRoutes, ctx);
  await app.register(archivePolicyRuleRoutes, ctx);
  await app.register(metricRoutes, ctx);
  await app.register(measuresRoutes, ctx);
  await app.register(aggregatesRoutes, ctx);
  await app.register(searchMetricRoutes, ctx);
  await app.register(resourceRoutes, ctx);
  await app.register(searchRoutes, ctx);
  await app.register(influxdbRoutes, ctx);
  await app.register(prometheusRoutes, ctx);
  if (ctx.config.ui) await app.register(uiRoutes);

  for (const [url, methods] of [...served]) {
    if (methods.has('OPTIONS') || url === '*') continue;
    const allow = METHODS.filter((m) => methods.has(m)).join(', ');
    const missing = METHODS.filter((m) => !methods.has(m));
    if (missing.length === 0) continue;
    app.route({
      method: missing,
      url,
      // pecan refuses the method while routing, before it negotiates.
      config: { anyAccept: true },
      handler: async () => {
        throw new HttpError(405, '', { Allow: allow });
      },
    });
  }

  // OPTIONS is answered (empty 200) on every path, as Gnocchi does; CORS
  // preflights for allowed origins are completed by the CORS hook.
  app.options('*', async (_request, reply) => reply.code(200).send());
  app.setNotFoundHandler((request, reply) => sendError(request, reply, 404, null));
  return app;
}

/** An invalid value is the route's to refuse, with its message. */
function refreshRequested(query: Query): boolean {
  try {
    return boolParam(query, 'refresh');
  } catch {
    return false;
  }
}
