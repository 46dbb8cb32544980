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
  return runAggregatesTaskSafely(storage, unpackTask(wire));
}
