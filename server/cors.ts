/**
 * CORS as oslo.middleware answers it for Gnocchi: only configured origins get
 * `Access-Control-Allow-*` headers; preflight requests are answered here.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

export function corsHook(origins: readonly string[]) {
  const allowed = new Set(origins);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const origin = request.headers.origin;
    if (typeof origin !== 'string' || !allowed.has(origin)) return;
    reply.header('Vary', 'Origin');
    reply.header('Access-Control-Allow-Origin', origin);
    reply.header('Access-Control-Allow-Credentials', 'true');
    const wanted = request.headers['access-control-request-method'];
    if (request.method === 'OPTIONS' && typeof wanted === 'string') {
      reply.header('Access-Control-Max-Age', '3600');
      reply.header('Access-Control-Allow-Methods', wanted);
      const headers = request.headers['access-control-request-headers'];
      if (typeof headers === 'string') reply.header('Access-Control-Allow-Headers', headers);
      return reply.code(200).send('');
    }
  };
}
