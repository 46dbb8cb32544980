/** /v1/archive_policy */
import type { FastifyInstance } from 'fastify';
import { parseArchivePolicy, patchArchivePolicy, policyToJson } from '../../engine/archive-policy.js';
import { NoSuchArchivePolicy } from '../../engine/errors.js';
import type { AppContext } from '../app.js';
import { identify } from '../auth.js';
import { readJsonBody, setLocation } from '../http.js';
import { enforce } from '../policy.js';

interface NameParams {
  name: string;
}

export async function archivePolicyRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { index } = ctx.engine;
  const urls = { proxyHeaders: ctx.config.proxyHeaders };

  app.post('/v1/archive_policy', async (request, reply) => {
    const who = identify(request);
    enforce('create archive policy', who);
    const policy = parseArchivePolicy(readJsonBody(request), ctx.config.defaultAggregationMethods);
    await index.createPolicy(policy);
    setLocation(reply, request, urls, `/v1/archive_policy/${policy.name}`);
    return reply.code(201).send(policyToJson(policy));
  });

  app.get('/v1/archive_policy', async (request) => {
    enforce('list archive policy', identify(request));
    return index.listPolicies().map(policyToJson);
  });

  app.get<{ Params: NameParams }>('/v1/archive_policy/:name', async (request) => {
    enforce('get archive policy', identify(request));
    const policy = index.getPolicy(request.params.name);
    if (policy === undefined) throw new NoSuchArchivePolicy(request.params.name);
    return policyToJson(policy);
  });

  app.patch<{ Params: NameParams }>('/v1/archive_policy/:name', async (request) => {
    const who = identify(request);
    const { name } = request.params;
    if (index.getPolicy(name) === undefined) throw new NoSuchArchivePolicy(name);
    enforce('update archive policy', who);
    const body = readJsonBody(request);
    return policyToJson(await index.updatePolicy(name, (current) => patchArchivePolicy(current, body)));
  });

  app.delete<{ Params: NameParams }>('/v1/archive_policy/:name', async (request, reply) => {
    enforce('delete archive policy', identify(request));
    await index.deletePolicy(request.params.name);
    return reply.code(204).send();
  });
}
