// Request bodies read once into one buffer (server/raw-body.ts): the bytes
// as sent whatever their chunking, the limits, and pooled buffers lent to
// one body at a time.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerRawBody, releaseBody } from '../../server/raw-body.js';

const LIMIT = 1 << 20;

/** The bytes of a body, distinct for every seed. */
const bytesOf = (length: number, seed: number) => Buffer.from(Array.from({ length }, (_, i) => (i * 31 + seed) & 0xff));
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

let app: FastifyInstance;
/** The backing buffer each request's body was read into, in order. */
let backings: ArrayBufferLike[];

beforeEach(async () => {
  backings = [];
  app = Fastify({ bodyLimit: LIMIT });
  registerRawBody(app);
  app.post('/echo', async (request) => {
    const body = request.body as Buffer;
    backings.push(body.buffer);
    const answer = { length: body.length, sha: sha(body) };
    if ((request.query as { release?: string }).release === '1') releaseBody(request);
    return answer;
  });
  await app.ready();
});
afterEach(async () => {
  await app.close();
});

const post = (payload: Buffer | Readable, query = '', headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: `/echo${query}`, headers: { 'content-type': 'application/octet-stream', ...headers }, payload });

/** Splits bytes into chunks of `size`, as a chunked body without a length. */
const chunked = (b: Buffer, size: number) => Readable.from(Array.from({ length: Math.ceil(b.length / size) }, (_, i) => b.subarray(i * size, (i + 1) * size)));

describe('raw body', () => {
  it.each([
    ['small, with a length', 100, false],
    ['pooled size, with a length', 200_000, false],
    ['beyond the pooled sizes, with a length', LIMIT, false],
    ['small, chunked', 100, true],
    ['large, chunked', 300_000, true],
  ])('reads a %s body as sent', async (_name, length, isChunked) => {
    const body = bytesOf(length, 7);
    const res = await post(isChunked ? chunked(body, 65_536) : body, '', isChunked ? { 'transfer-encoding': 'chunked' } : {});
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ length, sha: sha(body) });
  });

  it.each([
    ['with a length', false],
    ['chunked', true],
  ])('refuses a body past the limit %s with 413', async (_name, isChunked) => {
    const body = bytesOf(LIMIT + 1, 1);
    const res = await post(isChunked ? chunked(body, 65_536) : body, '', isChunked ? { 'transfer-encoding': 'chunked' } : {});
    expect(res.statusCode).toBe(413);
  });

  it('reads the next body into a buffer given back, and never into one still lent', async () => {
    const sizes = [200_000, 150_000, 180_000];
    const answers = [];
    for (const [i, length] of sizes.entries()) answers.push((await post(bytesOf(length, i), '?release=1')).json());
    expect(answers).toEqual(sizes.map((length, i) => ({ length, sha: sha(bytesOf(length, i)) })));
    expect(new Set(backings).size).toBe(1);
    // Kept by its route: the next body gets another buffer.
    await post(bytesOf(200_000, 9));
    await post(bytesOf(200_000, 10), '?release=1');
    expect(backings[4]).not.toBe(backings[3]);
  });
});
