/** /v1/search/resource/{type}: resource search, JSON body or STRING `filter`. */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app.js';
import { identify } from '../auth.js';
import { HttpError } from '../errors.js';
import { errors, FILTER_BODY, FILTER_QUERY, json, listOf, params, query, ref, RESOURCE_LIST_QUERY } from '../openapi-schemas.js';
import { narrowed, resourcePolicyFilter } from '../policy-filter.js';
import { listResources, readResourceFilter } from './resource.js';

interface TypeParams {
  type: string;
}

export async function searchRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { engine, config } = ctx;
  const urls = { proxyHeaders: config.proxyHeaders };

  app.post<{ Params: TypeParams }>('/v1/search/resource/:type', {
    schema: {
      summary: 'Search resources',
      description: 'The filter is the JSON body, or the STRING form in `filter` with an empty body; none lists every resource.',
      tags: ['search'],
      operationId: 'searchResources',
      params: params({ type: 'Resource type (`generic` for every type)' }),
      querystring: query({ ...FILTER_QUERY, ...RESOURCE_LIST_QUERY }),
      body: FILTER_BODY,
      response: {
        200: json('A page of matching resources', listOf(ref('ResourceAttributes')), ['Link']),
        ...errors(400, 401, 403, 404, 406, 413, 415),
      },
    },
  }, async (request, reply) => {
    const who = identify(request);
    await engine.index.getType(request.params.type);
    const filter = narrowed(resourcePolicyFilter(who, 'search resource', request.params.type), readResourceFilter(request, who));
    return listResources(engine, request, reply, urls, config.maxLimit, request.params.type, filter);
  });

  // An unknown type is a 404 whatever the method, as Gnocchi looks it up first.
  app.get<{ Params: TypeParams }>('/v1/search/resource/:type', { config: { anyAccept: true } }, async (request) => {
    await engine.index.getType(request.params.type);
    throw new HttpError(405, '', { Allow: 'POST' });
  });
}
