/**
 * Processing batches as objects, for tests: jobs written out one by one,
 * results read back by metric. The engine itself only ever handles them
 * packed (engine/job-batch.ts).
 */
import type { ArchivePolicy } from '../../engine/archive-policy.js';
import type { Lease } from '../../engine/drivers/types.js';
import { JobBatchBuilder, policyOf, type JobBatch, type PackedResults } from '../../engine/job-batch.js';
import { processBatch, type ProcessingDrivers } from '../../engine/process-metrics.js';

/** Where one metric's points of one push are: the record's seq, the byte offset of its timestamps there, and how many. */
export interface IncomingRef {
  seq: number;
  offset: number;
  count: number;
}

export interface ProcessJob {
  metricId: string;
  policy: ArchivePolicy;
  /** Oldest record first. */
  refs: IncomingRef[];
  /** As JobBatch.settle. */
  settle?: number;
}

export interface ProcessResult {
  metricId: string;
  consumed: number;
  lastSeq: number;
  looseRows: number;
}

/** The batch of these jobs (the first one's `settle` for all). */
export function packJobs(jobs: readonly ProcessJob[]): JobBatch {
  const builder = new JobBatchBuilder(jobs.length, jobs[0]?.settle);
  for (const { metricId, policy, refs } of jobs) builder.add(metricId, policy, refs.length);
  return builder.build((job, _metricId, _count, out, at) => {
    for (const { seq, offset, count } of jobs[job]!.refs) {
      out[at++] = seq;
      out[at++] = offset;
      out[at++] = count;
    }
  });
}

/** A batch's jobs as objects, for runners in tests that look at what they were given. */
export function unpackJobs(batch: JobBatch): ProcessJob[] {
  return batch.metricIds.map((metricId, i) => {
    const refs: IncomingRef[] = [];
    for (let r = batch.refStarts[i]!; r < batch.refStarts[i + 1]!; r++) refs.push({ seq: batch.refs[3 * r]!, offset: batch.refs[3 * r + 1]!, count: batch.refs[3 * r + 2]! });
    const job: ProcessJob = { metricId, policy: policyOf(batch, i), refs };
    if (batch.settle !== undefined) job.settle = batch.settle;
    return job;
  });
}

/** The results of the batch of these metrics, by metric in job order. */
export function resultsOf(metricIds: readonly string[], results: PackedResults): ProcessResult[] {
  return metricIds.map((metricId, i) => ({ metricId, consumed: results[3 * i]!, lastSeq: results[3 * i + 1]!, looseRows: results[3 * i + 2]! }));
}

/** Processes these jobs inline, as the inline runner does their batch. */
export async function processJobs(drivers: ProcessingDrivers, jobs: readonly ProcessJob[], lease: Lease): Promise<ProcessResult[]> {
  const batch = packJobs(jobs);
  return resultsOf(batch.metricIds, await processBatch(drivers, batch, lease));
}
