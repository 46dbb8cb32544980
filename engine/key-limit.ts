/**
 * The longest key the embedded engine stores, whatever the page size of
 * its LMDB file. LMDB's own limit grows with the page size (lmdb-js: 1978
 * bytes at 4 KB pages, 4026 at 8 KB), so a name the engine refused in a
 * directory made with 4 KB pages would be taken in one made with 8 KB:
 * the engine keeps 1978 in every directory, and a name or id from a
 * request is accepted or refused the same everywhere.
 *
 * The limit is on the bytes of the key as its database encodes it (names
 * of archive policies, rules and resource types alone; a metric's name
 * after its resource's UUID; a type's name before a revision_start and a
 * UUID), checked where lmdb-js checks its own: writes, and the end of a
 * key range. A lookup of a longer key finds nothing, as before. Every
 * database has the check, but only names come near the limit: resource
 * ids become UUIDs (resource-id.ts), and the value indexes keep at most
 * 200 characters of a value (resource-index-keys.ts).
 *
 * Cluster mode keeps its names in PostgreSQL, which takes longer ones (a
 * 3,000-byte policy name: 201 there, 400 here): the limit is this mode's,
 * and cluster answers stay as they were.
 */
import type { Database, Key, RangeOptions } from 'lmdb';

/** lmdb-js' largest key at LMDB's default 4 KB pages (its DEFAULT_MAX_KEY_SIZE): every directory's limit before 8 KB pages. */
export const MAX_STORAGE_KEY_BYTES = 1978;

/**
 * A key over MAX_STORAGE_KEY_BYTES, or one that does not fit in the buffer
 * lmdb-js encodes it in (about 4 KB for a lookup): the HTTP API answers it
 * as a name or id too long to be stored (server/errors.ts).
 */
export class StorageKeyTooLong extends RangeError {
  constructor() {
    super(`Key over the ${MAX_STORAGE_KEY_BYTES} bytes of a storage key`);
  }
}

/** What lmdb-js sets on each database: the encoding of its keys (its keyEncoder's, or ordered-binary). */
interface KeyWriting {
  writeKey(key: unknown, target: Uint8Array, position: number): number;
}

/**
 * Room for any key within the limit (ordered-binary wants three bytes a
 * character of a string before it writes it), in a buffer of its own whose
 * length is a multiple of 4, as ordered-binary's DataView over it wants.
 */
const scratch = Buffer.allocUnsafeSlow(8192);

/** Throws StorageKeyTooLong when `key`, as `db` encodes it, is over the limit (or does not fit the scratch at all). */
export function checkKeyLength(db: KeyWriting, key: unknown): void {
  let end: number;
  try {
    end = db.writeKey(key, scratch, 0);
  } catch (error) {
    if (error instanceof RangeError) throw new StorageKeyTooLong();
    throw error;
  }
  if (end > MAX_STORAGE_KEY_BYTES) throw new StorageKeyTooLong();
}

/**
 * `db` with MAX_STORAGE_KEY_BYTES checked where lmdb-js checks its own
 * largest key: the key of a put, remove or conditional write, and the end
 * of a range (getKeys, getCount and getValues go through getRange). A range
 * of a dupSort key's values bounds values, not keys: left to lmdb-js.
 */
export function limitKeyLength<V, K extends Key>(db: Database<V, K>): Database<V, K> {
  const writing = db as unknown as KeyWriting;
  const check = (key: unknown) => {
    if (key !== undefined) checkKeyLength(writing, key);
  };
  const { put, remove, ifVersion, getRange } = db;
  db.put = function (this: Database<V, K>, key: K, ...rest: unknown[]) {
    check(key);
    return (put as (...args: unknown[]) => Promise<boolean>).call(this, key, ...rest);
  } as Database<V, K>['put'];
  db.remove = function (this: Database<V, K>, key: K, ...rest: unknown[]) {
    check(key);
    return (remove as (...args: unknown[]) => Promise<boolean>).call(this, key, ...rest);
  } as Database<V, K>['remove'];
  db.ifVersion = function (this: Database<V, K>, key: K, ...rest: unknown[]) {
    check(key);
    return (ifVersion as (...args: unknown[]) => Promise<boolean>).call(this, key, ...rest);
  } as Database<V, K>['ifVersion'];
  db.getRange = function (this: Database<V, K>, options?: RangeOptions & { valuesForKey?: boolean }) {
    if (options !== undefined && !options.valuesForKey) check(options.end);
    return getRange.call(this, options);
  } as Database<V, K>['getRange'];
  return db;
}
