/** /v1/archive_policy */
import type { FastifyInstance } from 'fastify';
import { parseArchivePolicy, patchArchivePolicy, policyToJson } from '../../engine/archive-policy.js';
import { NoSuchArchivePolicy } from '../../engine/errors.js';
import type { AppContext } from '../app.js';
import { identify } from '../auth.js';
import { readJsonBody, setLocation } from '../http.js';
import { errors, json, jsonBody, listOf, params, ref, empty } from '../openapi-schemas.js';
import { enforce } from '../policy.js';

interface NameParams {
  name: string;
}

const TAGS = ['archive policies'];
const NAME = params({ name: 'Archive policy name' });
const ITEM = {
  type: 'object',
  description: 'At least two of granularity, points, timespan; the third is computed',
  properties: {
    granularity: { type: ['string', 'number'], description: 'Seconds or a timespan (`5 minutes`, `1h`)' },
    points: { type: 'integer', minimum: 1 },
    timespan: { type: ['string', 'number'], description: 'Seconds or a timespan (`30 days`)' },
  },
};
const DEFINITION = { type: 'array', items: ITEM, minItems: 1 };

export async function archivePolicyRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { index } = ctx.engine;
  const urls = { proxyHeaders: ctx.config.proxyHeaders };

  app.post('/v1/archive_policy', {
    schema: {
      summary: 'Create an archive policy',
      tags: TAGS,
      operationId: 'createArchivePolicy',
      body: jsonBody({
        type: 'object',
        properties: {
          name: { type: 'string' },
          definition: DEFINITION,
          back_window: { type: 'integer', minimum: 0 },
          aggregation_methods: {
            type: 'array',
            items: { type: 'string' },
            description: 'Methods, or `+method`/`-method` changes to the default list; `*` is every method',
          },
        },
        required: ['name', 'definition'],
      }),
      response: { 201: json('Created', ref('ArchivePolicy'), ['Location']), ...errors(400, 401, 403, 406, 409, 413, 415) },
    },
  }, async (request, reply) => {
    const who = identify(request);
    enforce('create archive policy', who);
    const policy = parseArchivePolicy(readJsonBody(request), ctx.config.defaultAggregationMethods);
    await index.createPolicy(policy);
    setLocation(reply, request, urls, `/v1/archive_policy/${policy.name}`);
    return reply.code(201).send(policyToJson(policy));
  });

  app.get('/v1/archive_policy', {
    schema: {
      summary: 'List archive policies',
      tags: TAGS,
      operationId: 'listArchivePolicies',
      response: { 200: json('Every policy', listOf(ref('ArchivePolicy'))), ...errors(401, 403, 406) },
    },
  }, async (request) => {
    enforce('list archive policy', identify(request));
    return (await index.listPolicies()).map(policyToJson);
  });

  app.get<{ Params: NameParams }>('/v1/archive_policy/:name', {
    schema: {
      summary: 'Get an archive policy',
      tags: TAGS,
      operationId: 'getArchivePolicy',
      params: NAME,
      response: { 200: json('The policy', ref('ArchivePolicy')), ...errors(401, 403, 404, 406) },
    },
  }, async (request) => {
    enforce('get archive policy', identify(request));
    const policy = await index.getPolicy(request.params.name);
    if (policy === undefined) throw new NoSuchArchivePolicy(request.params.name);
    return policyToJson(policy);
  });

  app.patch<{ Params: NameParams }>('/v1/archive_policy/:name', {
    schema: {
      summary: 'Change the definition or back window of an archive policy',
      description: 'Granularities cannot be changed, added or dropped; only points and timespans.',
      tags: TAGS,
      operationId: 'updateArchivePolicy',
      params: NAME,
      body: jsonBody({ type: 'object', properties: { definition: DEFINITION, back_window: { type: 'integer', minimum: 0 } } }),
      response: { 200: json('The updated policy', ref('ArchivePolicy')), ...errors(400, 401, 403, 404, 406, 413, 415) },
    },
  }, async (request) => {
    const who = identify(request);
    const { name } = request.params;
    if ((await index.getPolicy(name)) === undefined) throw new NoSuchArchivePolicy(name);
    enforce('update archive policy', who);
    const body = readJsonBody(request);
    return policyToJson(await index.updatePolicy(name, (current) => patchArchivePolicy(current, body)));
  });

  app.delete<{ Params: NameParams }>('/v1/archive_policy/:name', {
    schema: {
      summary: 'Delete an archive policy no metric uses',
      tags: TAGS,
      operationId: 'deleteArchivePolicy',
      params: NAME,
      response: { 204: empty('Deleted'), ...errors(400, 401, 403, 404) },
    },
  }, async (request, reply) => {
    enforce('delete archive policy', identify(request));
    await index.deletePolicy(request.params.name);
    return reply.code(204).send();
  });
}
