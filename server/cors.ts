/**
 * CORS as oslo.middleware answers it for Gnocchi: only configured origins get
 * `Access-Control-Allow-*` headers, and a preflight only when the method and
 * every requested header are allowed; preflights are answered here.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

const ALLOWED_METHODS = new Set(['GET', 'PUT', 'POST', 'DELETE', 'PATCH']);
const ALLOWED_HEADERS = new Set(
  [
    'authorization', 'x-auth-token', 'x-subject-token', 'x-user-id', 'x-domain-id', 'x-project-id', 'x-roles',
    // The CORS "simple" headers are always allowed.
    'cache-control', 'content-language', 'content-type', 'expires', 'last-modified', 'pragma', 'accept',
  ],
);

function preflightAllowed(method: string, headers: string | undefined): boolean {
  if (!ALLOWED_METHODS.has(method)) return false;
  if (headers === undefined) return true;
  return headers
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .every((h) => h === '' || ALLOWED_HEADERS.has(h));
}

export function corsHook(origins: readonly string[]) {
  const allowed = new Set(origins);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const origin = request.headers.origin;
    if (typeof origin !== 'string' || !allowed.has(origin)) return;
    const wanted = request.headers['access-control-request-method'];
    if (request.method === 'OPTIONS' && typeof wanted === 'string') {
      const headers = request.headers['access-control-request-headers'];
      const asked = typeof headers === 'string' ? headers : undefined;
      if (preflightAllowed(wanted, asked)) {
        reply.header('Vary', 'Origin');
        reply.header('Access-Control-Allow-Origin', origin);
        reply.header('Access-Control-Allow-Credentials', 'true');
        reply.header('Access-Control-Max-Age', '3600');
        reply.header('Access-Control-Allow-Methods', wanted);
        if (asked !== undefined) reply.header('Access-Control-Allow-Headers', asked);
      }
      return reply.code(200).send('');
    }
    reply.header('Vary', 'Origin');
    reply.header('Access-Control-Allow-Origin', origin);
    reply.header('Access-Control-Allow-Credentials', 'true');
  };
}
