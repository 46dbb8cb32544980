/**
 * Running counts of the engine's work, for the server's self-metrics and
 * processing logs: plain numbers bumped where the work happens, read when
 * someone asks, and a hook per finished processing batch for what needs
 * each batch (a duration histogram).
 */

export interface BatchReport {
  metrics: number;
  /** Measures the batch consumed (none when it failed). */
  measures: number;
  seconds: number;
  failed: boolean;
}

export class Activity {
  /** Measures acknowledged to clients (committed to the incoming store). */
  measuresAccepted = 0;
  batches = 0;
  failedBatches = 0;
  metricsProcessed = 0;
  measuresProcessed = 0;
  /** Wall time batches spent in a runner, summed over batches running side by side. */
  busySeconds = 0;
  /** Quiet metrics handed to be settled (engine/state-chunks.ts). */
  metricsSettled = 0;
  private readonly listeners = new Set<(report: BatchReport) => void>();

  /** Calls `listener` after each batch; the returned function stops that. */
  onBatch(listener: (report: BatchReport) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  batchDone(report: BatchReport): void {
    this.batches++;
    if (report.failed) this.failedBatches++;
    else this.metricsProcessed += report.metrics;
    this.measuresProcessed += report.measures;
    this.busySeconds += report.seconds;
    for (const listener of this.listeners) listener(report);
  }

  /** A settle batch ran: housekeeping, not a batch of measures, but busy time all the same. */
  settleDone(metrics: number, seconds: number): void {
    this.metricsSettled += metrics;
    this.busySeconds += seconds;
  }
}
