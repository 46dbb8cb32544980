/** Piscina entry point: read the series of one cross-metric query and evaluate it. */
import { workerData } from 'node:worker_threads';
import { unpackTask, type AggregatesWorkerData, type AggregatesWorkerTask } from '../engine/aggregates/runner.js';
import { runAggregatesTaskSafely, type TaskOutcome } from '../engine/aggregates/task.js';
import { DecodedSplitCache } from '../engine/decoded-splits.js';
import { threadStorage } from '../engine/storage.js';

// Entries are checked against the stored bytes: one per thread needs no invalidation.
const decoded = new DecodedSplitCache((workerData as AggregatesWorkerData).splitCacheSize);

export default function aggregatesTask({ dataDir, wire }: AggregatesWorkerTask): TaskOutcome {
  const storage = threadStorage(dataDir);
  try {
    return runAggregatesTaskSafely(storage, unpackTask(wire), decoded);
  } finally {
    // An idle worker must not pin its snapshot: LMDB cannot reuse pages
    // freed after the oldest open read transaction, and the file grows.
    storage.root.resetReadTxn();
  }
}
