/**
 * Split objects' bytes by name, within a byte budget. Names are written
 * once (objects.ts), so an entry is never stale and nothing is invalidated.
 * Once the budget is spent a random entry makes room, as in
 * engine/decoded-splits.ts and for its reason: reads sweeping over more
 * splits than fit keep hitting most of them, where least-recently-used
 * eviction would evict each just before it is read again.
 */
export class ObjectCache {
  private readonly entries = new Map<string, { bytes: Buffer; slot: number }>();
  /** The names of `entries`, for picking one at random; each entry knows its slot. */
  private readonly names: string[] = [];
  private used = 0;

  /** `budget` in bytes; 0 keeps nothing. */
  constructor(
    readonly budget: number,
    private readonly random: () => number = Math.random,
  ) {}

  get bytes(): number {
    return this.used;
  }

  get(name: string): Buffer | undefined {
    return this.entries.get(name)?.bytes;
  }

  set(name: string, bytes: Buffer): void {
    const cost = bytes.byteLength + name.length;
    if (cost > this.budget || this.entries.has(name)) return;
    while (this.used + cost > this.budget) this.evict(this.names[Math.floor(this.random() * this.names.length)]!);
    this.entries.set(name, { bytes, slot: this.names.length });
    this.names.push(name);
    this.used += cost;
  }

  private evict(name: string): void {
    const entry = this.entries.get(name)!;
    const last = this.names.pop()!;
    if (last !== name) {
      this.names[entry.slot] = last;
      this.entries.get(last)!.slot = entry.slot;
    }
    this.entries.delete(name);
    this.used -= entry.bytes.byteLength + name.length;
  }
}
