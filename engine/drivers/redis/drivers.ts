/** The Redis drivers over one connection: incoming log, series store and coordinator of one node. */
import type { Redis } from 'ioredis';
import type { Drivers } from '../types.js';
import { connectRedis, type RedisConnectionOptions } from './connection.js';
import { RedisCoordinator } from './coordinator.js';
import { RedisIncomingLog } from './incoming.js';
import { RedisSeriesStore } from './series.js';

export interface RedisDriversOptions extends RedisConnectionOptions {
  /** Shards metrics are spread over; the same on every node of a cluster. */
  shards: number;
  nodeId: string;
  memberTtlMs?: number;
}

export interface RedisDrivers extends Drivers {
  incoming: RedisIncomingLog;
  series: RedisSeriesStore;
  coordinator: RedisCoordinator;
  client: Redis;
  /** Leaves the cluster and closes the connection. */
  close(): Promise<void>;
}

/** Connects and joins (EngineUnavailable when Redis does not answer). */
export async function redisDrivers(url: string, options: RedisDriversOptions): Promise<RedisDrivers> {
  const client = await connectRedis(url, options);
  const coordinator = new RedisCoordinator(client, {
    nodeId: options.nodeId,
    shards: options.shards,
    ...(options.memberTtlMs === undefined ? {} : { memberTtlMs: options.memberTtlMs }),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  });
  try {
    await coordinator.start();
  } catch (err) {
    client.disconnect();
    throw err;
  }
  return {
    client,
    incoming: new RedisIncomingLog(client, options.shards),
    series: new RedisSeriesStore(client, options.shards),
    coordinator,
    async close() {
      try {
        await coordinator.close();
      } finally {
        client.disconnect();
      }
    },
  };
}
