/**
 * Decoded sealed splits (the points of the column a read asked for), so
 * that reads of overlapping windows (a dashboard whose time range moves on
 * every refresh, a window scrolled) decode each split once: decoding a
 * 3,600-row split was ~30% of the main thread's time on 1,000-point reads
 * that miss the answer cache. An entry keeps a copy of the encoded bytes it
 * was decoded from and serves only a read that finds exactly those bytes
 * stored: nothing needs invalidating, and a split that changed (or a
 * snapshot older or newer than the entry) simply misses.
 * Once the byte budget is spent, a random entry makes room: reads sweeping
 * over more splits than fit (a dashboard of many metrics) keep hitting most
 * of them, where least-recently-used eviction would evict each split just
 * before it is read again (bench:http's 1,000 metrics: 0 hits, every read
 * ~14% dearer than with no cache at all).
 */
import type { Series } from './aggregation.js';
import { RandomEvictionMap } from './random-eviction.js';

export class DecodedSplitCache {
  private readonly entries: RandomEvictionMap<{ encoded: Buffer; decoded: Series }>;
  /** Lookups answered and not, since start. */
  hits = 0;
  misses = 0;

  /** `budget` in bytes; 0 disables the cache. */
  constructor(
    readonly budget: number,
    random: () => number = Math.random,
  ) {
    this.entries = new RandomEvictionMap(budget, random);
  }

  get bytes(): number {
    return this.entries.cost;
  }

  /** The split decoded under `id` from exactly `encoded`, if kept. */
  get(id: string, encoded: Uint8Array): Series | undefined {
    const entry = this.entries.get(id);
    if (entry !== undefined && entry.encoded.equals(encoded)) {
      this.hits++;
      return entry.decoded;
    }
    this.misses++;
    return undefined;
  }

  /** Keeps `decoded` (which its users must not modify) with a copy of `encoded`. */
  set(id: string, encoded: Uint8Array, decoded: Series): void {
    const cost = encoded.byteLength + decoded.timestamps.byteLength + decoded.values.byteLength + id.length;
    if (cost <= this.budget) this.entries.set(id, { encoded: Buffer.from(encoded), decoded }, cost);
  }
}
