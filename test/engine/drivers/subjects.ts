/**
 * The driver implementations the contract suite runs its cases against,
 * each behind the same handle: its incoming log and series store, a lease
 * on a shard, the index's part (a metric created, deleted), and a restart
 * of what holds the data.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from './until.js';
import { lmdbDrivers } from '../../../engine/drivers/lmdb/drivers.js';
import { dropSeries } from '../../../engine/drivers/lmdb/series.js';
import { redisDrivers, type RedisDrivers } from '../../../engine/drivers/redis/drivers.js';
import type { Drivers, IncomingLog, Lease, SeriesStore, Shard } from '../../../engine/drivers/types.js';
import { openStorage, type Storage } from '../../../engine/storage.js';
import { engineMissing, startRedis, type Engine } from '../../cluster/engines.js';

export interface Subject {
  readonly incoming: IncomingLog;
  readonly series: SeriesStore;
  lease(shard: Shard): Promise<Lease>;
  createMetric(id: string): Promise<void>;
  deleteMetric(id: string): Promise<void>;
  /** Stops what holds the data and starts it again on the same data. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface Implementation {
  name: string;
  /** Why it cannot run here (a skip note), or undefined. */
  missing: string | undefined;
  open(): Promise<Subject>;
}

class LmdbSubject implements Subject {
  private storage: Storage;
  private drivers: Drivers;

  constructor(private readonly dir: string) {
    this.storage = openStorage(dir);
    this.drivers = lmdbDrivers(this.storage);
  }

  get incoming(): IncomingLog {
    return this.drivers.incoming;
  }

  get series(): SeriesStore {
    return this.drivers.series;
  }

  async lease(shard: Shard): Promise<Lease> {
    return { shard, fence: (await this.drivers.coordinator.lock(shard, 1000))! };
  }

  async createMetric(id: string): Promise<void> {
    await this.storage.metrics.put(id, { id });
  }

  async deleteMetric(id: string): Promise<void> {
    await this.storage.root.transaction(() => {
      void this.storage.metrics.remove(id);
      dropSeries(this.storage, id);
    });
  }

  async restart(): Promise<void> {
    await this.storage.close();
    this.storage = openStorage(this.dir);
    this.drivers = lmdbDrivers(this.storage);
  }

  async close(): Promise<void> {
    await this.storage.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Shards of the Redis subjects: several, so that pushes and batches cross them. */
export const REDIS_SHARDS = 4;

export class RedisSubject implements Subject {
  private constructor(
    readonly engine: Engine,
    readonly drivers: RedisDrivers,
  ) {}

  static async open(engine?: Engine, nodeId = 'node-a'): Promise<RedisSubject> {
    const redis = engine ?? (await startRedis());
    return new RedisSubject(redis, await redisDrivers({ incoming: redis.url, series: redis.url, shards: REDIS_SHARDS }, { nodeId, commandTimeoutMs: 1000, connectTimeoutMs: 500 }));
  }

  get incoming(): RedisDrivers['incoming'] {
    return this.drivers.incoming;
  }

  get series(): RedisDrivers['series'] {
    return this.drivers.series;
  }

  async lease(shard: Shard): Promise<Lease> {
    const fence = await this.drivers.coordinator.lock(shard, 60_000);
    if (fence === null) throw new Error(`shard ${shard} is held`);
    return { shard, fence };
  }

  async createMetric(): Promise<void> {}

  deleteMetric(id: string): Promise<void> {
    return this.drivers.series.markDeleted(id);
  }

  /** Redis restarted; the same client reconnects by itself. */
  async restart(): Promise<void> {
    await this.engine.restart();
    await until(() => this.drivers.client.status === 'ready', 10_000);
  }

  async close(): Promise<void> {
    await this.drivers.close().catch(() => {});
    await this.engine.stop();
  }
}

export const IMPLEMENTATIONS: Implementation[] = [
  { name: 'LMDB', missing: undefined, open: async () => new LmdbSubject(mkdtempSync(join(tmpdir(), 'gnocchi-drivers-'))) },
  { name: 'Redis', missing: engineMissing('redis'), open: () => RedisSubject.open() },
];
