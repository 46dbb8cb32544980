/**
 * The variant measured by aggregates-split.bench.ts, not used by the server
 * (it measured slower than one worker, see there): one big cross-metric
 * query cut in two time ranges, run on two workers and joined. Exact when every output row depends only on the input row at the
 * same timestamp (no rolling, resample, rate or rateofchange, and a fill that
 * neither propagates values nor checks the overlap over the whole range).
 * The cut falls on a split boundary so that each half decodes its own splits;
 * the earlier half is told the newest timestamp of the whole read, from
 * which retention counts.
 */
import type { AggregatesResult, Fill } from '../engine/aggregates/align.js';
import type { AggregatesTask, SeriesRef } from '../engine/aggregates/task.js';
import type { SeriesSnapshot } from '../engine/drivers/types.js';
import { openSplitOf } from '../engine/metric-state.js';
import { readOpenSplit } from '../engine/state-chunks.js';
import { splitKeyOf } from '../engine/split.js';
import type { OperationNode } from '../formats/operations-nodes.js';

/** Whether every output row of `node` is computed from the input row at its timestamp alone. */
export function rowLocal(node: OperationNode): boolean {
  switch (node.kind) {
    case 'number':
    case 'metric':
      return true;
    case 'aggregate':
      return !node.method.rate && rowLocal(node.operand);
    case 'binary':
      return rowLocal(node.left) && rowLocal(node.right);
    case 'clip':
      return rowLocal(node.operand) && rowLocal(node.min) && (node.max === null || rowLocal(node.max));
    case 'unary':
      return node.fn !== 'rateofchange' && rowLocal(node.operand);
    case 'rolling':
    case 'resample':
      return false;
  }
}

function rowLocalFill(fill: Fill | undefined): boolean {
  return fill === 'dropna' || fill === 'null' || typeof fill === 'number';
}

/**
 * The newest timestamp an unsplit read of `ref` would see: the last present
 * point of its open split, when that split is in the read's key range and
 * holds one; undefined otherwise (finding it would mean decoding splits).
 */
function newestOf(snapshot: SeriesSnapshot, ref: SeriesRef, granularity: number, endKey: number): { newest: number; openKey: number } | undefined {
  const column = ref.policy.aggregationMethods.indexOf(ref.aggregation);
  const state = snapshot.state(ref.metricId);
  if (column < 0 || state === undefined) return undefined;
  // Its inline rows are read after the chunks: copied out of the snapshot's bytes first.
  const open = openSplitOf(Buffer.from(state), granularity);
  if (open === null || open.key >= endKey) return undefined;
  const { timestamps, present: masks } = readOpenSplit(snapshot, ref.metricId, granularity, open, column);
  const present = masks[column];
  for (let i = timestamps.length - 1; i >= 0; i--) {
    if (present === null || present === undefined || present[i] === 1) return { newest: timestamps[i]!, openKey: open.key };
  }
  return undefined;
}

/**
 * The task as two tasks over `[start, cut)` and `[cut, stop)`, or undefined
 * when it cannot be cut exactly or has a single split to read.
 */
export function cutInTime(snapshot: SeriesSnapshot, task: AggregatesTask): [AggregatesTask, AggregatesTask] | undefined {
  if (task.granularities.length !== 1 || task.resample !== undefined || task.refs.length === 0) return undefined;
  if (!rowLocalFill(task.fill) || !rowLocal(task.operations)) return undefined;
  const granularity = task.granularities[0]!;
  // The earlier half stops 1 µs before the cut: no aligned point lies in between, and the split at the cut is not read.
  if (granularity <= 1) return undefined;
  const startKey = task.start === undefined ? -1 : splitKeyOf(task.start, granularity);
  const endKey = task.stop === undefined ? Number.MAX_SAFE_INTEGER : splitKeyOf(task.stop, granularity) + 1;
  const newest: number[] = [];
  let openKey = -Infinity;
  for (const ref of task.refs) {
    const found = newestOf(snapshot, ref, granularity, endKey);
    if (found === undefined) return undefined;
    newest.push(found.newest);
    openKey = Math.max(openKey, found.openKey);
  }
  const first = task.refs[0]!.metricId;
  const keys = [...snapshot.splitKeys({ metricId: first, granularity, start: startKey, end: endKey })]
    .map((k) => k[2])
    .filter((k) => k < openKey);
  keys.push(openKey);
  const cut = keys[Math.floor(keys.length / 2)]!;
  if (keys.length < 2 || (task.start !== undefined && cut <= task.start) || (task.stop !== undefined && cut >= task.stop)) return undefined;
  const earlier: AggregatesTask = { ...task, refs: task.refs.map((r, i) => ({ ...r, newest: newest[i]! })), stop: cut - 1 };
  const later: AggregatesTask = { ...task, start: cut };
  return [earlier, later];
}

function concat(a: Float64Array, b: Float64Array): Float64Array {
  const out = new Float64Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** The result of the whole range from the results of its two halves, in time order. */
export function joinResults(earlier: AggregatesResult, later: AggregatesResult): AggregatesResult {
  return {
    aggregated: earlier.aggregated,
    samplings: earlier.samplings.map((s, i) => {
      const t = later.samplings[i]!;
      return {
        granularity: s.granularity,
        timestamps: concat(s.timestamps, t.timestamps),
        columns: s.columns.map((c, j) => concat(c, t.columns[j]!)),
      };
    }),
  };
}
