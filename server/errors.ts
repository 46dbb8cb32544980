/**
 * The one place where errors become HTTP answers, in the forms Gnocchi's
 * stack gives them: pecan answers `{"code", "title", "description"}` when
 * JSON is the client's first choice among text, HTML and JSON; otherwise
 * WebOb renders its error page as HTML, as its own JSON, or as plain text,
 * whichever of HTML and JSON the client accepts first. `description` is
 * Gnocchi's detail: a string, an object, or empty where Gnocchi gives none
 * (the page still explains the status).
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { BacklogFull, EngineError, EngineUnavailable, type ErrorDescription } from '../engine/errors.js';
import { MAX_STORAGE_KEY_BYTES, StorageKeyTooLong } from '../engine/key-limit.js';
import { acceptableOffers } from '../formats/accept.js';
import { FormatError } from '../formats/errors.js';
import { pyJson, pyRepr } from '../formats/json.js';

interface Page {
  title: string;
  /** What WebOb's page says before the detail; `lead` replaces it where WebOb's template names the request. */
  explanation?: string;
  lead?: (request: FastifyRequest, escape: (text: string) => string) => string;
}

const PAGES: Record<number, Page> = {
  400: { title: 'Bad Request', explanation: 'The server could not comply with the request since it is either malformed or otherwise incorrect.' },
  401: {
    title: 'Unauthorized',
    explanation:
      'This server could not verify that you are authorized to access the document you requested. Either you supplied the ' +
      'wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.',
  },
  403: { title: 'Forbidden', explanation: 'Access was denied to this resource.' },
  404: { title: 'Not Found', explanation: 'The resource could not be found.' },
  405: { title: 'Method Not Allowed', lead: (r, e) => `The method ${e(r.method)} is not allowed for this resource. <br /><br />\n` },
  406: {
    title: 'Not Acceptable',
    lead: (r, e) => `The resource could not be generated that was acceptable to your browser\n(content of type ${e(r.headers.accept ?? '')}. <br /><br />\n`,
  },
  409: { title: 'Conflict', explanation: 'There was a conflict when trying to complete your request.' },
  412: { title: 'Precondition Failed', explanation: 'Request precondition failed.' },
  413: { title: 'Request Entity Too Large', explanation: 'The body of your request was too large for this server.' },
  414: { title: 'Request-URI Too Long', explanation: 'The request URI was too long for this server.' },
  415: {
    title: 'Unsupported Media Type',
    lead: (r, e) => `The request media type ${e(r.headers['content-type'] ?? '')} is not supported by this server.\n<br /><br />\n`,
  },
  500: { title: 'Internal Server Error', explanation: 'The server has either erred or is incapable of performing the requested operation.' },
  501: { title: 'Not Implemented', lead: (r, e) => `\nThe request method ${e(r.method)} is not implemented for this server. <br /><br />\n` },
  503: { title: 'Service Unavailable', explanation: 'The server is currently unavailable. Please try again at a later time.' },
  507: { title: 'Insufficient Storage', explanation: 'There was not enough space to save the resource' },
};

/**
 * The engine refuses keys over its limit when writing (StorageKeyTooLong,
 * engine/key-limit.ts), and lmdb-js cannot even encode a lookup key of more
 * than about 4 KB ("String does not fit in target buffer", a RangeError, or
 * StorageKeyTooLong from the UUID key encoders): either way a name or id
 * from the request is too long to be a storage key.
 */
function isStorageKeyTooLong(error: Error): boolean {
  return error instanceof StorageKeyTooLong || (error instanceof RangeError && error.message === 'String does not fit in target buffer');
}

/** An HTTP-level refusal (auth, negotiation) raised by the server itself. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly description: ErrorDescription | null,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof description === 'string' ? description : JSON.stringify(description));
  }
}

export const unauthorized = () => new HttpError(401, '');

export const forbidden = () => new HttpError(403, '');

const escapeHtml = (text: string) =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#x27;')
    .replace(/[^\x00-\x7f]/gu, (c) => `&#${c.codePointAt(0)};`);

/** WebOb's page body: the explanation (or its template's sentence), then the detail. */
function pageBody(request: FastifyRequest, page: Page, detail: string, escape: (text: string) => string): string {
  if (page.lead !== undefined) return page.lead(request, escape) + escape(detail);
  return `${escape(page.explanation ?? '')}<br /><br />\n${escape(detail)}\n\n`;
}

/** WebOb's plain text: line breaks become spaces, `<br />` line breaks, other tags vanish. */
const stripTags = (html: string) =>
  html.replace(/\n/g, ' ').replace(/\r/g, '').replace(/<br.*?>/gis, '\n').replace(/<!--|-->/g, '').replace(/<.*?>/gs, '');

const PECAN_OFFERS = ['text/plain', 'text/html', 'application/json'];
const WEBOB_OFFERS = ['text/html', 'application/json'];

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  description: ErrorDescription | null,
): FastifyReply {
  const page = PAGES[status] ?? { title: 'Error' };
  const accept = request.headers.accept;
  reply.code(status);
  // pecan reads an absent header as */*, WebOb as one that accepts nothing.
  if (acceptableOffers(accept || '*/*', PECAN_OFFERS)[0] === 'application/json') {
    return reply.type('application/json').send(pyJson({ code: status, title: page.title, description }));
  }
  const detail = description === null ? '' : typeof description === 'string' ? description : pyRepr(description);
  const statusLine = `${status} ${page.title}`;
  switch (acceptableOffers(accept ?? '', WEBOB_OFFERS)[0]) {
    case 'text/html':
      return reply
        .type('text/html; charset=UTF-8')
        .send(
          `<html>\n <head>\n  <title>${statusLine}</title>\n </head>\n <body>\n  <h1>${statusLine}</h1>\n  ` +
            `${pageBody(request, page, detail, escapeHtml)}\n </body>\n</html>`,
        );
    case 'application/json':
      return reply
        .type('application/json')
        .send(pyJson({ message: pageBody(request, page, detail, (t) => t), code: statusLine, title: page.title }));
    default:
      return reply.type('text/plain; charset=UTF-8').send(`${statusLine}\n\n${stripTags(pageBody(request, page, detail, (t) => t))}`);
  }
}

export function errorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof HttpError) {
    reply.headers(error.headers);
    return sendError(request, reply, error.status, error.description);
  }
  if (error instanceof BacklogFull || error instanceof EngineUnavailable) reply.header('Retry-After', String(error.retryAfterSeconds));
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
      return sendError(request, reply, 404, PAGES[404]!.explanation!);
    }
    return sendError(request, reply, 400, { cause: 'Invalid input', reason: 'value too long to be stored', detail: [] });
  }
  const status = (error as FastifyError).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return sendError(request, reply, status, error.message);
  }
  request.log.error({ err: error }, 'unhandled error');
  return sendError(request, reply, 500, PAGES[500]!.explanation!);
}
