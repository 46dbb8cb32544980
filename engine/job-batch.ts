/**
 * A processing batch as columns, the form a worker thread receives and
 * processes it in: each policy once rather than once per job, and the refs
 * of all jobs in one typed array rather than an object each. The worker
 * used to unpack a job object and a ref object per pending push, and they
 * lived as long as the batch: a time-major backlog's batch of 256 metrics
 * holds thousands of refs, copied by every young-generation collection
 * while the batch was processed (the worker runs with a 1 MB semi-space).
 * Results go back the same way: three numbers per job, in job order.
 */
import type { ArchivePolicy } from './archive-policy.js';
import type { IncomingRef } from './incoming-batch.js';

export interface ProcessJob {
  metricId: string;
  policy: ArchivePolicy;
  /** The metric's pending points, oldest record first. */
  refs: IncomingRef[];
  /**
   * Settle the metric (no refs: it is quiet): freeze its open splits'
   * inline rows but the last, where there are at least this many.
   */
  settle?: number;
}

export interface ProcessResult {
  metricId: string;
  /** Incoming measures consumed. */
  consumed: number;
  /** The metric's records up to this one are consumed. */
  lastSeq: number;
  /** The most inline rows of an open split that settling would freeze. */
  looseRows: number;
}

export interface JobBatch {
  metricIds: string[];
  policies: ArchivePolicy[];
  /** Per job, its policy's index in `policies`. */
  policyIndexes: Uint32Array;
  /** Job i's refs are refs refStarts[i] to refStarts[i + 1] (not included). */
  refStarts: Uint32Array;
  /** Every ref as seq, offset, count: ref r at 3r. */
  refs: Float64Array;
  /** ProcessJob.settle, the same for every job of a batch: the processor settles metrics in batches of their own. */
  settle?: number;
}

export function packJobs(jobs: readonly ProcessJob[]): JobBatch {
  const indexes = new Map<string, number>();
  const refStarts = new Uint32Array(jobs.length + 1);
  for (let i = 0; i < jobs.length; i++) refStarts[i + 1] = refStarts[i]! + jobs[i]!.refs.length;
  const batch: JobBatch = {
    metricIds: new Array<string>(jobs.length),
    policies: [],
    policyIndexes: new Uint32Array(jobs.length),
    refStarts,
    refs: new Float64Array(3 * refStarts[jobs.length]!),
  };
  const settle = jobs[0]?.settle;
  if (settle !== undefined) batch.settle = settle;
  let at = 0;
  for (let i = 0; i < jobs.length; i++) {
    const { metricId, policy, refs } = jobs[i]!;
    let index = indexes.get(policy.name);
    if (index === undefined) {
      index = batch.policies.push(policy) - 1;
      indexes.set(policy.name, index);
    }
    batch.metricIds[i] = metricId;
    batch.policyIndexes[i] = index;
    for (let r = 0; r < refs.length; r++) {
      const { seq, offset, count } = refs[r]!;
      batch.refs[at++] = seq;
      batch.refs[at++] = offset;
      batch.refs[at++] = count;
    }
  }
  return batch;
}

export function policyOf(batch: JobBatch, job: number): ArchivePolicy {
  return batch.policies[batch.policyIndexes[job]!]!;
}

/** A batch's results: per job, consumed, lastSeq and looseRows (as ProcessResult). */
export type PackedResults = Float64Array;

export function packedResults(jobs: number): PackedResults {
  return new Float64Array(3 * jobs);
}

export function setResult(results: PackedResults, job: number, consumed: number, lastSeq: number, looseRows: number): void {
  results[3 * job] = consumed;
  results[3 * job + 1] = lastSeq;
  results[3 * job + 2] = looseRows;
}

/** The results of the batch of these metrics (in job order). */
export function resultsOf(metricIds: readonly string[], results: PackedResults): ProcessResult[] {
  const out: ProcessResult[] = new Array(metricIds.length);
  for (let i = 0; i < metricIds.length; i++) {
    out[i] = { metricId: metricIds[i]!, consumed: results[3 * i]!, lastSeq: results[3 * i + 1]!, looseRows: results[3 * i + 2]! };
  }
  return out;
}
