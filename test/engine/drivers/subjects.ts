/**
 * The driver implementations the contract suite runs its cases against,
 * each behind the same handle: its incoming log and series store, a lease
 * on a shard, the index's part (a metric created, deleted), and a restart
 * of what holds the data. The Redis drivers run twice more with sealed
 * splits in an object store (Ceph RGW, Swift's s3api): one store per test
 * file, started at the first subject that needs it (Ceph takes ~20 s), a
 * bucket of its own per subject.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from './until.js';
import { lmdbDrivers, type LmdbDrivers } from '../../../engine/drivers/lmdb/drivers.js';
import { dropSeries } from '../../../engine/drivers/lmdb/series.js';
import { redisDrivers, type RedisDrivers } from '../../../engine/drivers/redis/drivers.js';
import type { IncomingLog, Lease, SeriesStore, Shard } from '../../../engine/drivers/types.js';
import { openStorage, type Storage } from '../../../engine/storage.js';
import { engineMissing, startObjectStore, startRedis, type Engine, type ObjectStoreKind } from '../../cluster/engines.js';

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
  /** Stops what the subjects shared (an object store), after the file's last test. */
  shutdown?(): Promise<void>;
}

class LmdbSubject implements Subject {
  private storage: Storage;
  private drivers: LmdbDrivers;

  constructor(private readonly dir: string) {
    this.storage = openStorage(dir);
    this.drivers = lmdbDrivers(this.storage, dir);
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
    await this.storage.metrics.put(id, { id, name: null, unit: null, archivePolicyName: 'low', creator: 'driver-tests', resourceId: null });
  }

  async deleteMetric(id: string): Promise<void> {
    await this.storage.root.transaction(() => {
      void this.storage.metrics.remove(id);
      dropSeries(this.storage, id);
    });
  }

  async restart(): Promise<void> {
    await this.drivers.incoming.close();
    await this.storage.close();
    this.storage = openStorage(this.dir);
    this.drivers = lmdbDrivers(this.storage, this.dir);
  }

  async close(): Promise<void> {
    await this.drivers.incoming.close();
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

  /** Drivers on `engine` (default: a Redis of its own), with splits in the object store at `splits` when given. */
  static async open(engine?: Engine, nodeId = 'node-a', splits?: string): Promise<RedisSubject> {
    const redis = engine ?? (await startRedis());
    const location = { incoming: redis.url, series: redis.url, shards: REDIS_SHARDS, ...(splits === undefined ? {} : { splits }) };
    return new RedisSubject(redis, await redisDrivers(location, { nodeId, commandTimeoutMs: 1000, connectTimeoutMs: 500, objectStore: { connectTimeoutMs: 500, requestTimeoutMs: 2000 } }));
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

/** `url` (an object store's, bucket `gnocchi`) with a fresh bucket. */
export function freshBucket(url: string): string {
  return url.replace(/\/gnocchi$/, `/gnocchi-${randomBytes(6).toString('hex')}`);
}

/** One object store of `kind` for the whole test file, started by the first subject on it. */
export function sharedObjectStore(kind: ObjectStoreKind): { get(): Promise<Engine>; stop(): Promise<void> } {
  let store: Promise<Engine> | undefined;
  return {
    get: () => (store ??= startObjectStore(kind)),
    async stop() {
      if (store !== undefined) await (await store).stop();
      store = undefined;
    },
  };
}

function objectStoreImplementation(kind: ObjectStoreKind, label: string): Implementation {
  const store = sharedObjectStore(kind);
  return {
    name: `Redis + ${label}`,
    missing: engineMissing('redis') ?? engineMissing(kind),
    open: async () => RedisSubject.open(undefined, 'node-a', freshBucket((await store.get()).url)),
    shutdown: () => store.stop(),
  };
}

export const IMPLEMENTATIONS: Implementation[] = [
  { name: 'LMDB', missing: undefined, open: async () => new LmdbSubject(mkdtempSync(join(tmpdir(), 'gnocchi-drivers-'))) },
  { name: 'Redis', missing: engineMissing('redis'), open: () => RedisSubject.open() },
  objectStoreImplementation('ceph', 'Ceph RGW'),
  objectStoreImplementation('swift', 'Swift s3api'),
];
