/**
 * The Redis drivers of a node: the incoming log on the `incoming` Redis,
 * the series store and the coordinator on the `series` one (the lease's
 * fence is checked inside the series commit script, so both must be one
 * Redis), one connection each (one in all when the URLs are the same).
 * Worker threads open the data drivers only: they never join the cluster.
 */
import type { Redis } from 'ioredis';
import type { ProcessingDrivers } from '../../process-metrics.js';
import type { Drivers } from '../types.js';
import { connectRedis, type RedisConnectionOptions } from './connection.js';
import { RedisCoordinator } from './coordinator.js';
import { RedisIncomingLog } from './incoming.js';
import { RedisSeriesStore } from './series.js';

export interface RedisLocation {
  /** redis:// URL of the incoming measures. */
  incoming: string;
  /** redis:// URL of the series records and shard leases. */
  series: string;
  /** Shards metrics are spread over; the same on every node of a cluster. */
  shards: number;
}

export interface RedisDriversOptions extends RedisConnectionOptions {
  nodeId: string;
  memberTtlMs?: number;
  /** See RedisCoordinatorOptions.report. */
  report?: () => unknown;
}

export interface RedisDataDrivers extends ProcessingDrivers {
  incoming: RedisIncomingLog;
  series: RedisSeriesStore;
  /** Closes the connections. */
  close(): Promise<void>;
}

export interface RedisDrivers extends RedisDataDrivers, Pick<Drivers, 'coordinator'> {
  coordinator: RedisCoordinator;
  /** The series Redis' client. */
  client: Redis;
}

/** Connects to the incoming and series Redis (EngineUnavailable when one does not answer). */
export async function redisDataDrivers(location: RedisLocation, options: RedisConnectionOptions = {}): Promise<RedisDataDrivers & { client: Redis }> {
  const client = await connectRedis(location.series, options);
  let incomingClient = client;
  if (location.incoming !== location.series) {
    try {
      incomingClient = await connectRedis(location.incoming, options);
    } catch (err) {
      client.disconnect();
      throw err;
    }
  }
  return {
    client,
    incoming: new RedisIncomingLog(incomingClient, location.shards),
    series: new RedisSeriesStore(client, location.shards),
    async close() {
      client.disconnect();
      if (incomingClient !== client) incomingClient.disconnect();
    },
  };
}

/** Connects and joins the cluster as `nodeId`. */
export async function redisDrivers(location: RedisLocation, options: RedisDriversOptions): Promise<RedisDrivers> {
  const data = await redisDataDrivers(location, options);
  const coordinator = new RedisCoordinator(data.client, {
    nodeId: options.nodeId,
    shards: location.shards,
    ...(options.memberTtlMs === undefined ? {} : { memberTtlMs: options.memberTtlMs }),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
    ...(options.report === undefined ? {} : { report: options.report }),
  });
  try {
    await coordinator.start();
  } catch (err) {
    await data.close();
    throw err;
  }
  return {
    ...data,
    coordinator,
    async close() {
      try {
        await coordinator.close();
      } finally {
        await data.close();
      }
    },
  };
}
