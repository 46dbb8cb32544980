/**
 * The one place where errors become HTTP answers. Like Gnocchi (webob), a
 * client that accepts JSON gets `{"code": N, "title": "...", "description":
 * ...}`; any other client gets the plain-text page, which carries both the
 * generic explanation of the status and the specific description.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { BacklogFull, EngineError, type ErrorDescription } from '../engine/errors.js';
import { FormatError } from '../formats/errors.js';
import { pyJson, pyRepr } from '../formats/json.js';

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
  414: 'Request-URI Too Long',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  507: 'Insufficient Storage',
};

const EXPLANATIONS: Record<number, string> = {
  400: 'The server could not comply with the request since it is either malformed or otherwise incorrect.',
  404: 'The resource could not be found.',
  409: 'There was a conflict when trying to complete your request.',
  412: 'Condition failed',
  413: 'The request is larger than the server is willing or able to process.',
  414: 'The request URI was too long for this server.',
  500: 'The server has either erred or is incapable of performing the requested operation.',
  501: 'The server has not implemented the requested operation.',
  503: 'The server is currently unavailable. Please try again at a later time.',
  507: 'There was not enough space to save the resource.',
};

/** The longest key, in bytes, LMDB accepts as built by lmdb-js. */
const MAX_STORAGE_KEY_BYTES = 1978;

/**
 * LMDB refuses keys over its size limit when writing ("maximum key size",
 * "Key ... too large"), and lmdb-js cannot even encode a lookup key of more
 * than about 4 KB ("String does not fit in target buffer", a RangeError):
 * either way a name or id from the request is too long to be a storage key.
 */
function isStorageKeyTooLong(error: Error): boolean {
  return /maximum key size|Key (of size \d+ )?was too large/.test(error.message) ||
    (error instanceof RangeError && error.message === 'String does not fit in target buffer');
}

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

function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  return typeof accept === 'string' && /application\/(json|\*)/i.test(accept);
}

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  description: ErrorDescription | null,
): FastifyReply {
  const title = TITLES[status] ?? 'Error';
  reply.code(status);
  if (wantsJson(request)) {
    return reply.type('application/json').send(pyJson({ code: status, title, description }));
  }
  const detail = description === null ? '' : typeof description === 'string' ? description : pyRepr(description);
  const explanation = EXPLANATIONS[status];
  const body =
    explanation === undefined || explanation === detail
      ? `${status} ${title}\n\n${detail}\n\n `
      : `${status} ${title}\n\n${explanation}\n\n ${detail}  `;
  return reply.type('text/plain; charset=UTF-8').send(body);
}

export function errorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof HttpError) {
    reply.headers(error.headers);
    return sendError(request, reply, error.status, error.description);
  }
  if (error instanceof BacklogFull) reply.header('Retry-After', String(error.retryAfterSeconds));
  if (error instanceof EngineError) return sendError(request, reply, error.status, error.description);
  if (error instanceof FormatError) return sendError(request, reply, 400, error.message);
  const code = (error as FastifyError).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE' || code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') {
    const limit = request.routeOptions.bodyLimit;
    const description = code === 'FST_ERR_CTP_BODY_TOO_LARGE' && typeof limit === 'number'
      ? `Request body is larger than the limit of ${limit} bytes`
      : error.message;
    return sendError(request, reply, (error as FastifyError).statusCode ?? 413, description);
  }
  if (isStorageKeyTooLong(error)) {
    // A path segment that long names nothing that could have been stored;
    // otherwise the value came from the body and cannot be stored.
    if (Object.values(request.params ?? {}).some((v) => typeof v === 'string' && Buffer.byteLength(v) > MAX_STORAGE_KEY_BYTES)) {
      return sendError(request, reply, 404, EXPLANATIONS[404]!);
    }
    return sendError(request, reply, 400, { cause: 'Invalid input', reason: 'value too long to be stored', detail: [] });
  }
  const status = (error as FastifyError).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return sendError(request, reply, status, error.message);
  }
  request.log.error({ err: error }, 'unhandled error');
  return sendError(request, reply, 500, EXPLANATIONS[500]!);
}
