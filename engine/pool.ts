/**
 * Where processing jobs run: a piscina pool of worker threads (each opens
 * its own drivers at the location the tasks carry), or the calling thread.
 */
import { Piscina } from 'piscina';
import type { ArchivePolicy } from './archive-policy.js';
import { poolAtomics, type DriversLocation } from './drivers/location.js';
import type { Lease } from './drivers/types.js';
import { revived } from './errors.js';
import type { IncomingRef } from './incoming-batch.js';
import { processMetrics, type ProcessingDrivers, type ProcessJob, type ProcessResult } from './process-metrics.js';
import type { JobRunner } from './processor.js';
import { workerScript } from './worker-script.js';

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

/**
 * A batch as posted to a worker, packed: each policy once rather than once
 * per job, and the refs of all jobs in one typed array (copied as a block)
 * rather than an object each. Structured cloning per job and per ref was a
 * visible share of the main thread's time.
 */
export interface ProcessTask extends Lease {
  drivers: DriversLocation;
  policies: ArchivePolicy[];
  metricIds: string[];
  /** Per job, its policy's index in `policies`. */
  policyIndexes: Uint32Array;
  /** Per job, how many refs it has; they follow the previous job's in `refs`. */
  refCounts: Uint32Array;
  /** Every ref as seq, offset, count. */
  refs: Float64Array;
  /** ProcessJob.settle, the same for every job of a batch: the processor settles metrics in batches of their own. */
  settle?: number;
}

/** Asks a worker to let go of what it keeps for a backlog (its record caches), once the backlog is processed. */
export interface ReleaseTask {
  release: true;
}

export function toTask(drivers: DriversLocation, jobs: ProcessJob[], { shard, fence }: Lease): ProcessTask {
  const indexes = new Map<string, number>();
  const task: ProcessTask = {
    drivers,
    shard,
    fence,
    policies: [],
    metricIds: jobs.map((j) => j.metricId),
    policyIndexes: new Uint32Array(jobs.length),
    refCounts: new Uint32Array(jobs.length),
    refs: new Float64Array(3 * jobs.reduce((n, j) => n + j.refs.length, 0)),
  };
  const settle = jobs[0]?.settle;
  if (settle !== undefined) task.settle = settle;
  let at = 0;
  jobs.forEach(({ policy, refs }, i) => {
    let index = indexes.get(policy.name);
    if (index === undefined) {
      index = task.policies.push(policy) - 1;
      indexes.set(policy.name, index);
    }
    task.policyIndexes[i] = index;
    task.refCounts[i] = refs.length;
    for (const { seq, offset, count } of refs) {
      task.refs[at++] = seq;
      task.refs[at++] = offset;
      task.refs[at++] = count;
    }
  });
  return task;
}

export function fromTask(task: ProcessTask): { jobs: ProcessJob[]; lease: Lease } {
  let at = 0;
  const jobs = task.metricIds.map((metricId, i) => {
    const refs: IncomingRef[] = [];
    for (let n = task.refCounts[i]!; n > 0; n--, at += 3) {
      refs.push({ seq: task.refs[at]!, offset: task.refs[at + 1]!, count: task.refs[at + 2]! });
    }
    const job: ProcessJob = { metricId, policy: task.policies[task.policyIndexes[i]!]!, refs };
    if (task.settle !== undefined) job.settle = task.settle;
    return job;
  });
  return { jobs, lease: { shard: task.shard, fence: task.fence } };
}

/**
 * A batch's results as posted back, packed like its task: a batch of a
 * time-major backlog is hundreds of metrics, and cloning an object per
 * result cost the worker ~0.3 s of a 5 s run in postMessage alone.
 */
export interface PackedResults {
  metricIds: string[];
  /** Per result, consumed, lastSeq and looseRows. */
  numbers: Float64Array;
}

export function packResults(results: ProcessResult[]): PackedResults {
  const numbers = new Float64Array(3 * results.length);
  results.forEach(({ consumed, lastSeq, looseRows }, i) => {
    numbers[3 * i] = consumed;
    numbers[3 * i + 1] = lastSeq;
    numbers[3 * i + 2] = looseRows;
  });
  return { metricIds: results.map((r) => r.metricId), numbers };
}

export function unpackResults({ metricIds, numbers }: PackedResults): ProcessResult[] {
  return metricIds.map((metricId, i) => ({ metricId, consumed: numbers[3 * i]!, lastSeq: numbers[3 * i + 1]!, looseRows: numbers[3 * i + 2]! }));
}

/** What workers/process.ts gets in workerData. */
export interface ProcessWorkerData {
  /** Nice value of the worker threads (engine/thread-priority.ts). */
  nice: number;
}

export function createWorkerRunner(drivers: DriversLocation, threads: number, nice = 0): WorkerRunner {
  const data: ProcessWorkerData = { nice };
  const pool = new Piscina({ ...workerScript('process', data), minThreads: threads, maxThreads: threads, atomics: poolAtomics(drivers) });
  return {
    run: (jobs, lease) =>
      (pool.run(toTask(drivers, jobs, lease)) as Promise<PackedResults>).then(unpackResults, (err: unknown) => {
        throw revived(err);
      }),
    utilization: () => pool.utilization,
    release: () => Promise.all(Array.from({ length: threads }, () => pool.run({ release: true } satisfies ReleaseTask) as Promise<number>)),
    destroy: () => pool.destroy(),
  };
}

export function inlineRunner(drivers: ProcessingDrivers): JobRunner {
  return (jobs, lease) => processMetrics(drivers, jobs, lease);
}
