/**
 * A thread's recently fetched incoming records. A push of 10,000 metrics is
 * one record, and processing takes its metrics a batch at a time (256 by
 * default), on every worker thread: each batch fetched the whole record
 * again (read, CRC-checked, copied out), ~40 times per record, which took
 * most of a time-major collector's processing CPU. Records never change
 * once appended and seqs are never given twice, so a record kept here
 * stays right for as long as it is kept.
 *
 * Bounded in bytes: a record is kept until newer fetches push it out, the
 * least recently used first, but never to make room for another record of
 * the same fetch. A backlog larger than the bound is fetched whole by every
 * batch (each of its metrics has a point in every record), and plain LRU
 * would then read every record every time; this way the records kept are
 * answered and only the others are read. A record larger (packed) than a
 * quarter of the bound is read, not kept. A record no fetch asked for in the last
 * STALE_FETCHES goes too (its metrics are processed): under steady
 * ingestion the cache holds the records still pending, not a bound's worth
 * of old ones.
 *
 * Records are kept in one buffer the size of the bound, allocated once and
 * placed first-fit (free-ranges.ts): a copy of its own per record (~570 KB
 * each, freed in any order) made glibc raise its mmap threshold and serve
 * them from malloc arenas, which kept ~140 MB of freed pages resident. The
 * buffer's pages are touched only as far as records reach into it, so the
 * bound can be the whole backlog the server allows (recordCacheBytes) while
 * what is resident follows the backlog there is. For the same reason a
 * record not kept is visited with the log's bytes, while the log holds
 * them, rather than copied.
 *
 * A record is kept packed, as the cache's `Packing` writes it (processing
 * keeps a record's points without its ids, a time-major push's timestamp
 * once: packed-record.ts), and the bound counts packed bytes: a
 * time-major backlog of 300 pushes of 10,000 metrics (~170 MB as read,
 * 72 MB packed with an offset per entry, 24 MB as now) went past a 16 MB
 * bound, and every batch then read and checked most of it again.
 */
import type { IncomingLog, Shard } from './drivers/types.js';
import { FreeRanges } from './free-ranges.js';

/** Measures in the backlog the cache is sized for when the backlog has no bound (`--max-backlog 0`): the default bound's. */
const UNBOUNDED_BACKLOG = 5_000_000;

/**
 * Bytes of records a thread keeps when the server lets `maxBacklog`
 * measures wait (`--max-backlog`, 0: no bound): the whole backlog of
 * collectors' pushes, which pack at 8 bytes a measure (a value each, their
 * shared timestamps once a push: packed-record.ts), 40 MB at the default
 * bound. Most backlogs are far smaller, and only the pages their records
 * reach are touched.
 */
export function recordCacheBytes(maxBacklog: number): number {
  return 8 * (maxBacklog > 0 ? maxBacklog : UNBOUNDED_BACKLOG);
}

/** Fetches after which a record not asked for again is let go. */
export const STALE_FETCHES = 32;

/** How kept records are stored: `record`'s packed length, and how to write it while `record`'s bytes are valid. */
export type Packing = (record: Uint8Array) => { readonly length: number; write(into: Uint8Array): void };

/** Records kept as read. */
const AS_READ: Packing = (record) => ({ length: record.length, write: (into) => into.set(record) });

/** A record visited: its bytes as read from the log, or as the cache's Packing wrote them (`packed`). */
export type RecordVisit = (seq: number, bytes: Uint8Array, packed: boolean) => void;

interface Kept {
  start: number;
  length: number;
  /** The fetch that last used it. */
  fetch: number;
}

export class RecordCache {
  /** By shard and seq, least recently used first. */
  private readonly records = new Map<string, Kept>();
  /** The buffer's bytes no record holds. */
  private free: FreeRanges;
  private buffer: Uint8Array | undefined;
  private bytes = 0;
  private fetches = 0;
  /** Fetches under way on this thread: the records they found must not be overwritten before they visit them. */
  private readonly inFlight = new Set<number>();

  constructor(
    private readonly limit: number,
    private readonly packing = AS_READ,
  ) {
    this.free = new FreeRanges(limit);
  }

  /** As IncomingLog.fetch (records visited in `seqs` order), the records kept answered without the log, packed; `bytes` stay valid during `visit`. */
  async fetch(incoming: IncomingLog, shard: Shard, seqs: readonly number[], visit: RecordVisit): Promise<void> {
    const fetch = ++this.fetches;
    this.inFlight.add(fetch);
    try {
      await this.fetchKept(incoming, shard, seqs, visit, fetch);
    } finally {
      this.inFlight.delete(fetch);
    }
  }

  private async fetchKept(incoming: IncomingLog, shard: Shard, seqs: readonly number[], visit: RecordVisit, fetch: number): Promise<void> {
    const found = new Map<number, Uint8Array>();
    const missing: number[] = [];
    for (const seq of seqs) {
      const key = `${shard} ${seq}`;
      const kept = this.records.get(key);
      if (kept === undefined) {
        missing.push(seq);
        continue;
      }
      kept.fetch = fetch;
      this.records.delete(key);
      this.records.set(key, kept);
      found.set(seq, this.bytesOf(kept));
    }
    // Records are visited in `seqs` order: the kept ones before each record the log reads, that one while its bytes are valid.
    let next = 0;
    const visitKeptUntil = (seq?: number) => {
      for (; next < seqs.length && seqs[next] !== seq; next++) {
        const bytes = found.get(seqs[next]!);
        if (bytes !== undefined) visit(seqs[next]!, bytes, true);
      }
    };
    if (missing.length > 0) {
      await incoming.fetch(shard, missing, (seq, bytes) => {
        visitKeptUntil(seq);
        next++;
        const kept = this.keep(`${shard} ${seq}`, bytes, fetch);
        if (kept === undefined) visit(seq, bytes, false);
        else visit(seq, kept, true);
      });
    }
    visitKeptUntil();
    const oldest = this.oldestInFlight();
    for (const [key, old] of this.records) {
      if (old.fetch > fetch - STALE_FETCHES || old.fetch >= oldest) break;
      this.forget(key, old);
    }
  }

  private oldestInFlight(): number {
    let oldest = Number.POSITIVE_INFINITY;
    for (const fetch of this.inFlight) oldest = Math.min(oldest, fetch);
    return oldest;
  }

  /** A kept, packed copy of `bytes`, or undefined when there is no room for it. */
  private keep(key: string, bytes: Uint8Array, fetch: number): Uint8Array | undefined {
    // Two fetches under way that both missed it: the second finds the first's copy.
    const kept = this.records.get(key);
    if (kept !== undefined) {
      kept.fetch = Math.max(kept.fetch, fetch);
      return this.bytesOf(kept);
    }
    const packed = this.packing(bytes);
    const length = packed.length;
    if (4 * length > this.limit) return undefined;
    const oldest = this.oldestInFlight();
    let at = this.free.take(length);
    for (const [oldKey, old] of this.records) {
      if (at >= 0 || old.fetch >= oldest) break;
      this.forget(oldKey, old);
      at = this.free.take(length);
    }
    if (at < 0) return undefined;
    const placed: Kept = { start: at, length, fetch };
    this.records.set(key, placed);
    this.bytes += length;
    const copy = this.bytesOf(placed);
    packed.write(copy);
    return copy;
  }

  private forget(key: string, kept: Kept): void {
    this.records.delete(key);
    this.free.give(kept.start, kept.length);
    this.bytes -= kept.length;
  }

  private bytesOf(kept: Kept): Uint8Array {
    this.buffer ??= new Uint8Array(this.limit);
    return this.buffer.subarray(kept.start, kept.start + kept.length);
  }

  /**
   * Lets every record and the buffer go, once the backlog they were kept for
   * is processed: the buffer's pages stay resident otherwise, up to the
   * bound, for as long as the thread waits for work. False, keeping them,
   * while a fetch is under way.
   */
  release(): boolean {
    if (this.inFlight.size > 0) return false;
    this.records.clear();
    this.free = new FreeRanges(this.limit);
    this.bytes = 0;
    this.buffer = undefined;
    return true;
  }

  /** Bytes kept. */
  get size(): number {
    return this.bytes;
  }
}
