/**
 * Where processing puts and removes records. A store commits a batch's
 * writes at once (LMDB has one writer at a time, shared by both workers and
 * by the pushes' commits; a network store takes them in one round trip), so
 * a worker computes them (merges, encodes, compression) into a queue first,
 * and the store replays the queue inside its commit.
 */
import type { RecordWrites, RecordWriter, SeriesKeys, SeriesKind } from './drivers/types.js';

/** Writes kept in order, applied later inside a commit. */
export class WriteQueue implements RecordWriter, RecordWrites {
  private readonly kinds: SeriesKind[] = [];
  private readonly keys: SeriesKeys[SeriesKind][] = [];
  /** `undefined`: a removal. */
  private readonly values: (Uint8Array | undefined)[] = [];

  put<K extends SeriesKind>(kind: K, key: SeriesKeys[K], value: Uint8Array): void {
    this.kinds.push(kind);
    this.keys.push(key);
    this.values.push(value);
  }

  remove<K extends SeriesKind>(kind: K, key: SeriesKeys[K]): void {
    this.kinds.push(kind);
    this.keys.push(key);
    this.values.push(undefined);
  }

  /** How many writes are queued. */
  get length(): number {
    return this.kinds.length;
  }

  /** Replays the writes in the order they were queued. */
  apply(into: RecordWriter): void {
    this.applyRange(0, this.kinds.length, into);
  }

  /** Replays writes `from` to `to` (not included) in the order they were queued. */
  protected applyRange(from: number, to: number, into: RecordWriter): void {
    for (let i = from; i < to; i++) {
      const value = this.values[i];
      // The kind and key were queued together: the pair is consistent.
      if (value === undefined) into.remove(this.kinds[i]!, this.keys[i] as never);
      else into.put(this.kinds[i]!, this.keys[i] as never, value);
    }
  }
}
