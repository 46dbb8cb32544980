/**
 * Where processing puts and removes records. LMDB has one writer at a time,
 * shared by both workers and by the pushes' commits, so a worker computes a
 * batch's writes (merges, encodes, compression) into a queue first and
 * holds the write lock only to apply them; code that already runs inside a
 * write transaction writes directly.
 */
import type { Database, Key } from 'lmdb';

export interface RecordWriter {
  put<K extends Key, V>(db: Database<V, K>, key: K, value: V): void;
  remove<K extends Key>(db: Database<unknown, K>, key: K): void;
}

/** Writes at once: for callers inside a write transaction. */
export const directWrites: RecordWriter = {
  put(db, key, value) {
    void db.put(key, value);
  },
  remove(db, key) {
    void db.remove(key);
  },
};

/** Writes kept in order, applied later inside a write transaction. */
export class WriteQueue implements RecordWriter {
  private readonly dbs: Database<unknown, Key>[] = [];
  private readonly keys: Key[] = [];
  /** `undefined`: a removal. */
  private readonly values: unknown[] = [];

  put<K extends Key, V>(db: Database<V, K>, key: K, value: V): void {
    this.dbs.push(db as Database<unknown, Key>);
    this.keys.push(key);
    this.values.push(value);
  }

  remove<K extends Key>(db: Database<unknown, K>, key: K): void {
    this.dbs.push(db as Database<unknown, Key>);
    this.keys.push(key);
    this.values.push(undefined);
  }

  /** Applies the writes in the order they were queued; inside a write transaction. */
  apply(): void {
    for (let i = 0; i < this.dbs.length; i++) {
      const value = this.values[i];
      if (value === undefined) void this.dbs[i]!.remove(this.keys[i]!);
      else void this.dbs[i]!.put(this.keys[i]!, value);
    }
  }
}
