/**
 * Whether a client gets an answer it accepts. Gnocchi's framework (pecan)
 * answers 406 to a client that accepts no JSON, but only once its routing
 * has found the handler: the objects its routing looks up on the way answer
 * 404 (or 401) whatever the client accepts, so a missing metric is "not
 * found" even to `Accept: text/plain`.
 */
import type { FastifyRequest } from 'fastify';
import type { Engine } from '../engine/engine.js';
import { NoSuchArchivePolicyRule } from '../engine/errors.js';
import { acceptableOffers } from '../formats/accept.js';
import { identify } from './auth.js';
import { HttpError } from './errors.js';
import { findMetric } from './routes/metric.js';
import { findNamedMetric } from './routes/resource.js';

const JSON_TYPE = 'application/json';

/** pecan's test for a JSON handler, `startswith` fallback included (it lets `application/json; charset=utf-8` in). */
export function acceptsJson(accept: string | undefined): boolean {
  const value = accept || '*/*';
  // The usual headers (`*/*`, `application/json...`) settle it without parsing: every request passes here.
  return value === '*/*' || value.startsWith(JSON_TYPE) || acceptableOffers(value, [JSON_TYPE]).length > 0;
}

type Params = Record<string, string>;

/** Gnocchi's `_lookup` steps, by the route prefix they serve, in routing order. */
const LOOKUPS: [prefix: string, lookup: (engine: Engine, params: Params, request: FastifyRequest) => Promise<unknown>][] = [
  ['/v1/archive_policy_rule/:name', async (engine, p) => {
    if ((await engine.index.getRule(p.name!)) === undefined) throw new NoSuchArchivePolicyRule(p.name!);
  }],
  ['/v1/metric/:id', (engine, p) => findMetric(engine, p.id!)],
  ['/v1/resource/:type', (engine, p) => engine.index.getType(p.type!)],
  ['/v1/resource/:type/:id/metric/:name', (engine, p, request) => findNamedMetric(engine, identify(request), { type: p.type!, id: p.id!, name: p.name! })],
  ['/v1/search/resource/:type', (engine, p) => engine.index.getType(p.type!)],
  ['/v1/aggregation/resource/:type/metric/:name', (engine, p) => engine.index.getType(p.type!)],
];

/** Routes that negotiate nothing set `config.anyAccept`. */
export function negotiationHook(engine: Engine) {
  return async (request: FastifyRequest) => {
    const options = request.routeOptions;
    // A DELETE answers no body: nothing to negotiate (Gnocchi's 406 to `Accept: application/json` there is a fault).
    if (request.is404 || options.config.anyAccept === true || request.method === 'DELETE' || acceptsJson(request.headers.accept)) return;
    const url = options.url ?? '';
    for (const [prefix, lookup] of LOOKUPS) {
      if (url === prefix || url.startsWith(`${prefix}/`)) await lookup(engine, request.params as Params, request);
    }
    throw new HttpError(406, null);
  };
}
