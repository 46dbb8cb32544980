/** Piscina entry point: read the series of one cross-metric query and evaluate it. */
import { unpackTask, type AggregatesWorkerTask } from '../engine/aggregates/runner.js';
import { runAggregatesTaskSafely, type TaskOutcome } from '../engine/aggregates/task.js';
import { openStorage, type Storage } from '../engine/storage.js';

const opened = new Map<string, Storage>();

export default function aggregatesTask({ dataDir, wire }: AggregatesWorkerTask): TaskOutcome {
  let storage = opened.get(dataDir);
  if (storage === undefined) {
    storage = openStorage(dataDir);
    opened.set(dataDir, storage);
  }
  try {
    return runAggregatesTaskSafely(storage, unpackTask(wire));
  } finally {
    // An idle worker must not pin its snapshot: LMDB cannot reuse pages
    // freed after the oldest open read transaction, and the file grows.
    storage.root.resetReadTxn();
  }
}
