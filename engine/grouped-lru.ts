/**
 * Values kept within a budget of cost, least recently used out first, each
 * filed in a group so that one change drops every value it invalidates (a
 * metric's cached reads, a resource type's cached searches). The callers
 * decide what a cost is (bytes, rows) and when a value may be kept.
 */
interface Entry<V> {
  group: string;
  value: V;
  cost: number;
}

export class GroupedLru<V> {
  /** In least recently used order: a hit moves its entry to the end. */
  private readonly entries = new Map<string, Entry<V>>();
  /** Per group, the keys of its entries. */
  private readonly groups = new Map<string, Set<string>>();
  private used = 0;

  /** `budget`: the most the entries' costs may add up to; 0 keeps nothing. */
  constructor(readonly budget: number) {}

  /** What the entries cost together. */
  get cost(): number {
    return this.used;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value under `key`, made the most recently used. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /**
   * Keeps `value` under `key` in `group` (replacing what the key held),
   * evicting the least recently used entries to make room; a value costing
   * more than the whole budget is not kept.
   */
  set(group: string, key: string, value: V, cost: number): void {
    if (cost > this.budget) return;
    this.delete(key);
    for (const oldest of this.entries.keys()) {
      if (this.used + cost <= this.budget) break;
      this.delete(oldest);
    }
    this.entries.set(key, { group, value, cost });
    this.used += cost;
    let keys = this.groups.get(group);
    if (keys === undefined) this.groups.set(group, (keys = new Set()));
    keys.add(key);
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.used -= entry.cost;
    const keys = this.groups.get(entry.group)!;
    keys.delete(key);
    if (keys.size === 0) this.groups.delete(entry.group);
  }

  /** Drops every entry of `group`. */
  deleteGroup(group: string): void {
    const keys = this.groups.get(group);
    if (keys === undefined) return;
    for (const key of keys) {
      this.used -= this.entries.get(key)!.cost;
      this.entries.delete(key);
    }
    this.groups.delete(group);
  }

  clear(): void {
    this.entries.clear();
    this.groups.clear();
    this.used = 0;
  }
}
