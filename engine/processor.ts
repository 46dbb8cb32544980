/**
 * The background processor (Gnocchi's metricd, in process): tracks which
 * metrics have pending measures, hands them in batches to a runner (the
 * worker pool, or inline), and lets readers wait for a metric to be
 * processed (`refresh=true`).
 */
import type { Index } from './index.js';
import type { ProcessJob, ProcessResult } from './process-metrics.js';
import type { Storage } from './storage.js';

export type JobRunner = (jobs: ProcessJob[]) => Promise<ProcessResult[]>;

export interface ProcessorOptions {
  storage: Storage;
  index: Index;
  runner: JobRunner;
  /** How many runner calls may be in flight (the worker count). */
  parallelism: number;
  /** Milliseconds between processing rounds when idle. */
  intervalMs: number;
  /** Metrics per runner call. */
  batchSize: number;
  onError?: (err: unknown) => void;
}

interface Pending {
  measures: number;
  /** Bumped on each push, to tell whether a push raced with processing. */
  generation: number;
}

export interface BacklogStatus {
  metrics: number;
  measures: number;
  perMetric: Record<string, number>;
}

export class Processor {
  private readonly pending = new Map<string, Pending>();
  /** The sum of `pending` measures, kept in step so admission checks are O(1). */
  private pendingMeasures = 0;
  private readonly inflight = new Map<string, Promise<void>>();
  /** Pending metric ids in id order, consumed from `sweepAt` (see nextBatch). */
  private sweep: string[] = [];
  private sweepAt = 0;
  private running = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: ProcessorOptions) {
    // Measures acknowledged before a restart are still in the incoming store.
    for (const { key, value } of options.storage.incoming.getRange()) {
      const p = this.pending.get(key[0]);
      const measures = value.length >>> 4;
      this.pendingMeasures += measures;
      if (p === undefined) this.pending.set(key[0], { measures, generation: 0 });
      else p.measures += measures;
    }
  }

  /** Records measures durably added to the incoming store. */
  noteIncoming(metricId: string, measures: number): void {
    this.pendingMeasures += measures;
    const p = this.pending.get(metricId);
    if (p === undefined) this.pending.set(metricId, { measures, generation: 0 });
    else {
      p.measures += measures;
      p.generation++;
    }
    this.schedule(0);
  }

  forget(metricId: string): void {
    this.pendingMeasures -= this.pending.get(metricId)?.measures ?? 0;
    this.pending.delete(metricId);
  }

  /** Measures acknowledged and not yet processed, all metrics together. */
  pendingMeasureCount(): number {
    return this.pendingMeasures;
  }

  hasPending(metricId: string): boolean {
    return this.pending.has(metricId);
  }

  /** Counts; with `perMetric`, each metric's pending measures too (O(metrics pending)). */
  backlog(perMetric = true): BacklogStatus {
    const counts: Record<string, number> = {};
    if (perMetric) for (const [id, p] of this.pending) counts[id] = p.measures;
    return { metrics: this.pending.size, measures: this.pendingMeasures, perMetric: counts };
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops scheduling and waits for the batches in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.inflight.values()]);
  }

  /** Processes the pending measures of these metrics before resolving. */
  async refresh(metricIds: string[]): Promise<void> {
    for (;;) {
      const busy = metricIds.map((id) => this.inflight.get(id)).filter((p) => p !== undefined);
      if (busy.length > 0) {
        await Promise.allSettled(busy);
        continue;
      }
      const todo = metricIds.filter((id) => this.pending.has(id));
      if (todo.length === 0) return;
      await this.dispatch(todo);
    }
  }

  /** Resolves once no measure is pending (tests and benchmarks). */
  drained(): Promise<void> {
    if (this.pending.size === 0 && this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(delayMs: number): void {
    if (this.stopped || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.round();
    }, delayMs);
  }

  private round(): void {
    const { parallelism, intervalMs } = this.options;
    // Spread the backlog over every worker rather than filling one batch.
    const free = Math.max(1, parallelism - this.running);
    const batchSize = Math.min(this.options.batchSize, Math.max(1, Math.ceil(this.pending.size / free)));
    while (this.running < parallelism) {
      const batch = this.nextBatch(batchSize);
      if (batch.length === 0) break;
      this.dispatch(batch).catch((err: unknown) => this.options.onError?.(err));
    }
    if (this.pending.size > 0) this.schedule(intervalMs);
  }

  /**
   * The next pending metrics in a sweep over the backlog in metric id order.
   * A batch of neighbouring ids shares LMDB pages (states and incoming are
   * keyed by metric id), so its commit writes far fewer pages than a batch of
   * ids scattered over the whole key space; every metric pending when a sweep
   * starts gets its turn before the next sweep.
   */
  private nextBatch(size: number): string[] {
    const batch: string[] = [];
    for (let pass = 0; pass < 2 && batch.length < size; pass++) {
      if (this.sweepAt >= this.sweep.length) {
        this.sweep = [...this.pending.keys()].sort();
        this.sweepAt = 0;
      }
      while (this.sweepAt < this.sweep.length && batch.length < size) {
        const id = this.sweep[this.sweepAt++]!;
        if (this.pending.has(id) && !this.inflight.has(id)) batch.push(id);
      }
    }
    return batch;
  }

  private dispatch(metricIds: string[]): Promise<void> {
    const jobs: ProcessJob[] = [];
    const generations = new Map<string, number>();
    for (const id of metricIds) {
      const metric = this.options.index.getMetric(id);
      const policy = metric && this.options.index.getPolicy(metric.archivePolicyName);
      if (metric === undefined || policy === undefined) {
        this.forget(id);
        continue;
      }
      jobs.push({ metricId: id, policy });
      generations.set(id, this.pending.get(id)?.generation ?? 0);
    }
    if (jobs.length === 0) return Promise.resolve();
    this.running++;
    const work = this.options.runner(jobs).then(
      (results) => {
        // The worker committed from another thread: let this thread's reads
        // see the new snapshot instead of a cached older one.
        this.options.storage.root.resetReadTxn();
        for (const r of results) {
          const p = this.pending.get(r.metricId);
          if (p === undefined) continue;
          if (p.generation === generations.get(r.metricId)) this.forget(r.metricId);
          else {
            const left = Math.max(0, p.measures - r.consumed);
            this.pendingMeasures -= p.measures - left;
            p.measures = left;
          }
        }
      },
    );
    const tracked = work.finally(() => {
      this.running--;
      for (const job of jobs) {
        if (this.inflight.get(job.metricId) === tracked) this.inflight.delete(job.metricId);
      }
      if (this.pending.size > 0) this.schedule(0);
      else if (this.running === 0) for (const w of this.idleWaiters.splice(0)) w();
    });
    for (const job of jobs) this.inflight.set(job.metricId, tracked);
    return tracked;
  }
}
