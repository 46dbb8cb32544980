/**
 * The I/O half of processing: for a batch of metrics, read their incoming
 * measures, raw tails and touched splits, compute the updates, and commit
 * everything (new splits, sealed splits, new tails, removal of the consumed
 * incoming entries) in one LMDB write transaction, so a crash at any point
 * loses nothing and counts nothing twice. Runs in a worker thread, or inline.
 */
import type { ArchivePolicy } from './archive-policy.js';
import type { Series } from './aggregation.js';
import { computeUpdate, type MetricUpdate } from './compute-update.js';
import { decodeSeries, encodeSeries } from './series-bytes.js';
import {
  decodeStoredSplit,
  encodeRawSplit,
  encodeSealedSplit,
  isRaw,
  mergeSplits,
  type SplitColumns,
} from './split.js';
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
  if (keys.length === 0) return { job, incomingKeys: keys, consumed: 0, update: null };
  const tailBytes = storage.tails.get(job.metricId);
  const tail = tailBytes === undefined ? null : decodeSeries(tailBytes);
  return { job, incomingKeys: keys, consumed: count, update: computeUpdate(job.policy, tail, batches) };
}

function lastSplitKey(storage: Storage, metricId: string, granularity: number): { key: SplitKeyTuple; value: Buffer } | undefined {
  for (const entry of storage.splits.getRange({
    start: [metricId, granularity, MAX_KEY],
    end: [metricId, granularity, -1],
    reverse: true,
    limit: 1,
  })) {
    return entry;
  }
  return undefined;
}

function writeUpdate(storage: Storage, metricId: string, policy: ArchivePolicy, update: MetricUpdate): void {
  const ncols = policy.aggregationMethods.length;
  for (const g of update.granularities) {
    if (g.splits.length === 0) continue;
    const newestKey = g.splits[g.splits.length - 1]!.key;
    // A raw split that is no longer the newest gets sealed now, once.
    const last = lastSplitKey(storage, metricId, g.granularity);
    if (last !== undefined && isRaw(last.value) && last.key[2] < newestKey) {
      const stored = decodeStoredSplit(last.value, last.key[2], g.granularity, ncols);
      const touched = g.splits.find((s) => s.key === last.key[2]);
      const data = touched === undefined ? stored : mergeSplits(stored, touched.rows);
      void storage.splits.put(last.key, encodeSealedSplit(last.key[2], g.granularity, data));
    }
    for (const { key, rows } of g.splits) {
      if (last !== undefined && key === last.key[2] && key < newestKey) continue;
      const tuple: SplitKeyTuple = [metricId, g.granularity, key];
      const existingBytes = storage.splits.get(tuple);
      const data: SplitColumns =
        existingBytes === undefined
          ? rows
          : mergeSplits(decodeStoredSplit(existingBytes, key, g.granularity, ncols), rows);
      void storage.splits.put(
        tuple,
        key === newestKey ? encodeRawSplit(data) : encodeSealedSplit(key, g.granularity, data),
      );
    }
    if (g.deleteBefore !== null) {
      for (const k of storage.splits.getKeys({ start: [metricId, g.granularity, -1], end: [metricId, g.granularity, g.deleteBefore] })) {
        void storage.splits.remove(k);
      }
    }
  }
  void storage.tails.put(metricId, encodeSeries(update.tail.timestamps, update.tail.values));
}

/** Processes the pending measures of `jobs` and commits the results. */
export function processMetrics(storage: Storage, jobs: ProcessJob[]): ProcessResult[] {
  storage.root.resetReadTxn();
  const planned = jobs.map((job) => plan(storage, job));
  return storage.root.transactionSync(() => {
    const results: ProcessResult[] = [];
    for (const p of planned) {
      if (p.incomingKeys.length === 0) {
        results.push({ metricId: p.job.metricId, consumed: 0 });
        continue;
      }
      // The metric may have been deleted while we computed: then drop it all.
      if (storage.metrics.get(p.job.metricId) !== undefined && p.update !== null) {
        writeUpdate(storage, p.job.metricId, p.job.policy, p.update);
      }
      for (const key of p.incomingKeys) void storage.incoming.remove(key);
      results.push({ metricId: p.job.metricId, consumed: p.consumed });
    }
    return results;
  });
}
