/**
 * Request bodies as one Buffer, read once. Fastify's `parseAs: 'buffer'`
 * keeps every chunk the socket gives (~64 KB each) and concatenates them at
 * the end: a second copy of each body into memory fresh from the allocator,
 * and twice its size of garbage, which on a collector's stream of ~600 KB
 * bodies was a tenth of the main thread's time. A body whose length is
 * declared is copied chunk by chunk into one buffer of that length instead;
 * a chunked body, whose length is not known before its end, is still
 * concatenated.
 *
 * The collector routes, done with a body before their first await, give its
 * buffer back (releaseBody) for the next body to be read into: memory
 * already mapped and never garbage. The others let theirs go to the garbage
 * collector as before.
 */
import type { IncomingMessage } from 'node:http';
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';

/** Bodies at least this long are read into pooled buffers (smaller ones cost little either way). */
const POOLED_LEAST = 64 * 1024;
/** Pooled buffers are this long at most (a larger body is allocated for itself). */
const POOLED_MOST = 4 * 1024 * 1024;
/** Pooled buffers are multiples of this: bodies of a collector differ by a few bytes and fit the same. */
const POOLED_STEP = 64 * 1024;
/** Free buffers kept at most (a collector's requests in flight). */
const POOLED_FREE = 8;

/** Free buffers, any order. */
const free: ArrayBufferLike[] = [];
/** The buffers lent to bodies being handled (a body's Buffer is a view of one). */
const lent = new WeakSet<ArrayBufferLike>();

function bodyBuffer(length: number): Buffer {
  if (length < POOLED_LEAST || length > POOLED_MOST) return Buffer.allocUnsafe(length);
  let best = -1;
  for (let i = 0; i < free.length; i++) {
    if (free[i]!.byteLength >= length && (best === -1 || free[i]!.byteLength < free[best]!.byteLength)) best = i;
  }
  const backing = best === -1 ? new ArrayBuffer(Math.ceil(length / POOLED_STEP) * POOLED_STEP) : free.splice(best, 1)[0]!;
  lent.add(backing);
  return Buffer.from(backing, 0, length);
}

/**
 * Gives a request's body buffer back for the next body: its caller must hold
 * no view of it (nor anything that reads it later). A body not read into a
 * pooled buffer, or given back already, is left alone.
 */
export function releaseBody(request: FastifyRequest): void {
  const body = request.body;
  if (!Buffer.isBuffer(body) || !lent.has(body.buffer)) return;
  const backing = body.buffer;
  lent.delete(backing);
  request.body = undefined;
  if (free.length < POOLED_FREE) free.push(backing);
}

/**
 * Reads a request's body, refusing it with Fastify's errors (answered 413
 * by server/errors.ts) as soon as it passes the route's limit, and when it
 * does not have the length it declares.
 */
function readBody(request: FastifyRequest, payload: IncomingMessage, done: (err: Error | null, body?: Buffer) => void): void {
  const limit = request.routeOptions.bodyLimit ?? Infinity;
  const header = request.headers['content-length'];
  const declared = header === undefined ? Number.NaN : Number(header);
  if (declared > limit) {
    done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    return;
  }
  const known = Number.isSafeInteger(declared) && declared >= 0;
  const body = known ? bodyBuffer(declared) : undefined;
  const chunks: Buffer[] = [];
  let received = 0;
  const finish = (err: Error | null, result?: Buffer) => {
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onEnd);
    done(err, result);
  };
  function onData(chunk: Buffer): void {
    const at = received;
    received += chunk.length;
    if (received > limit) return finish(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    if (body === undefined) chunks.push(chunk);
    else if (received <= body.length) chunk.copy(body, at);
  }
  function onEnd(err?: Error & { statusCode?: number }): void {
    if (err != null) {
      if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400;
      return finish(err);
    }
    // Copied even when one chunk: a chunk may be a view of a larger read buffer, which it would keep.
    if (body === undefined) return finish(null, Buffer.concat(chunks, received));
    if (received !== body.length) return finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
    finish(null, body);
  }
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onEnd);
  payload.resume();
}

/** Every body, whatever its media type, as a Buffer (routes check the type and decode). */
export function registerRawBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', readBody);
}
