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
export interface JobBatch {
  metricIds: string[];
  policies: ArchivePolicy[];
  /** Per job, its policy's index in `policies`. */
  policyIndexes: Uint32Array;
  /** Job i's refs are refs refStarts[i] to refStarts[i + 1] (not included). */
  refStarts: Uint32Array;
  /**
   * Every ref (where one metric's points of one push are) as the record's
   * seq, the byte offset of the timestamps in it, and the point count: ref r at 3r.
   */
  refs: Float64Array;
  /**
   * Settle every job's metric instead (a quiet metric, no refs): freeze its
   * open splits' inline rows but the last, where there are at least this
   * many. The processor settles metrics in batches of their own.
   */
  settle?: number;
}

/**
 * Builds a batch job by job without an object per job or per ref: the
 * processor knows how many refs each job takes before it copies them out of
 * its pending table, so the refs array is allocated once, to size.
 */
export class JobBatchBuilder {
  private readonly metricIds: string[] = [];
  private readonly policies: ArchivePolicy[] = [];
  private readonly byName = new Map<string, number>();
  private readonly policyIndexes: Uint32Array;
  private readonly refStarts: Uint32Array;

  /** At most `capacity` jobs; `settle` as JobBatch.settle. */
  constructor(
    capacity: number,
    private readonly settle?: number,
  ) {
    this.policyIndexes = new Uint32Array(capacity);
    this.refStarts = new Uint32Array(capacity + 1);
  }

  get size(): number {
    return this.metricIds.length;
  }

  add(metricId: string, policy: ArchivePolicy, refs: number): void {
    const job = this.metricIds.length;
    let index = this.byName.get(policy.name);
    if (index === undefined) {
      index = this.policies.push(policy) - 1;
      this.byName.set(policy.name, index);
    }
    this.metricIds.push(metricId);
    this.policyIndexes[job] = index;
    this.refStarts[job + 1] = this.refStarts[job]! + refs;
  }

  /** The batch: `fill` writes each job's `count` refs as seq, offset, count into `refs` from index `at`. */
  build(fill: (job: number, metricId: string, count: number, refs: Float64Array, at: number) => void): JobBatch {
    const n = this.metricIds.length;
    const { refStarts } = this;
    const refs = new Float64Array(3 * refStarts[n]!);
    for (let i = 0; i < n; i++) fill(i, this.metricIds[i]!, refStarts[i + 1]! - refStarts[i]!, refs, 3 * refStarts[i]!);
    // Copies to size: a view would carry its whole buffer to the worker.
    const batch: JobBatch = { metricIds: this.metricIds, policies: this.policies, policyIndexes: this.policyIndexes.slice(0, n), refStarts: refStarts.slice(0, n + 1), refs };
    if (this.settle !== undefined) batch.settle = this.settle;
    return batch;
  }
}

export function policyOf(batch: JobBatch, job: number): ArchivePolicy {
  return batch.policies[batch.policyIndexes[job]!]!;
}

/**
 * A batch's results, three numbers per job in job order: the incoming
 * measures consumed, the seq of the record up to which the metric's are
 * consumed, and the most inline rows of an open split that settling would
 * freeze.
 */
export type PackedResults = Float64Array;

export function packedResults(jobs: number): PackedResults {
  return new Float64Array(3 * jobs);
}

export function setResult(results: PackedResults, job: number, consumed: number, lastSeq: number, looseRows: number): void {
  results[3 * job] = consumed;
  results[3 * job + 1] = lastSeq;
  results[3 * job + 2] = looseRows;
}

export function resultLastSeq(results: PackedResults, job: number): number {
  return results[3 * job + 1]!;
}

export function resultLooseRows(results: PackedResults, job: number): number {
  return results[3 * job + 2]!;
}
