/**
 * Incoming records in the LMDB environment: one shard, records keyed by
 * seq in `incoming_batches`. Seqs must grow across restarts: a repeated
 * one would overwrite acknowledged measures, and a smaller one would read
 * as consumed by states whose lastSeq is above it (even once its records
 * are deleted). So meta `incomingSeq` is kept ahead of the seqs given, a
 * block at a time, its write queued before the record's (lmdb-js commits
 * in order). The numbering is picked up on the first append: a worker
 * thread's log, which only fetches, writes nothing.
 */
import type { Storage } from '../../storage.js';
import type { IncomingLog, Shard } from '../types.js';
import { plainView } from './plain-view.js';

const RESERVED_BLOCK = 1_000_000;

export class LmdbIncomingLog implements IncomingLog {
  readonly shards = 1;
  readonly shared = false;
  /** The newest seq given; undefined until the first append. */
  private seq: number | undefined;
  /** Seqs up to this are reserved in meta `incomingSeq`. */
  private reservedSeq = 0;
  /** See hurry. */
  private readonly marks = new Map<Shard, number>();

  constructor(private readonly storage: Storage) {}

  shardOf(): Shard {
    return 0;
  }

  async append(records: ReadonlyMap<Shard, Uint8Array>): Promise<Map<Shard, number>> {
    const seqs = new Map<Shard, number>();
    const puts: Promise<boolean>[] = [];
    for (const [shard, bytes] of records) {
      const seq = this.nextSeq();
      seqs.set(shard, seq);
      puts.push(this.storage.incomingBatches.put(seq, bytes as Buffer));
    }
    await Promise.all(puts);
    return seqs;
  }

  private lastSeq(): number {
    const { storage } = this;
    this.seq ??= Math.max(Number(storage.meta.get('incomingSeq') ?? 0), ...storage.incomingBatches.getKeys({ reverse: true, limit: 1 }));
    return this.seq;
  }

  private nextSeq(): number {
    const { storage } = this;
    const seq = (this.seq = this.lastSeq() + 1);
    if (seq >= this.reservedSeq) {
      this.reservedSeq = seq + RESERVED_BLOCK;
      void storage.meta.put('incomingSeq', this.reservedSeq);
    }
    return seq;
  }

  async scan(_shard: Shard, visit: (seq: number, bytes: Uint8Array) => void, after = 0): Promise<void> {
    for (const { key, value } of this.storage.incomingBatches.getRange({ start: after + 1 })) visit(key, value);
  }

  async head(): Promise<number> {
    return this.lastSeq();
  }

  async fetch(_shard: Shard, seqs: readonly number[], visit: (seq: number, bytes: Uint8Array) => void): Promise<void> {
    for (const seq of seqs) {
      const bytes = plainView(this.storage.incomingBatches.getBinaryFast(seq));
      if (bytes !== undefined) visit(seq, bytes);
    }
  }

  async drop(_shard: Shard, seq: number): Promise<void> {
    await this.storage.incomingBatches.remove(seq);
  }

  /** In memory: the one shard's holder is this process, whose refreshes process at once. */
  async hurry(shard: Shard, seq: number): Promise<void> {
    if (seq > (this.marks.get(shard) ?? 0)) this.marks.set(shard, seq);
  }

  async hurried(): Promise<Map<Shard, number>> {
    return new Map(this.marks);
  }
}
