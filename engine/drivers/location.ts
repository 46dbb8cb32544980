/**
 * Where a thread finds the data drivers (incoming log and series store): it
 * crosses to the worker threads with each task, and each thread opens its
 * own drivers there once.
 */
import type { ProcessingDrivers } from '../process-metrics.js';
import { threadLmdbDrivers } from './lmdb/drivers.js';
import type { RedisLocation } from './redis/drivers.js';

export type DriversLocation = { kind: 'lmdb'; dataDir: string } | ({ kind: 'redis' } & RedisLocation);

const opened = new Map<string, Promise<ProcessingDrivers>>();

/** This thread's data drivers at `location`; a failed connection is tried again at the next call. */
export function threadDrivers(location: DriversLocation): ProcessingDrivers | Promise<ProcessingDrivers> {
  if (location.kind === 'lmdb') return threadLmdbDrivers(location.dataDir);
  const key = `${location.incoming} ${location.series} ${location.splits ?? ''} ${location.shards}`;
  let drivers = opened.get(key);
  if (drivers === undefined) {
    // Loaded only here: the Redis client costs each worker thread ~130 ms to load, which the embedded mode's never pay.
    drivers = import('./redis/drivers.js').then(({ redisDataDrivers }) => redisDataDrivers(location));
    opened.set(key, drivers);
    drivers.catch(() => opened.delete(key));
  }
  return drivers;
}

/**
 * Piscina's `atomics` for a pool whose threads open drivers at `location`.
 * By default an idle thread blocks in Atomics.wait between tasks, so none
 * of its own timers or sockets run: a network client could not reconnect
 * (after a Redis restart every later task failed on the dead connection).
 * LMDB holds no connection, and keeps the faster hand-off.
 */
export function poolAtomics(location: DriversLocation): 'sync' | 'disabled' {
  return location.kind === 'lmdb' ? 'sync' : 'disabled';
}
