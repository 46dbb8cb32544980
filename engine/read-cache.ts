/**
 * Encoded answers of single-metric reads, so that a read repeated while its
 * metric is unchanged (dashboards poll the same panels) skips the storage
 * read and the serialization. Least recently used answers go first once the
 * byte budget is spent. The cache only stores: the engine decides when an
 * answer may be served and tells it which metrics changed.
 */
import { GroupedLru } from './grouped-lru.js';
import type { ReadOptions } from './read-measures.js';

/**
 * Bytes an entry costs besides its answer and key (map slots, the entry
 * object, string headers): roughly, so that a budget also bounds memory for
 * tiny answers such as `[]`.
 */
export const ENTRY_OVERHEAD = 160;

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
  /** Answers grouped by metric, each costing its bytes. */
  private readonly answers: GroupedLru<Buffer>;
  /** Reads asked once since the set last started over (see admit). */
  private readonly seen = new Set<string>();
  /** Lookups answered and not, since start. */
  hits = 0;
  misses = 0;

  /** `budget` in bytes; 0 disables the cache. */
  constructor(readonly budget: number) {
    this.answers = new GroupedLru(budget);
  }

  /** Bytes the entries cost (ENTRY_OVERHEAD each, plus their answers and keys). */
  get bytes(): number {
    return this.answers.cost;
  }

  get size(): number {
    return this.answers.size;
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
    const answer = this.answers.get(fullKey(metricId, key));
    if (answer === undefined) this.misses++;
    else this.hits++;
    return answer;
  }

  /** Stores an answer, evicting the least recently used ones to make room; an answer larger than the budget is not kept. */
  set(metricId: string, key: string, answer: Buffer): void {
    const full = fullKey(metricId, key);
    this.answers.set(metricId, full, answer, ENTRY_OVERHEAD + full.length + answer.length);
  }

  /** Drops every answer of these metrics. */
  invalidate(metricIds: Iterable<string>): void {
    for (const id of metricIds) this.answers.deleteGroup(id);
  }

  clear(): void {
    this.seen.clear();
    this.answers.clear();
  }
}

/** Metric ids are UUIDs: no key of one metric can be another's with a different id. */
function fullKey(metricId: string, key: string): string {
  return `${metricId} ${key}`;
}
