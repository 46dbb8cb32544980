/**
 * Encoded answers of single-metric reads, so that a read repeated while its
 * metric is unchanged (dashboards poll the same panels) skips the storage
 * read and the serialization. Least recently used answers go first once the
 * byte budget is spent. The cache only stores: the engine decides when an
 * answer may be served and tells it which metrics changed.
 */
import type { ReadOptions } from './read-measures.js';

/**
 * Bytes an entry costs besides its answer and key (map slots, the entry
 * object, string headers): roughly, so that a budget also bounds memory for
 * tiny answers such as `[]`.
 */
export const ENTRY_OVERHEAD = 160;

interface Entry {
  metricId: string;
  answer: Buffer;
  cost: number;
}

/**
 * The cache key of a read: every field of ReadOptions, so two reads share an
 * answer only when they would read the same. The `rest` check makes a field
 * added to ReadOptions a compile error here until it is part of the key.
 */
export function readKey(read: ReadOptions): string {
  const { method, granularities, start, stop, resample, newest, ...rest } = read;
  rest satisfies Record<string, never>;
  return `${method} ${granularities.join(',')} ${start ?? ''} ${stop ?? ''} ${resample ?? ''} ${newest ?? ''}`;
}

/**
 * Reads asked once that admit() remembers. Keys only (~100 bytes each); the
 * set starts over when full, so a read that comes back rarely is forgotten.
 */
export const MAX_SEEN = 16_384;

export class ReadCache {
  /** In least recently used order: a hit moves its entry to the end. */
  private readonly entries = new Map<string, Entry>();
  /** Reads asked once since the set last started over (see admit). */
  private readonly seen = new Set<string>();
  /** Per metric, the keys of its entries in `entries`. */
  private readonly byMetric = new Map<string, Set<string>>();
  private used = 0;
  /** Lookups answered and not, since start. */
  hits = 0;
  misses = 0;

  /** `budget` in bytes; 0 disables the cache. */
  constructor(readonly budget: number) {}

  /** Bytes the entries cost (ENTRY_OVERHEAD each, plus their answers and keys). */
  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Whether the answer of a read that missed is worth keeping: only from
   * the second time the read is asked (and from then on, also after its
   * metric changed). Keeping a ~43 KB answer costs a copy by V8's
   * scavenger and pushes older answers out; one-off reads (a new window
   * each time) made every read ~13% dearer that way, while a polled read
   * is asked again and again.
   */
  admit(metricId: string, key: string): boolean {
    if (this.budget === 0) return false;
    const full = fullKey(metricId, key);
    if (this.seen.has(full)) return true;
    if (this.seen.size >= MAX_SEEN) this.seen.clear();
    this.seen.add(full);
    return false;
  }

  get(metricId: string, key: string): Buffer | undefined {
    const full = fullKey(metricId, key);
    const entry = this.entries.get(full);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.entries.delete(full);
    this.entries.set(full, entry);
    return entry.answer;
  }

  /** Stores an answer, evicting the least recently used ones to make room; an answer larger than the budget is not kept. */
  set(metricId: string, key: string, answer: Buffer): void {
    const full = fullKey(metricId, key);
    const cost = ENTRY_OVERHEAD + full.length + answer.length;
    if (cost > this.budget) return;
    this.remove(full);
    for (const [oldest] of this.entries) {
      if (this.used + cost <= this.budget) break;
      this.remove(oldest);
    }
    this.entries.set(full, { metricId, answer, cost });
    this.used += cost;
    let keys = this.byMetric.get(metricId);
    if (keys === undefined) this.byMetric.set(metricId, (keys = new Set()));
    keys.add(full);
  }

  /** Drops every answer of these metrics. */
  invalidate(metricIds: Iterable<string>): void {
    for (const id of metricIds) {
      const keys = this.byMetric.get(id);
      if (keys !== undefined) for (const full of keys) this.remove(full);
    }
  }

  clear(): void {
    this.seen.clear();
    this.entries.clear();
    this.byMetric.clear();
    this.used = 0;
  }

  private remove(full: string): void {
    const entry = this.entries.get(full);
    if (entry === undefined) return;
    this.entries.delete(full);
    this.used -= entry.cost;
    const keys = this.byMetric.get(entry.metricId)!;
    keys.delete(full);
    if (keys.size === 0) this.byMetric.delete(entry.metricId);
  }
}

/** Metric ids are UUIDs: no key of one metric can be another's with a different id. */
function fullKey(metricId: string, key: string): string {
  return `${metricId} ${key}`;
}
