/**
 * Where a cross-metric query runs: a piscina pool whose workers open the
 * LMDB environment themselves (`workers/aggregates.ts`), or the calling
 * thread. Only the task (ids, policies, the AST) and the result cross.
 */
import { Piscina } from 'piscina';
import { EngineError } from '../errors.js';
import type { Storage } from '../storage.js';
import type { AggregatesResult } from './align.js';
import { runAggregatesTaskSafely, type AggregatesTask, type TaskOutcome } from './task.js';

export interface AggregatesRunner {
  run(task: AggregatesTask): Promise<AggregatesResult>;
  destroy(): Promise<void>;
}

export interface AggregatesWorkerTask {
  dataDir: string;
  task: AggregatesTask;
}

function unwrap(outcome: TaskOutcome): AggregatesResult {
  if (outcome.ok) return outcome.result;
  throw new EngineError(outcome.status, outcome.description);
}

export function inlineAggregatesRunner(storage: Storage): AggregatesRunner {
  return {
    run: async (task) => unwrap(runAggregatesTaskSafely(storage, task)),
    destroy: async () => {},
  };
}

/** Compiled worker entry point; from the TypeScript sources (tests), the build's copy. */
function workerFile(): string {
  const here = import.meta.url;
  const url = here.endsWith('.ts')
    ? new URL('../../dist/workers/aggregates.js', here)
    : new URL('../../workers/aggregates.js', here);
  return url.href;
}

export function workerAggregatesRunner(dataDir: string, threads: number): AggregatesRunner {
  const pool = new Piscina({ filename: workerFile(), minThreads: 1, maxThreads: threads, idleTimeout: 60_000 });
  return {
    run: async (task) => unwrap((await pool.run({ dataDir, task } satisfies AggregatesWorkerTask)) as TaskOutcome),
    destroy: () => pool.destroy(),
  };
}
