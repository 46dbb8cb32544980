/**
 * The I/O half of processing: for a batch of metrics, read their incoming
 * measures and state, compute the updates, and commit everything (the new
 * state with its open splits, sealed splits, expired splits removed, the
 * consumed incoming entries removed) in one LMDB write transaction, so a
 * crash at any point loses nothing and counts nothing twice. Runs in a
 * worker thread, or inline.
 */
import type { ArchivePolicy } from './archive-policy.js';
import type { Series } from './aggregation.js';
import { computeUpdate, type GranularityUpdate, type MetricUpdate } from './compute-update.js';
import { decodeMetricState, emptyMetricState, encodeMetricState, type GranularityState, type MetricState } from './metric-state.js';
import { decodeSeries } from './series-bytes.js';
import { decodeStoredSplit, encodeRawSplit, encodeSealedSplit, mergeIntoRawSplit, mergeSplits, type SplitColumns } from './split.js';
import type { IncomingKey, SplitKeyTuple, Storage } from './storage.js';

export interface ProcessJob {
  metricId: string;
  policy: ArchivePolicy;
}

export interface ProcessResult {
  metricId: string;
  /** Incoming measures consumed (removed from the incoming store). */
  consumed: number;
}

const MAX_KEY = Number.MAX_SAFE_INTEGER;

interface Planned {
  job: ProcessJob;
  incomingKeys: IncomingKey[];
  consumed: number;
  state: MetricState;
  update: MetricUpdate | null;
}

function readIncoming(storage: Storage, metricId: string): { keys: IncomingKey[]; batches: Series[]; count: number } {
  const keys: IncomingKey[] = [];
  const batches: Series[] = [];
  let count = 0;
  for (const { key, value } of storage.incoming.getRange({ start: [metricId, 0], end: [metricId, MAX_KEY] })) {
    keys.push(key);
    const s = decodeSeries(value);
    count += s.timestamps.length;
    batches.push(s);
  }
  return { keys, batches, count };
}

function plan(storage: Storage, job: ProcessJob): Planned {
  const { keys, batches, count } = readIncoming(storage, job.metricId);
  const stored = keys.length === 0 ? undefined : storage.states.get(job.metricId);
  const state = stored === undefined ? emptyMetricState() : decodeMetricState(stored);
  const update = keys.length === 0 ? null : computeUpdate(job.policy, stored === undefined ? null : state.tail, batches);
  return { job, incomingKeys: keys, consumed: count, state, update };
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
      gs.open = { key, raw: mergeIntoRawSplit(gs.open.raw, rows) };
    } else if (gs.open === null || key > gs.open.key) {
      // A newer split starts: the open one is complete and gets encoded, once.
      if (gs.open !== null) {
        const data = decodeStoredSplit(gs.open.raw, gs.open.key, g.granularity, ncols);
        putSealed(storage, [metricId, g.granularity, gs.open.key], data);
        sealed(gs.open.key);
      }
      gs.open = { key, raw: encodeRawSplit(rows) };
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

function writeUpdate(storage: Storage, p: Planned, update: MetricUpdate): void {
  const { metricId, policy } = p.job;
  const ncols = policy.aggregationMethods.length;
  const granularities = update.granularities.map((g) => {
    const gs = p.state.granularities.find((x) => x.granularity === g.granularity) ?? {
      granularity: g.granularity,
      open: null,
      oldestSealedKey: null,
    };
    applyGranularity(storage, metricId, ncols, gs, g);
    return gs;
  });
  void storage.states.put(metricId, encodeMetricState({ tail: update.tail, granularities }, ncols));
}

/** Processes the pending measures of `jobs` and commits the results. */
export function processMetrics(storage: Storage, jobs: ProcessJob[]): ProcessResult[] {
  storage.root.resetReadTxn();
  const planned = jobs.map((job) => plan(storage, job));
  return storage.root.transactionSync(() => {
    const results: ProcessResult[] = [];
    for (const p of planned) {
      // The metric may have been deleted while we computed: then drop it all.
      if (p.update !== null && storage.metrics.doesExist(p.job.metricId)) writeUpdate(storage, p, p.update);
      for (const key of p.incomingKeys) void storage.incoming.remove(key);
      results.push({ metricId: p.job.metricId, consumed: p.consumed });
    }
    return results;
  });
}
