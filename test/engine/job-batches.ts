import { policyOf, type JobBatch, type ProcessJob } from '../../engine/job-batch.js';

/** A batch's jobs as objects, for runners in tests that look at what they were given. */
export function unpackJobs(batch: JobBatch): ProcessJob[] {
  return batch.metricIds.map((metricId, i) => {
    const refs: ProcessJob['refs'] = [];
    for (let r = batch.refStarts[i]!; r < batch.refStarts[i + 1]!; r++) refs.push({ seq: batch.refs[3 * r]!, offset: batch.refs[3 * r + 1]!, count: batch.refs[3 * r + 2]! });
    const job: ProcessJob = { metricId, policy: policyOf(batch, i), refs };
    if (batch.settle !== undefined) job.settle = batch.settle;
    return job;
  });
}
