/**
 * A map within a cost budget that makes room by evicting random entries:
 * reads sweeping over more entries than fit (a dashboard of many metrics)
 * keep hitting most of them, where least-recently-used eviction would evict
 * each just before it is read again (bench:http's 1,000 metrics: 0 hits).
 * The caches of decoded splits and of split objects keep their entries here.
 */
export class RandomEvictionMap<V> {
  private readonly entries = new Map<string, { value: V; cost: number; slot: number }>();
  /** The keys of `entries`, for picking one at random; each entry knows its slot. */
  private readonly keys: string[] = [];
  private used = 0;

  /** `budget` in cost units (bytes, for the caches); 0 keeps nothing. */
  constructor(
    readonly budget: number,
    private readonly random: () => number = Math.random,
  ) {}

  /** The cost of the entries kept. */
  get cost(): number {
    return this.used;
  }

  get(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** Keeps `value` under `key` (replacing any), unless it alone exceeds the budget. */
  set(key: string, value: V, cost: number): void {
    if (cost > this.budget) return;
    this.delete(key);
    while (this.used + cost > this.budget) this.delete(this.keys[Math.floor(this.random() * this.keys.length)]!);
    this.entries.set(key, { value, cost, slot: this.keys.push(key) - 1 });
    this.used += cost;
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.used -= entry.cost;
    // Swap the last key into the freed slot.
    const last = this.keys.pop()!;
    if (last !== key) {
      this.keys[entry.slot] = last;
      this.entries.get(last)!.slot = entry.slot;
    }
  }
}
