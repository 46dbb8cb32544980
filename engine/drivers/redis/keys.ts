/**
 * Every Redis key the drivers use. A shard's keys share the hash tag
 * `{g:s<N>}`, so they live in one Redis Cluster slot and one script can
 * touch them all: its incoming stream and counter, its lease and epoch,
 * and its metrics' series records. Membership keys share `{g:m}`.
 */
import type { Shard } from '../types.js';

const tag = (shard: Shard): string => `{g:s${shard}}`;

export const shardKeys = {
  /** Stream of incoming records, entry ids `<seq>-0`. */
  incoming: (shard: Shard) => `${tag(shard)}:in`,
  /** The last seq given (INCR). */
  seq: (shard: Shard) => `${tag(shard)}:seq`,
  /** The lease: value the holder's fence, expiring unless renewed. */
  lock: (shard: Shard) => `${tag(shard)}:lock`,
  /** The last fence given (INCR): grows with every lease taken. */
  epoch: (shard: Shard) => `${tag(shard)}:epoch`,
  /** Hash metric id → state bytes. */
  states: (shard: Shard) => `${tag(shard)}:st`,
  /** Hash metric id → revision of its records, changed by every commit that writes them. */
  revisions: (shard: Shard) => `${tag(shard)}:rev`,
  /** Set of deleted metric ids: no commit writes them again. */
  deleted: (shard: Shard) => `${tag(shard)}:deleted`,
  /** Hash `<granularity>:<first timestamp>` → chunk bytes, of one metric. */
  chunks: (shard: Shard, metricId: string) => `${tag(shard)}:ch:${metricId}`,
  /** Hash `<granularity>:<split key>` → version of the sealed split stored, of one metric. */
  splitIndex: (shard: Shard, metricId: string) => `${tag(shard)}:ix:${metricId}`,
  /** Prefix of a metric's sealed split bytes: `<prefix><granularity>:<split key>:<version>`, written once. */
  splitPrefix: (shard: Shard, metricId: string) => `${tag(shard)}:sp:${metricId}:`,
};

/** Hash shard → the greatest seq a refresh on another node asked the shard's holder to process now (IncomingLog.hurry). */
export const HURRY_KEY = '{g:h}:hurry';

/** The version of the series records (metric states) the cluster's newest node writes (series-format.ts). */
export const SERIES_FORMAT_KEY = '{g:f}:series-format';

export const memberKeys = {
  /** Set of the node ids that heartbeat (some maybe expired, removed at the next poll). */
  all: '{g:m}:members',
  /** A node's heartbeat, expiring unless renewed. */
  node: (nodeId: string) => `{g:m}:node:${nodeId}`,
};

/** A chunk's or split's field in its metric's hash. */
export function seriesField(granularity: number, key: number): string {
  return `${granularity}:${key}`;
}

export function parseSeriesField(field: string): [granularity: number, key: number] {
  const at = field.indexOf(':');
  return [Number(field.slice(0, at)), Number(field.slice(at + 1))];
}
