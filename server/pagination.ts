/** `limit`/`marker` options and the `Link: rel="next"` header, as Gnocchi builds them. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ArgumentError } from '../engine/errors.js';
import { baseUrl, queryOf, single, type Query, type UrlOptions } from './http.js';

export interface PageOptions {
  limit: number;
  marker?: string;
}

export function pageOptions(query: Query, maxLimit: number): PageOptions {
  const rawLimit = single(query, 'limit');
  let limit = maxLimit;
  if (rawLimit !== undefined) {
    if (!/^\s*[-+]?\d+\s*$/.test(rawLimit)) {
      throw new ArgumentError("expected int for dictionary value @ data['limit']");
    }
    limit = Number.parseInt(rawLimit, 10);
    if (limit < 1) throw new ArgumentError("value must be at least 1 for dictionary value @ data['limit']");
    limit = Math.min(limit, maxLimit);
  }
  const marker = single(query, 'marker');
  return marker === undefined ? { limit } : { limit, marker };
}

/** Python's `urllib.parse.quote_plus`. */
function quotePlus(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

export function setNextLink(
  reply: FastifyReply,
  request: FastifyRequest,
  urls: UrlOptions,
  marker: string,
  limit: number,
  defaultSort: string[] = ['id:asc'],
): void {
  const params = new Map<string, string[]>();
  for (const [k, v] of Object.entries(queryOf(request))) {
    if (v !== undefined) params.set(k, Array.isArray(v) ? v : [v]);
  }
  if (!params.has('sort')) params.set('sort', defaultSort);
  params.set('limit', [String(limit)]);
  params.set('marker', [marker]);
  const query = [...params.keys()]
    .sort()
    .flatMap((k) => params.get(k)!.map((v) => `${quotePlus(k)}=${quotePlus(v)}`))
    .join('&');
  const path = request.url.split('?')[0]!;
  reply.header('Link', `<${baseUrl(request, urls)}${path}?${query}>; rel="next"`);
}
