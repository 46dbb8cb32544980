/**
 * Split objects in an S3-compatible store (Ceph RGW, Swift's s3api), through
 * the AWS SDK. Loaded only when `--splits` is an s3:// URL: the SDK costs
 * each thread that loads it a noticeable start.
 *
 * Every request has a connection, a response and an inactivity timeout
 * and at most one retry, so a store that is down, stalled or erroring fails the call within
 * seconds as EngineUnavailable (503 + Retry-After), never a hang; the
 * client keeps no broken state, and the next call after the store is back
 * succeeds. Requests run a bounded number at a time per call.
 *
 * The SDK sends a CRC32 checksum instead of Content-MD5 since 2025, and
 * Swift 2.30's s3api refuses a multi-object delete without Content-MD5:
 * checksums are computed only where the API requires one, and DeleteObjects
 * gets its MD5 (RGW takes it too).
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type ListObjectsV2CommandOutput,
} from '@aws-sdk/client-s3';
import { EngineUnavailable } from '../../errors.js';
import { ObjectCache } from './object-cache.js';
import type { SplitObjects } from './objects.js';
import { parseObjectStoreUrl, type ObjectStoreLocation } from './url.js';

export interface ObjectStoreOptions {
  /** Milliseconds a connection attempt may take (default 2000). */
  connectTimeoutMs?: number;
  /** Milliseconds a request may wait for its response (default 10000). */
  requestTimeoutMs?: number;
  /** Requests one call keeps in flight (default 16). */
  concurrency?: number;
}

/** Requests made (cache hits are GETs saved), for benchmarks and tests. */
export interface ObjectStoreCounters {
  puts: number;
  gets: number;
  cacheHits: number;
  deletes: number;
  lists: number;
}

/**
 * Keys per DeleteObjects (the API takes up to 1,000), and such requests in
 * flight. The stores delete the keys one by one (Swift's proxy ~35 ms of
 * CPU each, in one process): 1,000 keys took RGW over 10 s on a busy
 * machine, and 16 requests of 100 kept Swift's last ones queued past the
 * request timeout.
 */
const DELETE_BATCH = 50;
const DELETES_IN_FLIGHT = 2;

/** Milliseconds the requests of ensureBucket may take: Ceph creates pools on a new bucket's first requests. */
const SETUP_TIMEOUT_MS = 60_000;

/**
 * `err` as EngineUnavailable when the store did not answer, answered 5xx or
 * 429, or said the bucket is missing (made at start-up: Swift says so while
 * its container server is still starting); otherwise as it is.
 */
export function storeFailure(err: unknown): unknown {
  if (err instanceof EngineUnavailable || !(err instanceof Error)) return err;
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  // No HTTP status: the request got no answer (refused, reset, timed out).
  if (status === undefined || status >= 500 || status === 429 || err.name === 'NoSuchBucket') {
    return new EngineUnavailable('object store', `${err.name}: ${err.message}`);
  }
  return err;
}

/** The object is missing (a missing bucket is the store's failure, see storeFailure). */
function isNotFound(err: unknown): boolean {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404 && (err as Error).name !== 'NoSuchBucket';
}

/** Runs `task` over `items`, `limit` at a time; rejects with the first failure once the tasks started have settled. */
async function eachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const lane = async () => {
    while (next < items.length && failure === undefined) {
      const item = items[next++]!;
      try {
        await task(item);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure !== undefined) throw failure.err;
}

export class S3SplitObjects implements SplitObjects {
  readonly counters: ObjectStoreCounters = { puts: 0, gets: 0, cacheHits: 0, deletes: 0, lists: 0 };
  private readonly cache: ObjectCache;
  private readonly concurrency: number;

  constructor(
    private readonly client: S3Client,
    readonly location: ObjectStoreLocation,
    options: ObjectStoreOptions = {},
  ) {
    this.cache = new ObjectCache(location.cacheBytes);
    this.concurrency = options.concurrency ?? 16;
  }

  get bucket(): string {
    return this.location.bucket;
  }

  /**
   * Creates the bucket unless this account has it already, then writes and
   * deletes a probe object: a node finds out at start-up that it cannot
   * write, and Ceph creates its data pool then (a first write into a new
   * bucket can take seconds), not under the first commit.
   */
  async ensureBucket(): Promise<void> {
    const slow = { requestTimeout: SETUP_TIMEOUT_MS };
    try {
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }), slow);
    } catch (err) {
      if ((err as Error).name !== 'BucketAlreadyOwnedByYou') throw storeFailure(err);
    }
    const probe = `probe/${randomBytes(8).toString('hex')}`;
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: probe, Body: 'probe' }), slow);
      await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: [{ Key: probe }], Quiet: true } }), slow);
    } catch (err) {
      throw storeFailure(err);
    }
  }

  async put(objects: ReadonlyMap<string, Uint8Array>): Promise<void> {
    await eachLimited([...objects], this.concurrency, async ([name, bytes]) => {
      this.counters.puts++;
      try {
        await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: name, Body: bytes }));
      } catch (err) {
        throw storeFailure(err);
      }
    });
  }

  async get(names: readonly string[]): Promise<Map<string, Buffer | undefined>> {
    const out = new Map<string, Buffer | undefined>();
    const missed: string[] = [];
    for (const name of new Set(names)) {
      const cached = this.cache.get(name);
      if (cached === undefined) missed.push(name);
      else {
        this.counters.cacheHits++;
        out.set(name, cached);
      }
    }
    await eachLimited(missed, this.concurrency, async (name) => {
      this.counters.gets++;
      try {
        const answer = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: name }));
        const bytes = Buffer.from(await answer.Body!.transformToByteArray());
        this.cache.set(name, bytes);
        out.set(name, bytes);
      } catch (err) {
        if (!isNotFound(err)) throw storeFailure(err);
        out.set(name, undefined);
      }
    });
    return out;
  }

  async delete(names: readonly string[]): Promise<void> {
    const batches: string[][] = [];
    for (let i = 0; i < names.length; i += DELETE_BATCH) batches.push(names.slice(i, i + DELETE_BATCH) as string[]);
    await eachLimited(batches, DELETES_IN_FLIGHT, async (batch) => {
      this.counters.deletes++;
      let answer;
      try {
        answer = await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }));
      } catch (err) {
        throw storeFailure(err);
      }
      const failed = (answer.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (failed.length > 0) {
        throw new EngineUnavailable('object store', `${failed.length} of ${batch.length} deletes refused, first ${failed[0]!.Key}: ${failed[0]!.Code} ${failed[0]!.Message}`);
      }
    });
  }

  async list(prefix: string, visit: (names: string[]) => Promise<void>): Promise<void> {
    let token: string | undefined;
    do {
      this.counters.lists++;
      let page: ListObjectsV2CommandOutput;
      try {
        page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ...(token === undefined ? {} : { ContinuationToken: token }) }));
      } catch (err) {
        throw storeFailure(err);
      }
      const names = (page.Contents ?? []).map((o) => o.Key!);
      if (names.length > 0) await visit(names);
      token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  close(): void {
    this.client.destroy();
  }
}

/** A client of the store `url` names (see url.ts); nothing is sent until the first call. */
export function s3SplitObjects(url: string, options: ObjectStoreOptions = {}): S3SplitObjects {
  const location = parseObjectStoreUrl(url);
  // The version is pinned on purpose (the last line that runs on Node 20): its notice that later ones need Node 22 is noise.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const client = new S3Client({
    endpoint: location.endpoint,
    region: location.region,
    forcePathStyle: true,
    credentials: { accessKeyId: location.accessKeyId, secretAccessKey: location.secretAccessKey },
    // requestTimeout bounds a request from its start to the response; socketTimeout any silence after (a body stalled half-way).
    requestHandler: {
      connectionTimeout: options.connectTimeoutMs ?? 2000,
      requestTimeout: options.requestTimeoutMs ?? 10_000,
      throwOnRequestTimeout: true,
      socketTimeout: options.requestTimeoutMs ?? 10_000,
    },
    maxAttempts: 2,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const request = args.request as { headers?: Record<string, string>; body?: unknown };
      if (context.commandName === 'DeleteObjectsCommand' && typeof request.body === 'string' && request.headers !== undefined) {
        request.headers['content-md5'] = createHash('md5').update(request.body).digest('base64');
      }
      return next(args);
    },
    { step: 'build', name: 'gnocchiContentMd5' },
  );
  return new S3SplitObjects(client, location, options);
}
