/**
 * The object store of sealed splits, as `--splits` names it:
 *
 *   s3://ACCESS:SECRET@HOST:PORT/BUCKET[?region=R&cache=BYTES&janitor=SECONDS]
 *   s3+https://…   the same over TLS
 *
 * Path-style addressing (the bucket in the path, as Ceph RGW and Swift's
 * s3api serve it without DNS names per bucket). The access key and secret
 * are percent-encoded where they hold `:`, `@` or `/` (Swift's tempauth keys
 * are `account:user`: `test%3Atester`). Pure: the configuration checks it
 * without loading the S3 client.
 */

export interface ObjectStoreLocation {
  /** http(s)://HOST:PORT */
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** Bytes of split objects each thread keeps by name (write-once names: never stale); 0: none. */
  cacheBytes: number;
  /** Seconds between two sweeps of a shard's objects by its holder (janitor.ts). */
  janitorSeconds: number;
}

export const OBJECT_STORE_SCHEMES = ['s3:', 's3+https:'] as const;

export const DEFAULT_OBJECT_CACHE_BYTES = 32 * 1024 * 1024;
/** A sweep lists every object of the shards swept, and what it looks for (a crash's or a failed delete's leftovers) is rare. */
export const DEFAULT_JANITOR_SECONDS = 3600;

const OPTIONS = ['region', 'cache', 'janitor'];

/** The location `url` names; throws an Error saying what is wrong with it. */
export function parseObjectStoreUrl(url: string): ObjectStoreLocation {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`not a URL: ${url}`);
  }
  if (!(OBJECT_STORE_SCHEMES as readonly string[]).includes(parsed.protocol)) {
    throw new Error(`expected an ${OBJECT_STORE_SCHEMES.map((s) => `${s}//`).join(' or ')} URL, got ${parsed.protocol}//`);
  }
  if (parsed.hostname === '') throw new Error('the object store URL has no host');
  const bucket = decodeURIComponent(parsed.pathname.replace(/^\/+|\/+$/g, ''));
  if (bucket === '') throw new Error('the object store URL names no bucket (s3://ACCESS:SECRET@HOST:PORT/BUCKET)');
  if (bucket.includes('/')) throw new Error(`the bucket is one path segment, got ${bucket}`);
  if (parsed.username === '' || parsed.password === '') throw new Error('the object store URL has no ACCESS:SECRET@ credentials');
  const unknown = [...parsed.searchParams.keys()].filter((k) => !OPTIONS.includes(k));
  if (unknown.length > 0) throw new Error(`unknown option ${unknown.join(', ')} (known: ${OPTIONS.join(', ')})`);
  const count = (name: string, fallback: number, least: number): number => {
    const raw = parsed.searchParams.get(name);
    if (raw === null) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < least) throw new Error(`${name} must be an integer of at least ${least}, got ${raw}`);
    return value;
  };
  return {
    endpoint: `${parsed.protocol === 's3:' ? 'http' : 'https'}://${parsed.host}`,
    bucket,
    accessKeyId: decodeURIComponent(parsed.username),
    secretAccessKey: decodeURIComponent(parsed.password),
    region: parsed.searchParams.get('region') ?? 'us-east-1',
    cacheBytes: count('cache', DEFAULT_OBJECT_CACHE_BYTES, 0),
    janitorSeconds: count('janitor', DEFAULT_JANITOR_SECONDS, 1),
  };
}

/** Whether `url` names an object store (rather than a Redis). */
export function isObjectStoreUrl(url: string): boolean {
  return OBJECT_STORE_SCHEMES.some((scheme) => url.startsWith(`${scheme}//`));
}
