/** Piscina entry point: process a batch of metrics in this worker thread. */
import { workerData } from 'node:worker_threads';
import { threadLmdbDrivers } from '../engine/drivers/lmdb/drivers.js';
import { processMetrics, type ProcessResult } from '../engine/process-metrics.js';
import { fromTask, type ProcessTask, type ProcessWorkerData } from '../engine/pool.js';
import { lowerThreadPriority } from '../engine/thread-priority.js';

lowerThreadPriority((workerData as ProcessWorkerData).nice);

export default function processTask(task: ProcessTask): Promise<ProcessResult[]> {
  const { jobs, lease } = fromTask(task);
  return processMetrics(threadLmdbDrivers(task.dataDir), jobs, lease);
}
