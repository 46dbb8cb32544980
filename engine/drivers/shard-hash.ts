/**
 * The one hash every node spreads metrics over shards with, and ranks
 * shard holders by (rendezvous hashing): a node disagreeing on it would
 * look for a metric's measures in another shard than the one they were
 * pushed to. Never change it on a running cluster.
 */

/** FNV-1a over the string's UTF-16 code units, then murmur3's finaliser so that close strings land far apart. */
export function stableHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The shard of a metric among `shards`. */
export function shardOfMetric(metricId: string, shards: number): number {
  return stableHash(metricId) % shards;
}
