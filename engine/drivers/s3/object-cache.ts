/**
 * Split objects' bytes by name, within a byte budget. Names are written
 * once (objects.ts), so an entry is never stale and nothing is invalidated;
 * random entries make room (engine/random-eviction.ts, as for decoded splits).
 */
import { RandomEvictionMap } from '../../random-eviction.js';

export class ObjectCache {
  private readonly entries: RandomEvictionMap<Buffer>;

  /** `budget` in bytes; 0 keeps nothing. */
  constructor(budget: number, random: () => number = Math.random) {
    this.entries = new RandomEvictionMap(budget, random);
  }

  get(name: string): Buffer | undefined {
    return this.entries.get(name);
  }

  set(name: string, bytes: Buffer): void {
    this.entries.set(name, bytes, bytes.byteLength + name.length);
  }
}
