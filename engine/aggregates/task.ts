/**
 * One cross-metric query as data: which series to read, where, and what to
 * compute. Planned on the main thread (granularity and method checks against
 * the policies, Gnocchi's `processor.get_measures`), run over a series
 * snapshot of its metrics wherever one is loaded (inline or in a piscina
 * worker), answering only the result.
 */
import type { DecodedSplitCache } from '../decoded-splits.js';
import type { SeriesSnapshot, SeriesStore } from '../drivers/types.js';
import type { ArchivePolicy } from '../archive-policy.js';
import type { Grouping, Series } from '../aggregation.js';
import { EngineError, SnapshotMiss, type ErrorDescription } from '../errors.js';
import { readMeasures, readRanges } from '../read-measures.js';
import { withSnapshot } from '../drivers/snapshot-rounds.js';
import type { OperationNode } from '../../formats/operations-nodes.js';
import { alignAndEvaluate, type AggregatesResult, type Fill, type SamplingInput } from './align.js';
import { unaggregable, unknownAggregation } from './errors.js';
import type { LookupKey } from './evaluate.js';

/** One `(metric, aggregation)` reference, resolved. */
export interface SeriesRef {
  metricId: string;
  policy: ArchivePolicy;
  aggregation: string;
  /** What `metric` nodes match: the id (or the wildcard when selected by name). */
  key: LookupKey;
  /** Reported name: the metric id, or the metric name under a resource. */
  name: string;
  resourceId?: string;
  /**
   * With `use_history`: the half-open time ranges `[from, to)` (µs, may be
   * infinite) in which the resource belonged to the group; points outside
   * are left out. Sorted, disjoint.
   */
  intervals?: readonly (readonly [number, number])[];
  /** In a task cut in time ranges: the newest timestamp of the whole read, from which retention counts. */
  newest?: number;
}

export interface AggregatesTask {
  refs: SeriesRef[];
  /** Microseconds, as the read uses them. */
  granularities: number[];
  start?: number;
  stop?: number;
  /** Resample each series after reading (the `resample` query parameter). */
  resample?: Grouping;
  operations: OperationNode;
  fill?: Fill;
  neededOverlap: number;
}

export type TaskOutcome =
  | { ok: true; result: AggregatesResult }
  | { ok: false; status: number; description: ErrorDescription };

const seconds = (micros: number): number => micros / 1e6;

/**
 * Chooses the granularities (given, or those every reference's policy has)
 * and checks methods and granularities, with Gnocchi's errors and order.
 */
export function planGranularities(refs: readonly SeriesRef[], granularity: number | undefined): number[] {
  let granularities: number[];
  if (granularity === undefined) {
    const counts = new Map<number, number>();
    for (const ref of refs) for (const d of ref.policy.definition) counts.set(d.granularity, (counts.get(d.granularity) ?? 0) + 1);
    granularities = [...counts].filter(([, n]) => n === refs.length).map(([g]) => g);
    if (granularities.length === 0) {
      throw unaggregable(refs.map((r) => [r.name, r.aggregation]), 'No granularity match');
    }
  } else {
    granularities = [granularity];
  }
  const missing: (string | number)[][] = [];
  for (const ref of refs) {
    if (!ref.policy.aggregationMethods.includes(ref.aggregation)) throw unknownAggregation(ref.metricId, ref.aggregation);
    const available = ref.policy.definition.map((d) => d.granularity);
    const g = granularities.find((x) => !available.includes(x));
    if (g !== undefined) missing.push([ref.name, ref.aggregation, seconds(g)]);
  }
  if (missing.length > 0) throw unaggregable(missing, 'Granularities are missing');
  return granularities;
}

/**
 * At most how many points the task reads: per reference and granularity the
 * policy's points, or fewer when both bounds are given; Infinity when a
 * policy keeps points without bound and the window is open.
 */
export function estimatedPoints(task: Pick<AggregatesTask, 'refs' | 'granularities' | 'start' | 'stop'>): number {
  let total = 0;
  for (const g of task.granularities) {
    const windowed = task.start !== undefined && task.stop !== undefined ? Math.max(0, Math.ceil((task.stop - task.start) / g)) + 1 : Infinity;
    for (const ref of task.refs) {
      const kept = ref.policy.definition.find((d) => d.granularity === g)?.points ?? Infinity;
      total += Math.min(kept, windowed);
    }
  }
  return total;
}

/** The points of `series` whose timestamp falls in one of the sorted, disjoint `intervals`. */
export function keepIntervals(series: Series, intervals: readonly (readonly [number, number])[]): Series {
  const { timestamps, values } = series;
  const keepT = new Float64Array(timestamps.length);
  const keepV = new Float64Array(timestamps.length);
  let n = 0;
  let k = 0;
  for (let i = 0; i < timestamps.length; i++) {
    const t = timestamps[i]!;
    while (k < intervals.length && intervals[k]![1] <= t) k++;
    if (k === intervals.length) break;
    if (intervals[k]![0] <= t) {
      keepT[n] = t;
      keepV[n++] = values[i]!;
    }
  }
  if (n === timestamps.length) return series;
  return { timestamps: keepT.subarray(0, n), values: keepV.subarray(0, n) };
}

/** Reads every series the task needs and evaluates it. */
/** `decoded`: the calling thread's decoded split cache, if any. */
export function runAggregatesTask(snapshot: SeriesSnapshot, task: AggregatesTask, decoded?: DecodedSplitCache): AggregatesResult {
  const bySampling = new Map<Grouping, SamplingInput>();
  for (const granularity of task.granularities) {
    for (const ref of task.refs) {
      const [series] = readMeasures(snapshot, ref.metricId, ref.policy, {
        method: ref.aggregation,
        granularities: [granularity],
        ...(task.start === undefined ? {} : { start: task.start }),
        ...(task.stop === undefined ? {} : { stop: task.stop }),
        ...(task.resample === undefined ? {} : { resample: task.resample }),
        ...(ref.newest === undefined ? {} : { newest: ref.newest }),
      }, decoded);
      const kept = ref.intervals === undefined ? series! : keepIntervals(series!, ref.intervals);
      const g: Grouping = task.resample ?? granularity;
      let input = bySampling.get(g);
      if (input === undefined) {
        input = { granularity: g, series: [] };
        bySampling.set(g, input);
      }
      input.series.push({ key: ref.key, timestamps: kept.timestamps, values: kept.values });
    }
  }
  return alignAndEvaluate([...bySampling.values()], task.operations, {
    neededOverlap: task.neededOverlap,
    ...(task.start === undefined ? {} : { start: task.start }),
    ...(task.stop === undefined ? {} : { stop: task.stop }),
    ...(task.fill === undefined ? {} : { fill: task.fill }),
  });
}

/** Loads the task's metrics from `series` and runs it, engine errors returned as data (they cross threads). */
export function loadAndRunAggregatesTask(series: SeriesStore, task: AggregatesTask, decoded?: DecodedSplitCache): Promise<TaskOutcome> {
  const ids = task.refs.map((ref) => ref.metricId);
  const ranges = ids.flatMap((id) => readRanges(id, task.granularities, task.start, task.stop));
  return withSnapshot(series, ids, ranges, (snapshot) => runAggregatesTaskSafely(snapshot, task, decoded));
}

/** As {@link runAggregatesTask}, with engine errors returned as data (they cross threads). */
export function runAggregatesTaskSafely(snapshot: SeriesSnapshot, task: AggregatesTask, decoded?: DecodedSplitCache): TaskOutcome {
  try {
    return { ok: true, result: runAggregatesTask(snapshot, task, decoded) };
  } catch (err) {
    // A miss is no answer: the caller loads what was missed and runs again.
    if (err instanceof EngineError && !(err instanceof SnapshotMiss)) return { ok: false, status: err.status, description: err.description };
    throw err;
  }
}
