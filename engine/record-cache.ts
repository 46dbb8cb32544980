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
 * answered and only the others are read. A record larger than a quarter of
 * the bound is read, not kept. A record no fetch asked for in the last
 * STALE_FETCHES goes too (its metrics are processed): under steady
 * ingestion the cache holds the records still pending, not a bound's worth
 * of old ones.
 */
import type { IncomingLog, Shard } from './drivers/types.js';

/** Bytes of records a thread keeps: a backlog of ~30 pushes of 10,000 metrics (~570 KB each). */
export const RECORD_CACHE_BYTES = 16 * 1024 ** 2;

/** Fetches after which a record not asked for again is let go. */
export const STALE_FETCHES = 32;

interface Kept {
  bytes: Uint8Array;
  /** The fetch that last used it. */
  fetch: number;
}

export class RecordCache {
  /** By shard and seq, least recently used first. */
  private readonly records = new Map<string, Kept>();
  private bytes = 0;
  private fetches = 0;

  constructor(private readonly limit = RECORD_CACHE_BYTES) {}

  /** As IncomingLog.fetch (records visited in `seqs` order), the records kept answered without the log; `bytes` stay valid. */
  async fetch(incoming: IncomingLog, shard: Shard, seqs: readonly number[], visit: (seq: number, bytes: Uint8Array) => void): Promise<void> {
    const fetch = ++this.fetches;
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
      found.set(seq, kept.bytes);
    }
    if (missing.length > 0) {
      await incoming.fetch(shard, missing, (seq, bytes) => {
        // The log's bytes are valid during the call only.
        const copy = new Uint8Array(bytes);
        found.set(seq, copy);
        this.keep(`${shard} ${seq}`, copy, fetch);
      });
    }
    for (const seq of seqs) {
      const bytes = found.get(seq);
      if (bytes !== undefined) visit(seq, bytes);
    }
    for (const [key, old] of this.records) {
      if (old.fetch > fetch - STALE_FETCHES) break;
      this.records.delete(key);
      this.bytes -= old.bytes.length;
    }
  }

  private keep(key: string, bytes: Uint8Array, fetch: number): void {
    if (4 * bytes.length > this.limit) return;
    for (const [oldKey, old] of this.records) {
      if (this.bytes + bytes.length <= this.limit || old.fetch === fetch) break;
      this.records.delete(oldKey);
      this.bytes -= old.bytes.length;
    }
    if (this.bytes + bytes.length > this.limit) return;
    this.records.set(key, { bytes, fetch });
    this.bytes += bytes.length;
  }

  /** Bytes kept. */
  get size(): number {
    return this.bytes;
  }
}
