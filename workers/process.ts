/** Piscina entry point: process a batch of metrics in this worker thread. */
import { workerData } from 'node:worker_threads';
import { threadDrivers } from '../engine/drivers/location.js';
import { crossing } from '../engine/errors.js';
import { processMetrics } from '../engine/process-metrics.js';
import { fromTask, packResults, type PackedResults, type ProcessTask, type ProcessWorkerData } from '../engine/pool.js';
import { lowerThreadPriority } from '../engine/thread-priority.js';

lowerThreadPriority((workerData as ProcessWorkerData).nice);

export default async function processTask(task: ProcessTask): Promise<PackedResults> {
  const { jobs, lease } = fromTask(task);
  try {
    return packResults(await processMetrics(await threadDrivers(task.drivers), jobs, lease));
  } catch (err) {
    throw crossing(err);
  }
}
