/** /v1/search/resource/{type}: resource search, JSON body or STRING `filter`. */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app.js';
import { identify } from '../auth.js';
import { HttpError } from '../errors.js';
import { narrowed, resourcePolicyFilter } from '../policy-filter.js';
import { listResources, readResourceFilter } from './resource.js';

interface TypeParams {
  type: string;
}

export async function searchRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { engine, config } = ctx;
  const urls = { proxyHeaders: config.proxyHeaders };

  app.post<{ Params: TypeParams }>('/v1/search/resource/:type', async (request, reply) => {
    const who = identify(request);
    engine.resources.getType(request.params.type);
    const filter = narrowed(resourcePolicyFilter(who, 'search resource', request.params.type), readResourceFilter(request, who));
    return listResources(engine, request, reply, urls, config.maxLimit, request.params.type, filter);
  });

  // An unknown type is a 404 whatever the method, as Gnocchi looks it up first.
  app.get<{ Params: TypeParams }>('/v1/search/resource/:type', { config: { anyAccept: true } }, async (request) => {
    engine.resources.getType(request.params.type);
    throw new HttpError(405, '', { Allow: 'POST' });
  });
}
