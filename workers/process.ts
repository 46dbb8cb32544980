/** Piscina entry point: process a batch of metrics in this worker thread. */
import { threadId, workerData } from 'node:worker_threads';
import { threadDrivers } from '../engine/drivers/location.js';
import { crossing } from '../engine/errors.js';
import { fullCollection } from '../engine/idle-collection.js';
import { processMetrics, releaseRecordCaches } from '../engine/process-metrics.js';
import { fromTask, packResults, type PackedResults, type ProcessTask, type ProcessWorkerData, type ReleaseTask } from '../engine/pool.js';
import { lowerThreadPriority } from '../engine/thread-priority.js';

lowerThreadPriority((workerData as ProcessWorkerData).nice);

let collect: (() => void) | undefined;

/** A ProcessTask's results, or for a ReleaseTask the thread's id. */
export default async function processTask(task: ProcessTask | ReleaseTask): Promise<PackedResults | number> {
  if ('release' in task) {
    // Between tasks this thread waits in Atomics.wait, where V8 never collects: the cache's buffer and the
    // backlog's garbage would stay resident until the next burst.
    if (releaseRecordCaches()) (collect ??= fullCollection())();
    return threadId;
  }
  const { jobs, lease } = fromTask(task);
  try {
    return packResults(await processMetrics(await threadDrivers(task.drivers), jobs, lease));
  } catch (err) {
    throw crossing(err);
  }
}
