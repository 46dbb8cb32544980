/**
 * The I/O half of processing: for a batch of metrics, read their pending
 * points from the incoming records and their state, compute the updates, and
 * commit everything (the new state with its open splits and the `lastSeq`
 * of the records it consumed, sealed splits, expired splits removed) in one
 * LMDB write transaction, so a crash at any point loses nothing and counts
 * nothing twice. Runs in a worker thread, or inline.
 */
import type { ArchivePolicy } from './archive-policy.js';
import type { Series } from './aggregation.js';
import { computeUpdate, type GranularityUpdate, type MetricUpdate } from './compute-update.js';
import { decodeMetricState, emptyMetricState, encodeMetricState, type GranularityState, type MetricState } from './metric-state.js';
import { copyIncomingSlice, type IncomingRef } from './incoming-batch.js';
import { dropOpenSplitChunks, extendOpenSplit, readOpenSplit, readTail, startOpenSplit, storeTail, type FullTail } from './state-chunks.js';
import { decodeStoredSplit, encodeSealedSplit, mergeSplits, type SplitColumns } from './split.js';
import type { SplitKeyTuple, Storage } from './storage.js';

export interface ProcessJob {
  metricId: string;
  policy: ArchivePolicy;
  /** The metric's pending points, oldest record first. */
  refs: IncomingRef[];
}

export interface ProcessResult {
  metricId: string;
  /** Incoming measures consumed. */
  consumed: number;
  /** The metric's records up to this one are consumed. */
  lastSeq: number;
}

const MAX_KEY = Number.MAX_SAFE_INTEGER;

interface Planned {
  job: ProcessJob;
  consumed: number;
  lastSeq: number;
  state: MetricState;
  tail: FullTail;
  update: MetricUpdate | null;
}

/**
 * Each job's pending points that its state does not hold yet (a retry after
 * a crash must not count them twice), in record order, copied into one
 * series per job; each record is looked up once per batch.
 */
function pendingPoints(storage: Storage, jobs: ProcessJob[], states: (MetricState | null)[]): (Series | null)[] {
  const wanted = new Map<number, [job: number, ref: IncomingRef][]>();
  const sizes = jobs.map((job, i) => {
    const lastSeq = states[i]?.lastSeq ?? 0;
    let size = 0;
    for (const ref of job.refs) {
      if (ref.seq <= lastSeq) continue;
      size += ref.count;
      const slices = wanted.get(ref.seq);
      if (slices === undefined) wanted.set(ref.seq, [[i, ref]]);
      else slices.push([i, ref]);
    }
    return size;
  });
  const points = sizes.map((n) => ({ timestamps: new Float64Array(n), values: new Float64Array(n) }));
  const filled = sizes.map(() => 0);
  for (const seq of [...wanted.keys()].sort((a, b) => a - b)) {
    // Valid until the next read: used at once.
    const bytes = storage.incomingBatches.getBinaryFast(seq);
    if (bytes === undefined) continue;
    for (const [i, ref] of wanted.get(seq)!) filled[i] = copyIncomingSlice(bytes, ref.offset, ref.count, points[i]!, filled[i]!);
  }
  return points.map((p, i) => {
    const n = filled[i]!;
    if (n === 0) return null;
    return n === sizes[i] ? p : { timestamps: p.timestamps.subarray(0, n), values: p.values.subarray(0, n) };
  });
}

function plan(storage: Storage, job: ProcessJob, stored: MetricState | null, received: Series | null): Planned {
  const state = stored ?? emptyMetricState();
  const tail = readTail(storage, job.metricId, state);
  const update = received === null ? null : computeUpdate(job.policy, stored === null ? null : tail.tail, [received]);
  const lastSeq = Math.max(state.lastSeq, ...job.refs.map((r) => r.seq));
  const consumed = job.refs.reduce((n, r) => (r.seq > state.lastSeq ? n + r.count : n), 0);
  return { job, consumed, lastSeq, state, tail, update };
}

function putSealed(storage: Storage, key: SplitKeyTuple, data: SplitColumns): void {
  void storage.splits.put(key, encodeSealedSplit(key[2], key[1], data));
}

/** Applies one granularity's recomputed rows to its open and sealed splits. */
function applyGranularity(storage: Storage, metricId: string, ncols: number, gs: GranularityState, g: GranularityUpdate): void {
  const sealed = (key: number) => {
    gs.oldestSealedKey = gs.oldestSealedKey === null ? key : Math.min(gs.oldestSealedKey, key);
  };
  for (const { key, rows } of g.splits) {
    if (gs.open !== null && key === gs.open.key) {
      gs.open = extendOpenSplit(storage, metricId, g.granularity, gs.open, rows);
    } else if (gs.open === null || key > gs.open.key) {
      // A newer split starts: the open one is complete and gets encoded, once.
      if (gs.open !== null) {
        putSealed(storage, [metricId, g.granularity, gs.open.key], readOpenSplit(storage, metricId, g.granularity, gs.open));
        dropOpenSplitChunks(storage, metricId, g.granularity, gs.open);
        sealed(gs.open.key);
      }
      gs.open = startOpenSplit(storage, metricId, g.granularity, key, rows);
    } else {
      // Rare: the back window reaches into an already sealed split.
      const tuple: SplitKeyTuple = [metricId, g.granularity, key];
      const existing = storage.splits.get(tuple);
      putSealed(storage, tuple, existing === undefined ? rows : mergeSplits(decodeStoredSplit(existing, key, g.granularity, ncols), rows));
      sealed(key);
    }
  }
  if (g.deleteBefore !== null && gs.oldestSealedKey !== null && gs.oldestSealedKey < g.deleteBefore) {
    for (const k of storage.splits.getKeys({ start: [metricId, g.granularity, -1], end: [metricId, g.granularity, g.deleteBefore] })) {
      void storage.splits.remove(k);
    }
    gs.oldestSealedKey = null;
    for (const k of storage.splits.getKeys({ start: [metricId, g.granularity, g.deleteBefore], end: [metricId, g.granularity, MAX_KEY], limit: 1 })) {
      gs.oldestSealedKey = k[2];
    }
  }
}

/** Writes the new state (with its `lastSeq`) and the splits the update seals or touches. */
function writeUpdate(storage: Storage, p: Planned): void {
  const { metricId, policy } = p.job;
  const ncols = policy.aggregationMethods.length;
  const { update } = p;
  if (update === null) {
    void storage.states.put(metricId, encodeMetricState({ ...p.state, lastSeq: p.lastSeq }, ncols));
    return;
  }
  const granularities = update.granularities.map((g) => {
    const gs = p.state.granularities.find((x) => x.granularity === g.granularity) ?? {
      granularity: g.granularity,
      open: null,
      oldestSealedKey: null,
    };
    applyGranularity(storage, metricId, ncols, gs, g);
    return gs;
  });
  const tail = storeTail(storage, metricId, p.tail, p.state.tailFrozen, update.tail);
  void storage.states.put(metricId, encodeMetricState({ ...tail, granularities, lastSeq: p.lastSeq }, ncols));
}

/** Processes the pending measures of `jobs` and commits the results. */
export function processMetrics(storage: Storage, jobs: ProcessJob[]): ProcessResult[] {
  storage.root.resetReadTxn();
  const states = jobs.map((job) => {
    const stored = storage.states.get(job.metricId);
    return stored === undefined ? null : decodeMetricState(stored);
  });
  const points = pendingPoints(storage, jobs, states);
  const planned = jobs.map((job, i) => plan(storage, job, states[i] ?? null, points[i]!));
  return storage.root.transactionSync(() => {
    const results: ProcessResult[] = [];
    for (const p of planned) {
      // The metric may have been deleted while we computed: then drop it all.
      if (storage.metrics.doesExist(p.job.metricId)) writeUpdate(storage, p);
      results.push({ metricId: p.job.metricId, consumed: p.consumed, lastSeq: p.lastSeq });
    }
    return results;
  });
}
