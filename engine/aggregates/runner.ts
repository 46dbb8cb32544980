/**
 * Where a cross-metric query runs: a piscina pool whose workers open their
 * own drivers (`workers/aggregates.ts`), or the calling thread. Only the
 * task (ids, policies, the AST) and the result cross.
 */
import type { DecodedSplitCache } from '../decoded-splits.js';
import { poolAtomics, type DriversLocation } from '../drivers/location.js';
import type { SeriesStore } from '../drivers/types.js';
import { Piscina } from 'piscina';
import { destroyOnceLoaded, workerScript, youngGeneration } from '../worker-script.js';
import type { ArchivePolicy } from '../archive-policy.js';
import { EngineError } from '../errors.js';
import type { AggregatesResult } from './align.js';
import { loadAndRunAggregatesTask, type AggregatesTask, type SeriesRef, type TaskOutcome } from './task.js';

/**
 * Young generation (MB) of an aggregates thread: what the server's
 * `--max-semi-space-size=1` gives every thread (V8 sizes a young generation
 * at three semi-spaces), which the processing pool's clears.
 */
const AGGREGATES_YOUNG_GENERATION_MB = 3;

export interface AggregatesRunner {
  run(task: AggregatesTask): Promise<AggregatesResult>;
  destroy(): Promise<void>;
}

/**
 * A task as it crosses to a worker. Structured cloning costs per object, on
 * the main thread: each distinct policy goes once and the references go as
 * columns of primitives (a 100-series task is ~700 objects fewer).
 */
export interface WireTask {
  task: Omit<AggregatesTask, 'refs'>;
  policies: ArchivePolicy[];
  policyOf: number[];
  metricIds: string[];
  aggregations: string[];
  keyNames: string[];
  keyAggregations: string[];
  /** Per reference, its `intervals` or null. */
  intervals: (SeriesRef['intervals'] | null)[];
  /** Per reference, its `newest` or null. */
  newest: (number | null)[];
}

export interface AggregatesWorkerTask {
  drivers: DriversLocation;
  wire: WireTask;
}

export function packTask({ refs, ...task }: AggregatesTask): WireTask {
  const wire: WireTask = {
    task,
    policies: [],
    policyOf: [],
    metricIds: [],
    aggregations: [],
    keyNames: [],
    keyAggregations: [],
    intervals: [],
    newest: [],
  };
  const index = new Map<ArchivePolicy, number>();
  for (const ref of refs) {
    let i = index.get(ref.policy);
    if (i === undefined) {
      i = wire.policies.push(ref.policy) - 1;
      index.set(ref.policy, i);
    }
    wire.policyOf.push(i);
    wire.metricIds.push(ref.metricId);
    wire.aggregations.push(ref.aggregation);
    wire.keyNames.push(ref.key[0]);
    wire.keyAggregations.push(ref.key[1]);
    wire.intervals.push(ref.intervals ?? null);
    wire.newest.push(ref.newest ?? null);
  }
  return wire;
}

/** The task a worker runs: what reading and evaluating use (the reported names stay on the main thread). */
export function unpackTask(wire: WireTask): AggregatesTask {
  const refs: SeriesRef[] = wire.metricIds.map((metricId, i) => {
    const intervals = wire.intervals[i];
    const newest = wire.newest[i];
    return {
      metricId,
      policy: wire.policies[wire.policyOf[i]!]!,
      aggregation: wire.aggregations[i]!,
      key: [wire.keyNames[i]!, wire.keyAggregations[i]!],
      name: metricId,
      ...(intervals === null || intervals === undefined ? {} : { intervals }),
      ...(newest === null || newest === undefined ? {} : { newest }),
    };
  });
  return { ...wire.task, refs };
}

function unwrap(outcome: TaskOutcome): AggregatesResult {
  if (outcome.ok) return outcome.result;
  throw new EngineError(outcome.status, outcome.description);
}

export function inlineAggregatesRunner(series: SeriesStore, decoded?: DecodedSplitCache): AggregatesRunner {
  return {
    run: async (task) => unwrap(await loadAndRunAggregatesTask(series, task, decoded)),
    destroy: async () => {},
  };
}

/** What workers/aggregates.ts gets in workerData. */
export interface AggregatesWorkerData {
  /** Budget of each worker's decoded split cache, bytes. */
  splitCacheSize: number;
}

export function workerAggregatesRunner(drivers: DriversLocation, threads: number, splitCacheSize = 0): AggregatesRunner {
  const data: AggregatesWorkerData = { splitCacheSize };
  const pool = new Piscina({
    ...workerScript('aggregates', data),
    ...youngGeneration(AGGREGATES_YOUNG_GENERATION_MB),
    minThreads: 1,
    maxThreads: threads,
    idleTimeout: 60_000,
    atomics: poolAtomics(drivers),
  });
  return {
    run: async (task) => unwrap((await pool.run({ drivers, wire: packTask(task) } satisfies AggregatesWorkerTask)) as TaskOutcome),
    destroy: destroyOnceLoaded(pool),
  };
}
