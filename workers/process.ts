/** Piscina entry point: process a batch of metrics in this worker thread. */
import { workerData } from 'node:worker_threads';
import { processMetrics, type ProcessResult } from '../engine/process-metrics.js';
import { fromTask, type ProcessTask, type ProcessWorkerData } from '../engine/pool.js';
import { openStorage, type Storage } from '../engine/storage.js';
import { lowerThreadPriority } from '../engine/thread-priority.js';

lowerThreadPriority((workerData as ProcessWorkerData).nice);

const opened = new Map<string, Storage>();

export default function processTask(task: ProcessTask): ProcessResult[] {
  let storage = opened.get(task.dataDir);
  if (storage === undefined) {
    storage = openStorage(task.dataDir);
    opened.set(task.dataDir, storage);
  }
  try {
    return processMetrics(storage, fromTask(task));
  } finally {
    // As in workers/aggregates.ts: release the snapshot while idle.
    storage.root.resetReadTxn();
  }
}
