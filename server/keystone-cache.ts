/**
 * A bounded least-recently-used map whose entries also expire: the cache of
 * validated tokens. A Map keeps insertion order, so re-inserting on each hit
 * keeps the least recently used entry first.
 */
export class TokenCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();

  constructor(
    private readonly capacity: number,
    private readonly now: () => number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (entry.until <= this.now()) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Remembers `value` until the time `until` (milliseconds since the epoch). */
  set(key: string, value: V, until: number): void {
    if (this.capacity === 0 || until <= this.now()) return;
    this.entries.delete(key);
    this.entries.set(key, { value, until });
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}
