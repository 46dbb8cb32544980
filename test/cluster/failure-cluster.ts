/**
 * What the failure tests (failures.test.ts, failpoints.test.ts) run on: one PostgreSQL, one Redis and,
 * with CLUSTER_SPLITS=ceph|swift, that object store for sealed splits; 8 shards, 2 s leases, nodes
 * processing every 20 ms with one worker thread.
 */
import { clusterEnginesMissing, splitsStoreKind, startObjectStore, startPostgres, startRedis, type Engine } from './engines.js';
import { stopCluster, type ClusterNode, type ClusterOptions } from './nodes.js';

export const SHARDS = 8;
export const LEASE_MS = 2000;
export const SPLITS = splitsStoreKind();
/** Seconds between a metric's measures: with an object store, a 1 s split seals every 120 measures, so batches upload all along. */
export const SECONDS_APART = SPLITS === undefined ? 1 : 30;
/** Why the engines cannot run here (the files' skip note), or undefined. */
export const MISSING = clusterEnginesMissing(SPLITS);
export const SETUP = `3 nodes, ${SHARDS} shards, lease ${LEASE_MS} ms, sealed splits in ${SPLITS ?? 'Redis'}`;

export interface FailureEngines {
  pg: Engine;
  redis: Engine;
  store: Engine | undefined;
  /** How a node of this cluster starts. */
  options: ClusterOptions;
}

export async function startFailureEngines(): Promise<FailureEngines> {
  const [pg, redis, store] = await Promise.all([startPostgres(), startRedis(), SPLITS === undefined ? undefined : startObjectStore(SPLITS)]);
  const options = {
    index: pg.url,
    redis: redis.url,
    splits: store?.url,
    shards: SHARDS,
    leaseMs: LEASE_MS,
    args: ['--processing-interval', '20', '--workers', '1'],
  };
  return { pg, redis, store, options };
}

/** Stops the nodes, then the engines, whatever failed before. */
export function stopFailureCluster(nodes: readonly ClusterNode[], engines: FailureEngines | undefined): Promise<void> {
  return stopCluster(nodes, [engines?.pg, engines?.redis, engines?.store]);
}
