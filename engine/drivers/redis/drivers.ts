/**
 * The Redis drivers of a node: the incoming log on the `incoming` Redis,
 * the series store and the coordinator on the `series` one (the lease's
 * fence is checked inside the series commit script, so both must be one
 * Redis), one connection each (one in all when the URLs are the same).
 * With `splits` (an s3:// URL), sealed split bytes go to that object store
 * and the node runs its janitor. Worker threads open the data drivers
 * only: they never join the cluster nor sweep.
 */
import type { Redis } from 'ioredis';
import type { ProcessingDrivers } from '../../process-metrics.js';
import type { SplitJanitor } from '../s3/janitor.js';
import type { ObjectStoreOptions, S3SplitObjects } from '../s3/s3-objects.js';
import type { Drivers } from '../types.js';
import { connectRedis, type RedisConnectionOptions } from './connection.js';
import { RedisCoordinator } from './coordinator.js';
import { RedisIncomingLog } from './incoming.js';
import { claimSeriesFormat } from './series-format.js';
import { RedisSeriesStore } from './series.js';

export interface RedisLocation {
  /** redis:// URL of the incoming measures. */
  incoming: string;
  /** redis:// URL of the series records and shard leases. */
  series: string;
  /** Shards metrics are spread over; the same on every node of a cluster. */
  shards: number;
  /** s3:// URL of the object store of sealed splits; absent: they are kept in the series Redis. */
  splits?: string;
}

export interface RedisDataOptions extends RedisConnectionOptions {
  objectStore?: ObjectStoreOptions;
}

export interface RedisDriversOptions extends RedisDataOptions {
  nodeId: string;
  memberTtlMs?: number;
  /** See RedisCoordinatorOptions.report. */
  report?: () => unknown;
}

export interface RedisDataDrivers extends ProcessingDrivers {
  incoming: RedisIncomingLog;
  series: RedisSeriesStore;
  /** The object store of sealed splits, when they are not in Redis. */
  objects: S3SplitObjects | undefined;
  /** Closes the connections. */
  close(): Promise<void>;
}

export interface RedisDrivers extends RedisDataDrivers, Pick<Drivers, 'coordinator'> {
  coordinator: RedisCoordinator;
  /** The series Redis' client. */
  client: Redis;
  /** Deletes split objects nothing references (with an object store). */
  janitor: SplitJanitor | undefined;
}

/** Connects to the incoming and series Redis (EngineUnavailable when one does not answer) and makes the object store's client. */
export async function redisDataDrivers(location: RedisLocation, options: RedisDataOptions = {}): Promise<RedisDataDrivers & { client: Redis }> {
  // Loaded only for an object store: the AWS SDK costs every thread that loads it.
  const objects = location.splits === undefined ? undefined : (await import('../s3/s3-objects.js')).s3SplitObjects(location.splits, options.objectStore);
  const client = await connectRedis(location.series, options);
  let incomingClient = client;
  if (location.incoming !== location.series) {
    try {
      incomingClient = await connectRedis(location.incoming, options);
    } catch (err) {
      client.disconnect();
      objects?.close();
      throw err;
    }
  }
  return {
    client,
    objects,
    incoming: new RedisIncomingLog(incomingClient, location.shards),
    series: new RedisSeriesStore(client, location.shards, {
      ...(objects === undefined ? {} : { objects }),
      ...(options.onError === undefined ? {} : { onError: options.onError }),
    }),
    async close() {
      client.disconnect();
      if (incomingClient !== client) incomingClient.disconnect();
      objects?.close();
    },
  };
}

/**
 * Connects, checks and raises the series format stamp (series-format.ts),
 * creates the object store's bucket if absent, joins the cluster as `nodeId`
 * and starts the janitor.
 */
export async function redisDrivers(location: RedisLocation, options: RedisDriversOptions): Promise<RedisDrivers> {
  const data = await redisDataDrivers(location, options);
  const coordinator = new RedisCoordinator(data.client, {
    nodeId: options.nodeId,
    shards: location.shards,
    ...(options.memberTtlMs === undefined ? {} : { memberTtlMs: options.memberTtlMs }),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
    ...(options.report === undefined ? {} : { report: options.report }),
  });
  let janitor: SplitJanitor | undefined;
  try {
    await claimSeriesFormat(data.client);
    await data.objects?.ensureBucket();
    await coordinator.start();
    if (data.objects !== undefined) {
      const { SplitJanitor } = await import('../s3/janitor.js');
      janitor = new SplitJanitor({
        client: data.client,
        objects: data.objects,
        coordinator,
        intervalMs: data.objects.location.janitorSeconds * 1000,
        ...(options.onError === undefined ? {} : { onError: options.onError }),
      });
      janitor.start();
    }
  } catch (err) {
    await coordinator.close().catch(() => {});
    await data.close();
    throw err;
  }
  return {
    ...data,
    coordinator,
    janitor,
    async close() {
      try {
        await janitor?.close();
        await coordinator.close();
      } finally {
        await data.close();
      }
    },
  };
}
