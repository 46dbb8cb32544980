/** /v1/archive_policy_rule */
import type { FastifyInstance } from 'fastify';
import { NoSuchArchivePolicyRule } from '../../engine/errors.js';
import type { ArchivePolicyRule } from '../../engine/index.js';
import { checkObject, checkString } from '../../engine/validate.js';
import type { AppContext } from '../app.js';
import { identify } from '../auth.js';
import { readJsonBody, setLocation } from '../http.js';
import { empty, errors, json, jsonBody, listOf, params, ref } from '../openapi-schemas.js';
import { enforce } from '../policy.js';

interface NameParams {
  name: string;
}

const TAGS = ['archive policy rules'];
const NAME = params({ name: 'Rule name' });

function ruleToJson(rule: ArchivePolicyRule) {
  return { name: rule.name, metric_pattern: rule.metricPattern, archive_policy_name: rule.archivePolicyName };
}

export async function archivePolicyRuleRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { index } = ctx.engine;
  const urls = { proxyHeaders: ctx.config.proxyHeaders };

  app.post('/v1/archive_policy_rule', {
    schema: {
      summary: 'Create an archive policy rule',
      description: 'Of the rules matching a new metric\'s name, the one with the longest pattern gives its policy.',
      tags: TAGS,
      operationId: 'createArchivePolicyRule',
      body: jsonBody({
        type: 'object',
        properties: { name: { type: 'string' }, metric_pattern: { type: 'string' }, archive_policy_name: { type: 'string' } },
        required: ['name', 'metric_pattern', 'archive_policy_name'],
      }),
      response: { 201: json('Created', ref('ArchivePolicyRule'), ['Location']), ...errors(400, 401, 403, 406, 409, 413, 415) },
    },
  }, async (request, reply) => {
    const who = identify(request);
    enforce('create archive policy rule', who);
    const body = checkObject(readJsonBody(request), [], { required: ['name', 'metric_pattern', 'archive_policy_name'] });
    const rule = await index.createRule({
      name: checkString(body.name, ['name']),
      metricPattern: checkString(body.metric_pattern, ['metric_pattern']),
      archivePolicyName: checkString(body.archive_policy_name, ['archive_policy_name']),
    });
    setLocation(reply, request, urls, `/v1/archive_policy_rule/${rule.name}`);
    return reply.code(201).send(ruleToJson(rule));
  });

  app.get('/v1/archive_policy_rule', {
    schema: {
      summary: 'List archive policy rules',
      tags: TAGS,
      operationId: 'listArchivePolicyRules',
      response: { 200: json('Every rule, by pattern in reverse order', listOf(ref('ArchivePolicyRule'))), ...errors(401, 403, 406) },
    },
  }, async (request) => {
    enforce('list archive policy rule', identify(request));
    return (await index.listRules()).map(ruleToJson);
  });

  app.get<{ Params: NameParams }>('/v1/archive_policy_rule/:name', {
    schema: {
      summary: 'Get an archive policy rule',
      tags: TAGS,
      operationId: 'getArchivePolicyRule',
      params: NAME,
      response: { 200: json('The rule', ref('ArchivePolicyRule')), ...errors(401, 403, 404, 406) },
    },
  }, async (request) => {
    const who = identify(request);
    const rule = await index.getRule(request.params.name);
    if (rule === undefined) throw new NoSuchArchivePolicyRule(request.params.name);
    enforce('get archive policy rule', who);
    return ruleToJson(rule);
  });

  app.patch<{ Params: NameParams }>('/v1/archive_policy_rule/:name', {
    schema: {
      summary: 'Rename an archive policy rule',
      tags: TAGS,
      operationId: 'renameArchivePolicyRule',
      params: NAME,
      body: jsonBody({ type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }),
      response: { 200: json('The renamed rule', ref('ArchivePolicyRule')), ...errors(400, 401, 403, 404, 406, 413, 415) },
    },
  }, async (request) => {
    const who = identify(request);
    if ((await index.getRule(request.params.name)) === undefined) throw new NoSuchArchivePolicyRule(request.params.name);
    const body = checkObject(readJsonBody(request), [], { required: ['name'] });
    const newName = checkString(body.name, ['name']);
    enforce('update archive policy rule', who);
    return ruleToJson(await index.renameRule(request.params.name, newName));
  });

  app.delete<{ Params: NameParams }>('/v1/archive_policy_rule/:name', {
    schema: {
      summary: 'Delete an archive policy rule',
      tags: TAGS,
      operationId: 'deleteArchivePolicyRule',
      params: NAME,
      response: { 204: empty('Deleted'), ...errors(401, 403, 404) },
    },
  }, async (request, reply) => {
    const who = identify(request);
    if ((await index.getRule(request.params.name)) === undefined) throw new NoSuchArchivePolicyRule(request.params.name);
    enforce('delete archive policy rule', who);
    await index.deleteRule(request.params.name);
    return reply.code(204).send();
  });
}
