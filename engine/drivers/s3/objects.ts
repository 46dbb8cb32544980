/**
 * Sealed splits as objects: what the series store and the janitor need of
 * an object store, and the objects' names. A split's bytes are stored once
 * under a name holding the revision (`<fence>-<random>`) of the commit that
 * wrote them, and never overwritten:
 *
 *   s<shard>/<metric id>/<granularity>:<split key>:<revision>
 *
 * so a name read is never stale (any cache by name is exact on every node),
 * a shard's objects are one prefix listing (the janitor's), and a metric's
 * another (its deletion's).
 */
import type { Shard } from '../types.js';

export interface SplitObjects {
  /** Stores every object; rejects (EngineUnavailable while the store is out of reach) unless all were stored. */
  put(objects: ReadonlyMap<string, Uint8Array>): Promise<void>;
  /** Each name's bytes, undefined for a name the store does not hold. */
  get(names: readonly string[]): Promise<Map<string, Buffer | undefined>>;
  /** Deletes the names; an absent one is no error. */
  delete(names: readonly string[]): Promise<void>;
  /** Visits the names under `prefix`, a page at a time, each visit awaited before the next page is listed. */
  list(prefix: string, visit: (names: string[]) => Promise<void>): Promise<void>;
}

export function shardObjectPrefix(shard: Shard): string {
  return `s${shard}/`;
}

export function metricObjectPrefix(shard: Shard, metricId: string): string {
  return `${shardObjectPrefix(shard)}${metricId}/`;
}

/** `field` is the split's `<granularity>:<split key>` (redis/keys.ts seriesField). */
export function splitObjectName(shard: Shard, metricId: string, field: string, revision: string): string {
  return `${metricObjectPrefix(shard, metricId)}${field}:${revision}`;
}

export interface SplitObjectName {
  metricId: string;
  field: string;
  revision: string;
  /** The fence of the lease the writing commit ran under. */
  fence: number;
}

/** The parts of a name under `s<shard>/`, or undefined for a name not of this form (never touched). */
export function parseSplitObjectName(shard: Shard, name: string): SplitObjectName | undefined {
  const prefix = shardObjectPrefix(shard);
  if (!name.startsWith(prefix)) return undefined;
  const slash = name.indexOf('/', prefix.length);
  const revisionAt = name.lastIndexOf(':') + 1;
  if (slash < 0 || revisionAt <= slash + 1) return undefined;
  const field = name.slice(slash + 1, revisionAt - 1);
  const revision = name.slice(revisionAt);
  const fence = /^(\d+)-[0-9a-f]+$/.exec(revision)?.[1];
  if (fence === undefined || !/^[^:/]+:[^:/]+$/.test(field)) return undefined;
  return { metricId: name.slice(prefix.length, slash), field, revision, fence: Number(fence) };
}
