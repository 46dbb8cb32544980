/**
 * Which node holds which shard: rendezvous (highest random weight) hashing
 * over the live members. Every node computes it alike from the same member
 * list, a shard goes to exactly one member, and a member joining or
 * leaving moves only the shards it wins or held (about 1/N of them), so
 * the other leases stay where they are. Ties (vanishingly rare) go to the
 * smaller node id.
 */
import { stableHash } from '../shard-hash.js';
import type { Shard } from '../types.js';

export function ownerOf(shard: Shard, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = -1;
  for (const node of members) {
    const weight = stableHash(`${node}\u0000${shard}`);
    if (weight > bestWeight || (weight === bestWeight && best !== undefined && node < best)) {
      best = node;
      bestWeight = weight;
    }
  }
  return best;
}

/** The shards among `shards` that `node` holds when `members` are alive. */
export function shardsOf(node: string, members: readonly string[], shards: number): Shard[] {
  const owned: Shard[] = [];
  for (let shard = 0; shard < shards; shard++) if (ownerOf(shard, members) === node) owned.push(shard);
  return owned;
}
