/**
 * Where processing jobs run: a piscina pool of worker threads (each opens
 * its own drivers at the location the tasks carry), or the calling thread.
 */
import { Piscina } from 'piscina';
import { poolAtomics, type DriversLocation } from './drivers/location.js';
import type { Lease } from './drivers/types.js';
import { revived } from './errors.js';
import type { JobBatch, PackedResults } from './job-batch.js';
import { processBatch, type ProcessingDrivers } from './process-metrics.js';
import type { JobRunner } from './processor.js';
import { recordCacheBytes } from './record-cache.js';
import { destroyOnceLoaded, workerScript, youngGeneration } from './worker-script.js';

/**
 * Young generation (MB) of a processing thread. Most of what a batch
 * allocates (its jobs, their points, the rows and chunks it encodes) dies
 * with the batch; with the 2 MB the server's flag gives every thread, a
 * thread scavenged ~95 times in a bench:protocols prom run (140 ms) against
 * 16 (53 ms), and bench:processing's series-major rounds took a quarter
 * less CPU (bench/RESULTS.md, session 31), for ~20 MB more peak RSS.
 */
export const PROCESSING_YOUNG_GENERATION_MB = 48;

export interface WorkerRunner {
  run: JobRunner;
  /** piscina's utilization: task time over the pool's capacity since it started. */
  utilization(): number;
  /**
   * The workers let go of their record caches (the backlog is processed):
   * each idle one takes one of as many tasks as there are threads (a busy
   * one may leave its task to another and keep its cache until the next
   * call). Resolves to the threads that took them.
   */
  release(): Promise<number[]>;
  destroy(): Promise<void>;
}

/** A batch as posted to a worker: packed (engine/job-batch.ts), with where the worker's drivers open and the lease. */
export interface ProcessTask extends Lease, JobBatch {
  drivers: DriversLocation;
}

/** Asks a worker to let go of what it keeps for a backlog (its record caches), once the backlog is processed. */
export interface ReleaseTask {
  release: true;
}

export function toTask(drivers: DriversLocation, batch: JobBatch, { shard, fence }: Lease): ProcessTask {
  return { drivers, shard, fence, ...batch };
}

/** What workers/process.ts gets in workerData. */
export interface ProcessWorkerData {
  /** Nice value of the worker threads (engine/thread-priority.ts). */
  nice: number;
  /** Bytes of each thread's record cache (record-cache.ts recordCacheBytes). */
  recordCacheBytes: number;
}

export function createWorkerRunner(drivers: DriversLocation, threads: number, nice = 0, cacheBytes = recordCacheBytes(0)): WorkerRunner {
  const data: ProcessWorkerData = { nice, recordCacheBytes: cacheBytes };
  const pool = new Piscina({
    ...workerScript('process', data),
    ...youngGeneration(PROCESSING_YOUNG_GENERATION_MB),
    minThreads: threads,
    maxThreads: threads,
    atomics: poolAtomics(drivers),
  });
  return {
    run: (batch, lease) =>
      (pool.run(toTask(drivers, batch, lease)) as Promise<PackedResults>).catch((err: unknown) => {
        throw revived(err);
      }),
    utilization: () => pool.utilization,
    release: () => Promise.all(Array.from({ length: threads }, () => pool.run({ release: true } satisfies ReleaseTask) as Promise<number>)),
    destroy: destroyOnceLoaded(pool),
  };
}

export function inlineRunner(drivers: ProcessingDrivers, cacheBytes = recordCacheBytes(0)): JobRunner {
  return (batch, lease) => processBatch(drivers, batch, lease, cacheBytes);
}
