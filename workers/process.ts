/** Piscina entry point: process a batch of metrics in this worker thread. */
import { workerData } from 'node:worker_threads';
import { processMetrics, type ProcessResult } from '../engine/process-metrics.js';
import { fromTask, type ProcessTask, type ProcessWorkerData } from '../engine/pool.js';
import { threadStorage } from '../engine/storage.js';
import { lowerThreadPriority } from '../engine/thread-priority.js';

lowerThreadPriority((workerData as ProcessWorkerData).nice);

export default function processTask(task: ProcessTask): ProcessResult[] {
  const storage = threadStorage(task.dataDir);
  try {
    return processMetrics(storage, fromTask(task));
  } finally {
    // As in workers/aggregates.ts: release the snapshot while idle.
    storage.root.resetReadTxn();
  }
}
