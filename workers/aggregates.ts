/** Piscina entry point: read the series of one cross-metric query and evaluate it. */
import { workerData } from 'node:worker_threads';
import { unpackTask, type AggregatesWorkerData, type AggregatesWorkerTask } from '../engine/aggregates/runner.js';
import { loadAndRunAggregatesTask, type TaskOutcome } from '../engine/aggregates/task.js';
import { DecodedSplitCache } from '../engine/decoded-splits.js';
import { threadDrivers } from '../engine/drivers/location.js';

// Entries are checked against the stored bytes: one per thread needs no invalidation.
const decoded = new DecodedSplitCache((workerData as AggregatesWorkerData).splitCacheSize);

/** The snapshot is released after the task: an idle worker must not pin LMDB's pages. */
export default async function aggregatesTask({ drivers, wire }: AggregatesWorkerTask): Promise<TaskOutcome> {
  return loadAndRunAggregatesTask((await threadDrivers(drivers)).series, unpackTask(wire), decoded);
}
