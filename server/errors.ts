/**
 * The one place where errors become HTTP answers, in Gnocchi's body shape:
 * `{"code": N, "title": "...", "description": ...}`.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { EngineError, type ErrorDescription } from '../engine/errors.js';
import { FormatError } from '../formats/errors.js';
import { pyJson } from '../formats/json.js';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  507: 'Insufficient Storage',
};

/** An HTTP-level refusal (auth, negotiation) raised by the server itself. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly description: ErrorDescription,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof description === 'string' ? description : JSON.stringify(description));
  }
}

export const unauthorized = () =>
  new HttpError(
    401,
    'This server could not verify that you are authorized to access the document you requested. ' +
      'Either you supplied the wrong credentials (e.g., bad password), or your browser does not ' +
      'understand how to supply the credentials required.',
  );

export const forbidden = () => new HttpError(403, 'Access was denied to this resource.');

export function sendError(reply: FastifyReply, status: number, description: ErrorDescription): FastifyReply {
  return reply
    .code(status)
    .type('application/json')
    .send(pyJson({ code: status, title: TITLES[status] ?? 'Error', description }));
}

export function errorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof HttpError) {
    reply.headers(error.headers);
    return sendError(reply, error.status, error.description);
  }
  if (error instanceof EngineError) return sendError(reply, error.status, error.description);
  if (error instanceof FormatError) return sendError(reply, 400, error.message);
  const status = (error as FastifyError).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return sendError(reply, status, error.message);
  }
  request.log.error({ err: error }, 'unhandled error');
  return sendError(reply, 500, 'The server encountered an unexpected condition which prevented it from fulfilling the request.');
}
