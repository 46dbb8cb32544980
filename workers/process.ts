/** Piscina entry point: process a batch of metrics in this worker thread. */
import { threadId, workerData } from 'node:worker_threads';
import { threadDrivers } from '../engine/drivers/location.js';
import { crossing } from '../engine/errors.js';
import { fullCollection } from '../engine/idle-collection.js';
import type { PackedResults } from '../engine/job-batch.js';
import { processBatch, releaseRecordCaches } from '../engine/process-metrics.js';
import type { ProcessTask, ProcessWorkerData, ReleaseTask } from '../engine/pool.js';
import { lowerThreadPriority } from '../engine/thread-priority.js';

const { nice, recordCacheBytes } = workerData as ProcessWorkerData;
lowerThreadPriority(nice);

let collect: (() => void) | undefined;

/** A ProcessTask's results, or for a ReleaseTask the thread's id. */
export default async function processTask(task: ProcessTask | ReleaseTask): Promise<PackedResults | number> {
  if ('release' in task) {
    // Between tasks this thread waits in Atomics.wait, where V8 never collects: the cache's buffer and the
    // backlog's garbage would stay resident until the next burst.
    if (releaseRecordCaches()) (collect ??= fullCollection())();
    return threadId;
  }
  try {
    // The task is the batch, packed, and the lease.
    return await processBatch(await threadDrivers(task.drivers), task, { shard: task.shard, fence: task.fence }, recordCacheBytes);
  } catch (err) {
    throw crossing(err);
  }
}
