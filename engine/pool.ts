/**
 * Where processing jobs run: a piscina pool of worker threads (each opens the
 * same LMDB environment), or the calling thread.
 */
import { Piscina } from 'piscina';
import type { ArchivePolicy } from './archive-policy.js';
import { processMetrics, type ProcessJob, type ProcessResult } from './process-metrics.js';
import type { JobRunner } from './processor.js';
import type { Storage } from './storage.js';
import { workerScript } from './worker-script.js';

export interface WorkerRunner {
  run: JobRunner;
  destroy(): Promise<void>;
}

/**
 * A batch as posted to a worker: each policy once rather than once per job,
 * since structured cloning the same policy for hundreds of jobs was a
 * visible share of the main thread's time.
 */
export interface ProcessTask {
  dataDir: string;
  policies: ArchivePolicy[];
  jobs: (Omit<ProcessJob, 'policy'> & { policyName: string })[];
}

export function toTask(dataDir: string, jobs: ProcessJob[]): ProcessTask {
  const policies = new Map(jobs.map((j) => [j.policy.name, j.policy]));
  return { dataDir, policies: [...policies.values()], jobs: jobs.map(({ policy, ...job }) => ({ ...job, policyName: policy.name })) };
}

export function fromTask(task: ProcessTask): ProcessJob[] {
  const policies = new Map(task.policies.map((p) => [p.name, p]));
  return task.jobs.map(({ policyName, ...job }) => ({ ...job, policy: policies.get(policyName)! }));
}

export function createWorkerRunner(dataDir: string, threads: number): WorkerRunner {
  const pool = new Piscina({ ...workerScript('process'), minThreads: threads, maxThreads: threads });
  return {
    run: (jobs) => pool.run(toTask(dataDir, jobs)) as Promise<ProcessResult[]>,
    destroy: () => pool.destroy(),
  };
}

export function inlineRunner(storage: Storage): JobRunner {
  return async (jobs) => processMetrics(storage, jobs);
}
