/**
 * What an engine runs on in cluster mode: the index in PostgreSQL, the
 * incoming log, series and shard leases in Redis, sealed split bytes in
 * Redis too or in an S3-compatible object store (engine/drivers/). Every
 * node connects to the same engines; none holds data of its own.
 */
import type { ArchivePolicy } from './archive-policy.js';
import type { IndexStore } from './drivers/index-store.js';
import type { DriversLocation } from './drivers/location.js';
import { PostgresIndexStore } from './drivers/postgres/index-store.js';
import { redisDrivers } from './drivers/redis/drivers.js';
import type { RedisCoordinator } from './drivers/redis/coordinator.js';
import type { Drivers } from './drivers/types.js';
import type { ArchivePolicyRule } from './index.js';

export interface ClusterOptions {
  /** postgresql:// URL of the index. */
  index: string;
  /** redis:// URL of the incoming log. */
  incoming: string;
  /** redis:// URL of the series records and the shard leases. */
  series: string;
  /** s3:// URL of the object store of sealed splits; absent: they are kept with the series. */
  splits?: string;
  shards: number;
  nodeId: string;
  /** Milliseconds a shard lease lasts unless renewed. */
  leaseMs: number;
}

/** The engines an Engine runs on, and how to let go of them. */
export interface Backends {
  drivers: Drivers;
  index: IndexStore;
  location: DriversLocation;
  /** The cluster's membership, in cluster mode. */
  members?: RedisCoordinator;
  /** Split objects this node's janitor deleted since start (object-store splits only). */
  janitorDeleted?: () => number;
  close(): Promise<void>;
}

export interface BackendHooks {
  /** Awaited after the index deleted metrics (with their resources). */
  onMetricsDeleted(ids: string[]): Promise<void>;
  /** What this node tells the others with each heartbeat. */
  report(): unknown;
  onError(err: unknown): void;
}

/** How long a node stays a member without a heartbeat, at most (members are looked at every third of it). */
const MEMBER_TTL_MS = 10_000;

/** Connects to the cluster's engines (EngineUnavailable when one does not answer) and joins it. */
export async function clusterBackends(
  cluster: ClusterOptions,
  seed: { policies: ArchivePolicy[]; rules: ArchivePolicyRule[] } | undefined,
  hooks: BackendHooks,
): Promise<Backends> {
  const index = await PostgresIndexStore.open(cluster.index, { onMetricsDeleted: hooks.onMetricsDeleted, ...(seed === undefined ? {} : { seed }) });
  const location = { incoming: cluster.incoming, series: cluster.series, shards: cluster.shards, ...(cluster.splits === undefined ? {} : { splits: cluster.splits }) };
  let drivers;
  try {
    drivers = await redisDrivers(location, {
      nodeId: cluster.nodeId,
      // A dead node's shards go to the others once its membership lapses: no later than its leases.
      memberTtlMs: Math.min(cluster.leaseMs, MEMBER_TTL_MS),
      onError: hooks.onError,
      report: hooks.report,
    });
  } catch (err) {
    await index.close();
    throw err;
  }
  return {
    drivers,
    index,
    location: { kind: 'redis', ...location },
    members: drivers.coordinator,
    ...(drivers.janitor === undefined ? {} : { janitorDeleted: () => drivers.janitor!.deleted }),
    async close() {
      try {
        await drivers.close();
      } finally {
        await index.close();
      }
    },
  };
}
