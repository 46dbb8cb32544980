/**
 * Opening a format 1 data directory: its pending measures, kept per metric
 * under [metricId, seq] (n float64 timestamps then n values), move into
 * format 2's incoming records, one per former entry and under the same seq.
 * States of format 1 carry no `lastSeq` (read as 0), so every moved record
 * is pending. Runs inside the upgrade's transaction (engine/format-upgrade.ts).
 */
import type { Series } from './aggregation.js';
import { encodeIncomingBatch } from './incoming-batch.js';
import type { ProgressTask } from './progress.js';
import type { Storage } from './storage.js';

function oldSeries(bytes: Uint8Array): Series {
  const n = bytes.length >>> 4;
  const timestamps = new Float64Array(n);
  const values = new Float64Array(n);
  new Uint8Array(timestamps.buffer).set(bytes.subarray(0, 8 * n));
  new Uint8Array(values.buffer).set(bytes.subarray(8 * n, 16 * n));
  return { timestamps, values };
}

export function moveFormat1Incoming(storage: Storage, task: ProgressTask): void {
  const moved = [...storage.incoming.getRange()].map(({ key, value }) => ({
    key,
    record: encodeIncomingBatch(new Map([[key[0], oldSeries(value)]])).bytes,
  }));
  for (const { key, record } of moved) {
    void storage.incomingBatches.put(key[1], record);
    void storage.incoming.remove(key);
    task.advance();
  }
}
