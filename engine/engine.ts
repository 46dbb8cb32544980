/**
 * The engine facade the server talks to: storage, index, the drivers of
 * measures and aggregates, and the processor wired together, plus the
 * operations that span them. In the embedded mode every driver is LMDB's,
 * in the same environment as the index.
 */
import { statfsSync } from 'node:fs';
import { Activity } from './activity.js';
import { defaultArchivePolicies, type ArchivePolicy } from './archive-policy.js';
import { AggregationDoesNotExist, AggregationMethodDoesNotExist, BacklogFull, BadRequest, NoSuchMetric, StorageFull } from './errors.js';
import type { MetricRecord } from './index.js';
import { fullCollection, IdleCollection } from './idle-collection.js';
import { mallocTrim } from './malloc-trim.js';
import { releaseRecordCaches } from './process-metrics.js';
import { createWorkerRunner, inlineRunner, type WorkerRunner } from './pool.js';
import { Processor, type JobRunner } from './processor.js';
import type { Progress } from './progress.js';
import { readMeasures, readRanges, type AggregatedSeries, type ReadOptions } from './read-measures.js';
import { recordCacheBytes } from './record-cache.js';
import { withSnapshot } from './drivers/snapshot-rounds.js';
import { ReadCache, readKey } from './read-cache.js';
import { serializePoints } from '../formats/points-json.js';
import { DecodedSplitCache } from './decoded-splits.js';
import { lmdbDrivers } from './drivers/lmdb/drivers.js';
import type { Backends, ClusterOptions } from './cluster.js';
import type { DriversLocation } from './drivers/location.js';
import { LmdbIndexStore, type LmdbIndexHooks } from './drivers/lmdb/index-store.js';
import type { IndexStore } from './drivers/index-store.js';
import type { Drivers, IncomingLog, SeriesRange, SeriesSnapshot, Shard } from './drivers/types.js';
import { encodeIncomingPoints, incomingPoints, type IncomingPoints } from './incoming-batch.js';
import { failpoint, FAILPOINTS_ARMED } from './failpoints.js';
import { newMetricId } from './metric-id.js';
import { upgradeFormat } from './format-upgrade.js';
import { DEFAULT_MAP_SIZE, openStorage, type Storage } from './storage.js';
import type { Series } from './aggregation.js';

export interface EngineOptions {
  dataDir: string;
  /** Seed Gnocchi's default policies and rule into a new data directory. */
  defaultArchivePolicies: boolean;
  defaultAggregationMethods: readonly string[];
  /** Worker threads for processing; 0 processes on the main thread. */
  workers: number;
  processingIntervalMs: number;
  /** See ProcessorOptions.reorderWindowMs; 0 or absent: no wait. */
  reorderWindowMs?: number;
  /** See ProcessorOptions.settleAfterMs; 0 or absent: never. */
  settleAfterMs?: number;
  mapSize?: number;
  /**
   * Pushes are refused (503) while more measures than this wait to be
   * processed; 0 or absent: no bound.
   */
  maxBacklog?: number;
  /** Bytes of encoded read answers kept (engine/read-cache.ts); 0 or absent: none. */
  readCacheSize?: number;
  /** Nice value of the processing worker threads (engine/thread-priority.ts); 0 or absent: the server's. */
  processingNice?: number;
  /** Bytes of decoded sealed splits kept for reads (engine/decoded-splits.ts); 0 or absent: none. */
  splitCacheSize?: number;
  /** Told the advance of the format upgrades and index builds that opening may run; absent: silent. */
  progress?: Progress;
  /**
   * The engines of a cluster this node joins; absent: everything in LMDB
   * in `dataDir` (in cluster mode the directory holds nothing the cluster
   * needs).
   */
  cluster?: ClusterOptions;
}

/**
 * A read of one metric as the API states it: one granularity or all,
 * pending measures processed first or not; `cache: false` for a read that
 * will not come again (its times relative to now): the read cache is
 * neither asked nor filled.
 */
export type MeasuresOptions = Omit<ReadOptions, 'granularities'> & { granularity?: number; refresh?: boolean; cache?: boolean };

/** Room a push leaves on the file system at least (see Engine.checkDisk). */
const DISK_MARGIN = 8 * 1024 ** 2;

/** Less than the larger of 64 MB and 1% of the filesystem left to unprivileged writers. */
function diskNearlyFull(dir: string): boolean {
  const fs = statfsSync(dir);
  return fs.bavail * fs.bsize < Math.max(64 * 1024 ** 2, 0.01 * fs.blocks * fs.bsize);
}

/**
 * A failed commit as a 507 when the disk or the map is full. lmdb-js rejects
 * a failed asynchronous commit with a generic "Commit failed" error whose
 * `commitError` promise carries the cause (`code` 28, "No space left on
 * device"); awaiting it here also keeps it from going unhandled. On a full
 * disk LMDB's page writes fail with EIO (`code` 5) rather than ENOSPC
 * (seen on ext4 and tmpfs), hence the look at the free space.
 */
async function storageFullOr(err: unknown, dataDir: string): Promise<unknown> {
  const commitError = (err as { commitError?: unknown } | null)?.commitError;
  const cause = commitError instanceof Promise ? await commitError.then(() => err, (e: unknown) => e) : err;
  const message = cause instanceof Error ? cause.message : String(cause);
  const code = (cause as { code?: unknown } | null)?.code;
  if (code === 28 || /MDB_MAP_FULL|ENOSPC|No space left/.test(message)) return new StorageFull(message);
  // From a worker thread the error arrives cloned, without its code.
  const io = code === 5 || /Input\/output error|\bEIO\b/.test(message);
  if (io && diskNearlyFull(dataDir)) return new StorageFull(`no space left on device (${message})`);
  return err;
}

/**
 * The metrics of a push that have points, by shard, as indices into
 * `points`; undefined when one shard takes them all (the usual case: no
 * index list).
 */
function byShard(incoming: IncomingLog, points: IncomingPoints): Map<Shard, number[] | undefined> {
  const { metricIds, count } = points;
  if (incoming.shards === 1 && metricIds.length > 0 && count.indexOf(0) === -1) return new Map([[0, undefined]]);
  const shards = new Map<Shard, number[]>();
  for (let i = 0; i < metricIds.length; i++) {
    if (count[i] === 0) continue;
    const shard = incoming.shardOf(metricIds[i]!);
    const part = shards.get(shard);
    if (part === undefined) shards.set(shard, [i]);
    else part.push(i);
  }
  return shards;
}

/** This node's view of the cluster for /v1/status, from the nodes' last heartbeats. */
export interface ClusterStatus {
  nodes: ({ id: string } & NodeReport)[];
  /** Shard -> node holding its lease. */
  holders: Record<string, string>;
  metrics: number;
  measures: number;
  lagSeconds: number;
}

/** What a node reports with its heartbeat. */
interface NodeReport {
  shards: Shard[];
  metrics: number;
  measures: number;
  lagSeconds: number;
  /** Its commits refused since it started (Processor.fencedCommits). */
  fencedCommits: number;
}

/** The embedded mode's engines: one LMDB environment. */
function embeddedBackends(storage: Storage, options: EngineOptions, hooks: LmdbIndexHooks): Backends {
  const drivers = lmdbDrivers(storage, options.dataDir);
  return {
    drivers,
    index: new LmdbIndexStore(storage, { ...hooks, ...(options.progress === undefined ? {} : { progress: options.progress }) }),
    location: { kind: 'lmdb', dataDir: options.dataDir },
    close: () => drivers.incoming.close(),
  };
}

/** Milliseconds between looks at the other nodes' reports (the cluster's backlog). */
const CLUSTER_LOOK_MS = 1000;

export class Engine {
  readonly drivers: Drivers;
  readonly index: IndexStore;
  readonly processor: Processor;
  readonly readCache: ReadCache;
  readonly decodedSplits: DecodedSplitCache;
  readonly activity = new Activity();
  /** Where worker threads open their own drivers. */
  readonly location: DriversLocation;
  private readonly pool: WorkerRunner | undefined;
  /** Policy writes finished: a read that saw this number change while it ran does not go into the read cache. */
  private policyWrites = 0;
  /** The cluster as the nodes last reported it (cluster mode). */
  private cluster: ClusterStatus | undefined;
  private clusterTimer: NodeJS.Timeout | undefined;
  private readonly idleCollection: IdleCollection;

  private constructor(
    readonly options: EngineOptions,
    readonly storage: Storage,
    private readonly backends: Backends,
  ) {
    this.drivers = backends.drivers;
    this.index = backends.index;
    this.location = backends.location;
    // Answers are invalidated by this node's processing only: another node's commits would leave them stale.
    this.readCache = new ReadCache(options.cluster === undefined ? (options.readCacheSize ?? 0) : 0);
    this.decodedSplits = new DecodedSplitCache(options.splitCacheSize ?? 0);
    let runner: JobRunner;
    const cacheBytes = recordCacheBytes(options.maxBacklog ?? 0);
    if (options.workers > 0) {
      this.pool = createWorkerRunner(this.location, options.workers, options.processingNice ?? 0, cacheBytes);
      runner = this.pool.run;
    } else {
      runner = inlineRunner(this.drivers, cacheBytes);
    }
    this.processor = new Processor({
      drivers: this.drivers,
      index: this.index,
      runner,
      parallelism: Math.max(1, options.workers),
      intervalMs: options.processingIntervalMs,
      reorderWindowMs: options.reorderWindowMs ?? 0,
      settleAfterMs: options.settleAfterMs ?? 0,
      batchSize: 256,
      onError: (err) => console.error('processing failed:', err),
      onCommitted: (ids) => this.readCache.invalidate(ids),
      activity: this.activity,
      ...(options.cluster === undefined ? {} : { leaseMs: options.cluster.leaseMs }),
    });
    const collect = fullCollection();
    this.idleCollection = new IdleCollection({
      work: () => this.activity.measuresAccepted + this.activity.measuresProcessed,
      idle: () => this.processor.pendingMeasureCount() === 0,
      // The record caches go first (their backlog is processed), so that the collection and the trim give
      // back their pages too. A pool being destroyed (the engine closing) refuses the tasks: nothing to give back then.
      collect: () => {
        const released = this.pool === undefined ? Promise.resolve(releaseRecordCaches()) : this.pool.release();
        released.then(() => {
          collect();
          mallocTrim();
        }, () => {});
      },
    });
    this.idleCollection.start();
  }

  static async open(options: EngineOptions): Promise<Engine> {
    const storage = openStorage(options.dataDir, options.mapSize === undefined ? {} : { mapSize: options.mapSize });
    // The index may report deletions before the engine exists (never in practice: it is opened, not written to).
    let engine: Engine | undefined;
    const onMetricsDeleted = async (ids: string[]) => engine?.metricsDeleted(ids);
    const seed = options.defaultArchivePolicies
      ? { policies: defaultArchivePolicies(options.defaultAggregationMethods), rules: [{ name: 'default', metricPattern: '*', archivePolicyName: 'low' }] }
      : undefined;
    let backends: Backends;
    try {
      if (options.cluster === undefined) {
        upgradeFormat(storage, options.progress);
        backends = embeddedBackends(storage, options, { onPoliciesChanged: () => engine?.policiesChanged(), onMetricsDeleted });
      } else {
        // Loaded only in cluster mode: the PostgreSQL and Redis clients cost the embedded mode's start-up ~200 ms.
        const { clusterBackends } = await import('./cluster.js');
        backends = await clusterBackends(options.cluster, seed, {
          onMetricsDeleted,
          report: () => engine?.report() ?? null,
          onError: (err) => console.error('cluster coordination:', err),
        });
      }
    } catch (err) {
      await storage.close();
      throw err;
    }
    engine = new Engine(options, storage, backends);
    if (options.cluster === undefined && seed !== undefined && storage.meta.get('seeded') === undefined) {
      await engine.index.ensurePolicies(seed.policies, seed.rules);
      await storage.meta.put('seeded', true);
    }
    await engine.processor.open();
    engine.processor.start();
    if (options.cluster !== undefined) {
      await engine.lookAtCluster();
      engine.clusterTimer = setInterval(() => void engine!.lookAtCluster(), CLUSTER_LOOK_MS).unref();
    }
    return engine;
  }

  private policiesChanged(): void {
    this.policyWrites++;
    this.readCache.clear();
  }

  private report(): NodeReport {
    const { metrics, measures } = this.processor.backlog(false);
    const { processor } = this;
    return { shards: processor.heldShards(), metrics, measures, lagSeconds: processor.processingLag(), fencedCommits: processor.fencedCommits() };
  }

  /** Takes in the nodes' last reports; a failure (Redis down) keeps the previous view. */
  private async lookAtCluster(): Promise<void> {
    const members = this.backends.members;
    if (members === undefined) return;
    let reports: Map<string, unknown>;
    try {
      reports = await members.reports();
    } catch {
      return;
    }
    const status: ClusterStatus = { nodes: [], holders: {}, metrics: 0, measures: 0, lagSeconds: 0 };
    for (const [id, raw] of reports) {
      if (raw === null) continue;
      const report = raw as NodeReport;
      status.nodes.push({ id, ...report });
      for (const shard of report.shards) status.holders[shard] = id;
      status.metrics += report.metrics;
      status.measures += report.measures;
      status.lagSeconds = Math.max(status.lagSeconds, report.lagSeconds);
    }
    this.cluster = status;
  }

  /** The cluster as its nodes last reported (cluster mode; undefined embedded). */
  clusterStatus(): ClusterStatus | undefined {
    return this.cluster;
  }

  /** Split objects this node's janitor deleted since start (cluster mode with an object store; undefined otherwise). */
  janitorDeletedObjects(): number | undefined {
    return this.backends.janitorDeleted?.();
  }

  /** Share of the processing workers' time spent on tasks since they started (0..1); undefined when processing runs inline. */
  workerUtilization(): number | undefined {
    return this.pool?.utilization();
  }

  async close(): Promise<void> {
    clearInterval(this.clusterTimer);
    this.idleCollection.stop();
    await this.processor.close();
    await this.pool?.destroy();
    await this.backends.close();
    await this.storage.close();
  }

  newMetricId(): string {
    return newMetricId();
  }

  async getMetricOrThrow(id: string): Promise<MetricRecord> {
    const metric = await this.index.getMetric(id);
    if (metric === undefined) throw new NoSuchMetric(id);
    return metric;
  }

  async policyOf(metric: MetricRecord): Promise<ArchivePolicy> {
    const policy = await this.index.getPolicy(metric.archivePolicyName);
    if (policy === undefined) throw new Error(`Metric ${metric.id} has no policy ${metric.archivePolicyName}`);
    return policy;
  }

  /** The policies of these metrics by name, in one round of lookups. */
  async policiesOf(metrics: Iterable<MetricRecord>): Promise<Map<string, ArchivePolicy>> {
    const names = [...new Set(Array.from(metrics, (m) => m.archivePolicyName))];
    const policies = await Promise.all(names.map((name) => this.index.getPolicy(name)));
    const out = new Map<string, ArchivePolicy>();
    names.forEach((name, i) => {
      const policy = policies[i];
      if (policy === undefined) throw new Error(`No policy ${name}`);
      out.set(name, policy);
    });
    return out;
  }

  /** Deletes the metric; its series go through the index's onMetricsDeleted hook. */
  deleteMetric(id: string): Promise<void> {
    return this.index.deleteMetric(id);
  }

  /**
   * After the commit that deleted these metrics: their series go too, and
   * from then on no processing commit writes them again.
   */
  private async metricsDeleted(ids: string[]): Promise<void> {
    for (const id of ids) this.processor.forget(id);
    this.readCache.invalidate(ids);
    await this.drivers.series.drop(ids);
  }

  /**
   * Appends measures to the incoming log, one record per shard, and resolves
   * once they are durable: only then may the client be told 202.
   */
  addMeasures(batches: Map<string, Series>): Promise<void> {
    return this.addPoints(incomingPoints(batches));
  }

  /** addMeasures, the points given in columns (the collector routes). */
  async addPoints(points: IncomingPoints): Promise<void> {
    const { incoming } = this.drivers;
    const shards = byShard(incoming, points);
    if (shards.size === 0) return;
    this.checkBacklog();
    const records = [...shards].map(([shard, which]) => ({ shard, ...encodeIncomingPoints(points, which) }));
    const bytes = records.reduce((n, r) => n + r.bytes.length, 0);
    // The data directory's room matters only where the measures go into it.
    if (this.options.cluster === undefined) {
      this.checkSpace(bytes);
      this.checkDisk(bytes);
    }
    let seqs: Map<Shard, number>;
    try {
      seqs = await incoming.append(new Map(records.map((r) => [r.shard, r.bytes])));
    } catch (err) {
      throw await storageFullOr(err, this.options.dataDir);
    }
    if (FAILPOINTS_ARMED) await failpoint('push.appended');
    for (const { shard, entries } of records) {
      this.processor.noteIncoming(shard, seqs.get(shard)!, entries);
      // Indexed: run once per push, too rarely to be optimized, a for-of allocates a result per metric.
      const { counts } = entries;
      for (let i = 0; i < counts.length; i++) this.activity.measuresAccepted += counts[i]!;
    }
  }

  /**
   * Refuses a push (507) while the file system has less room than a margin
   * for it, rather than letting LMDB's commit fail: a failing commit is
   * costly, and lmdb-js was seen to abort the process (heap corruption)
   * after many failed commits in a row. One statfs per push.
   */
  private checkDisk(bytes: number): void {
    const free = this.freeDiskBytes();
    if (free < Math.max(16 * bytes, DISK_MARGIN)) throw new StorageFull(`no space left on device (${free} bytes free)`);
  }

  /** Room left to this process on the data directory's file system. */
  freeDiskBytes(): number {
    const fs = statfsSync(this.options.dataDir);
    return fs.bavail * fs.bsize;
  }

  /** The database file's high-water mark: the pages it spans, free ones included. */
  fileBytes(): number {
    const stats = this.storage.root.getStats() as { lastPageNumber: number; pageSize: number };
    return (stats.lastPageNumber + 1) * stats.pageSize;
  }

  /**
   * Refuses a push while the backlog is past the bound; a push that takes it
   * past is still accepted, so a batch larger than the bound can get in.
   * Processing usually catches up within a round, hence retry after 1 s.
   */
  private checkBacklog(): void {
    const limit = this.options.maxBacklog ?? 0;
    // The cluster's, as last reported by its nodes: within a heartbeat of the truth.
    const backlog = Math.max(this.processor.pendingMeasureCount(), this.cluster?.measures ?? 0);
    if (limit > 0 && backlog >= limit) throw new BacklogFull(backlog, limit, 1);
  }

  /**
   * lmdb-js grows its map past `mapSize` on demand (its LMDB allocates more
   * pages instead of failing with MDB_MAP_FULL), so the configured map size
   * is enforced here, for pushes, whose processing writes into the map:
   * refuse (507) when the pages in use plus this push's bytes would pass it.
   * The file's high-water mark is checked first (cheap); only past it are
   * the pages in use counted, so pushes resume once pages are freed.
   * Processing and index writes are not limited: they must not fail
   * half-way.
   */
  private checkSpace(bytes: number): void {
    const limit = this.options.mapSize ?? DEFAULT_MAP_SIZE;
    if (this.fileBytes() + bytes <= limit) return;
    const { pageSize } = this.storage.root.getStats() as { pageSize: number };
    let pages = 0;
    for (const db of Object.values(this.storage) as unknown[]) {
      const s = (db as { getStats?: () => unknown }).getStats?.() as
        | { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number; free?: { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number } }
        | undefined;
      if (s === undefined) continue;
      pages += s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages;
      if (db === this.storage.root && s.free !== undefined) pages += s.free.treeBranchPageCount + s.free.treeLeafPageCount + s.free.overflowPages;
    }
    if (pages * pageSize + bytes > limit) {
      throw new StorageFull(`the database is full: ${pages * pageSize} bytes in use, map size ${limit} bytes (--map-size)`);
    }
  }

  /** Processes these metrics' pending measures now (`refresh=true`); a full disk is a 507. */
  async refresh(metricIds: string[]): Promise<void> {
    try {
      await this.processor.refresh(metricIds);
    } catch (err) {
      throw await storageFullOr(err, this.options.dataDir);
    }
  }

  /** Checks the method and granularities against the metric's policy, then reads. */
  async getMeasures(metric: MetricRecord, options: MeasuresOptions): Promise<AggregatedSeries[]> {
    const { policy, read } = await this.resolveRead(metric, options);
    return this.withSeries([metric.id], readRanges(metric.id, read.granularities, read.start, read.stop), (snapshot) => this.readSeries(snapshot, metric, policy, read));
  }

  /** getMeasures' answer as JSON (see readJson). */
  async getMeasuresJson(metric: MetricRecord, options: MeasuresOptions): Promise<Buffer> {
    // Counted before the policy is read: a policy write finishing after that may leave it stale.
    const policyWrites = this.policyWrites;
    const { policy, read } = await this.resolveRead(metric, options);
    return this.readJsonWith(metric, policy, read, policyWrites, options.cache);
  }

  /** A read of `metric` as JSON, through the read cache unless `cache` is false (see readJsonWith). */
  async readJson(metric: MetricRecord, read: ReadOptions, cache = true): Promise<Buffer> {
    const policyWrites = this.policyWrites;
    return this.readJsonWith(metric, await this.policyOf(metric), read, policyWrites, cache);
  }

  /**
   * A read of `metric` as JSON (formats/points-json.ts), from the read
   * cache when the same read was answered since the metric's data or policy
   * last changed (answers are kept from the second time a read is asked:
   * see ReadCache.admit). Nothing awaits between the read and the store
   * (the snapshot is loaded before), so no change can come in between. The
   * cache is bypassed while a batch holding the metric is being processed
   * (its worker may have committed, and this thread's snapshot may see the
   * commit before the processor hears of it and invalidates) and when a
   * policy change was pending or finished since `policyWrites` was counted,
   * before the policy was read (the same, for the index's clear).
   */
  private async readJsonWith(metric: MetricRecord, policy: ArchivePolicy, read: ReadOptions, policyWrites: number, cache = true): Promise<Buffer> {
    const policiesChanging = cache && (await this.index.policiesChanging());
    return this.withSeries([metric.id], readRanges(metric.id, read.granularities, read.start, read.stop), (snapshot) => {
      const fresh = () => serializePoints(this.readSeries(snapshot, metric, policy, read));
      if (!cache || policiesChanging || policyWrites !== this.policyWrites || this.processor.isProcessing(metric.id)) return fresh();
      const key = readKey(read);
      const cached = this.readCache.get(metric.id, key);
      if (cached !== undefined) return cached;
      const answer = fresh();
      if (this.readCache.admit(metric.id, key)) this.readCache.set(metric.id, key, answer);
      return answer;
    });
  }

  /** A snapshot of these metrics' series, for readSeries; release it once read. */
  loadSeries(metricIds: readonly string[]): Promise<SeriesSnapshot> {
    return this.drivers.series.load(metricIds);
  }

  /** `compute` on a snapshot of these metrics' series holding at least `ranges`' sealed splits (see withSnapshot). */
  withSeries<T>(metricIds: readonly string[], ranges: readonly SeriesRange[], compute: (snapshot: SeriesSnapshot) => T): Promise<T> {
    return withSnapshot(this.drivers.series, metricIds, ranges, compute);
  }

  /** Reads from a snapshot, through this thread's decoded splits; `policy` is the metric's (policyOf). */
  readSeries(snapshot: SeriesSnapshot, metric: MetricRecord, policy: ArchivePolicy, read: ReadOptions): AggregatedSeries[] {
    return readMeasures(snapshot, metric.id, policy, read, this.decodedSplits);
  }

  /** Checks the method and granularities against the metric's policy, processes pending measures when asked: the read to make. */
  private async resolveRead(metric: MetricRecord, options: MeasuresOptions): Promise<{ policy: ArchivePolicy; read: ReadOptions }> {
    const policy = await this.policyOf(metric);
    if (!policy.aggregationMethods.includes(options.method)) {
      throw new AggregationMethodDoesNotExist(metric.id, options.method);
    }
    let granularities = policy.definition.map((d) => d.granularity);
    if (options.granularity !== undefined) {
      if (!granularities.includes(options.granularity)) {
        throw new AggregationDoesNotExist(metric.id, options.method, options.granularity / 1e6);
      }
      granularities = [options.granularity];
    }
    if (typeof options.resample === 'string' && options.method.startsWith('rate:')) {
      throw new BadRequest('Cannot derive aggregates on calendar granularities.');
    }
    if (options.refresh && this.processor.hasPending(metric.id)) await this.refresh([metric.id]);
    const read: ReadOptions = { method: options.method, granularities };
    if (options.start !== undefined) read.start = options.start;
    if (options.stop !== undefined) read.stop = options.stop;
    if (options.resample !== undefined) read.resample = options.resample;
    return { policy, read };
  }
}
