/**
 * Where processing jobs run: a piscina pool of worker threads (each opens the
 * same LMDB environment), or the calling thread.
 */
import { Piscina } from 'piscina';
import { processMetrics, type ProcessJob, type ProcessResult } from './process-metrics.js';
import type { JobRunner } from './processor.js';
import type { Storage } from './storage.js';

export interface WorkerRunner {
  run: JobRunner;
  destroy(): Promise<void>;
}

export interface ProcessTask {
  dataDir: string;
  jobs: ProcessJob[];
}

/** Compiled worker entry point; from the TypeScript sources (tests), the build's copy. */
function workerFile(name: string): string {
  const here = import.meta.url;
  const url = here.endsWith('.ts') ? new URL(`../dist/workers/${name}.js`, here) : new URL(`../workers/${name}.js`, here);
  return url.href;
}

export function createWorkerRunner(dataDir: string, threads: number): WorkerRunner {
  const pool = new Piscina({ filename: workerFile('process'), minThreads: threads, maxThreads: threads });
  return {
    run: (jobs) => pool.run({ dataDir, jobs } satisfies ProcessTask) as Promise<ProcessResult[]>,
    destroy: () => pool.destroy(),
  };
}

export function inlineRunner(storage: Storage): JobRunner {
  return async (jobs) => processMetrics(storage, jobs);
}
