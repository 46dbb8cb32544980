/**
 * CORS as oslo.middleware answers it for Gnocchi: only configured origins get
 * `Access-Control-Allow-*` headers, and a preflight only when the method and
 * every requested header are allowed; preflights are answered here.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** oslo.middleware's default `allow_methods` (compared as sent: `get` is not `GET`). */
const ALLOWED_METHODS = new Set(['OPTIONS', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'TRACE', 'PATCH']);
const ALLOWED_HEADERS = new Set(
  [
    // Gnocchi's `allow_headers`.
    'authorization', 'x-auth-token', 'x-subject-token', 'x-user-id', 'x-domain-id', 'x-project-id', 'x-roles',
    // oslo.middleware's simple headers, always allowed.
    'accept', 'accept-language', 'content-type', 'cache-control', 'content-language', 'expires', 'last-modified', 'pragma',
  ],
);

/** The names of `Access-Control-Request-Headers`, trimmed, empty ones dropped (oslo's `_split_header_values`). */
function requestedHeaders(value: string | undefined): string[] {
  return value === undefined ? [] : value.split(',').map((h) => h.trim()).filter((h) => h !== '');
}

function preflightAllowed(method: string, headers: readonly string[]): boolean {
  return ALLOWED_METHODS.has(method) && headers.every((h) => ALLOWED_HEADERS.has(h.toLowerCase()));
}

export function corsHook(origins: readonly string[]) {
  const allowed = new Set(origins);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const origin = request.headers.origin;
    if (typeof origin !== 'string' || !allowed.has(origin)) return;
    const wanted = request.headers['access-control-request-method'];
    if (request.method === 'OPTIONS' && typeof wanted === 'string') {
      const raw = request.headers['access-control-request-headers'];
      const asked = requestedHeaders(typeof raw === 'string' ? raw : undefined);
      if (preflightAllowed(wanted, asked)) {
        reply.header('Vary', 'Origin');
        reply.header('Access-Control-Allow-Origin', origin);
        reply.header('Access-Control-Allow-Credentials', 'true');
        reply.header('Access-Control-Max-Age', '3600');
        reply.header('Access-Control-Allow-Methods', wanted);
        if (asked.length > 0) reply.header('Access-Control-Allow-Headers', asked.join(','));
      }
      // An empty answer without a Content-Type, as oslo's NoContentTypeResponse.
      return reply.code(200).send();
    }
    reply.header('Vary', 'Origin');
    reply.header('Access-Control-Allow-Origin', origin);
    reply.header('Access-Control-Allow-Credentials', 'true');
  };
}
