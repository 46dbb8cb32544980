/**
 * The writes of a processing batch, metric after metric, kept until its
 * commit. Each metric's new state (every update writes one) is encoded
 * into one buffer for the batch, and the rarer chunk and split writes go
 * into one queue for the batch, each metric's a range of it. A queue, a
 * state buffer and arrays per metric lived as long as the batch: hundreds
 * of objects that every young collection of the worker copied while the
 * batch was being planned.
 */
import type { MetricWrites, RecordWriter, RecordWrites } from './drivers/types.js';
import { metricStateBound, writeMetricState, type MetricState } from './metric-state.js';
import { WriteQueue } from './record-writes.js';

/** Bytes of states a batch's buffer starts with: a time-major batch's 256 states of ~150 bytes. */
const FIRST_BYTES = 64 * 1024;

export class BatchWrites extends WriteQueue {
  /** Per metric, where its writes end in the columns. */
  private readonly ends: Uint32Array;
  /** Per metric, where its state starts and ends in `states` (equal: it writes none). */
  private readonly stateStarts: Uint32Array;
  private readonly stateEnds: Uint32Array;
  private states = Buffer.allocUnsafeSlow(FIRST_BYTES);
  private used = 0;
  private metric = 0;

  constructor(metrics: number) {
    super();
    this.ends = new Uint32Array(metrics);
    this.stateStarts = new Uint32Array(metrics);
    this.stateEnds = new Uint32Array(metrics);
  }

  /** The current metric's new state: its last write. */
  putState(state: MetricState, columnCount: number): void {
    const size = metricStateBound(state);
    if (this.used + size > this.states.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(2 * this.states.length, this.used + size));
      this.states.copy(grown, 0, 0, this.used);
      this.states = grown;
    }
    this.stateStarts[this.metric] = this.used;
    this.used = writeMetricState(state, columnCount, this.states, this.used);
    this.stateEnds[this.metric] = this.used;
  }

  /** The writes since the previous metric's end are the current metric's; the next metric's follow. */
  endMetric(): void {
    this.ends[this.metric++] = this.length;
  }

  /** Per metric (in batch order, as `metricIds` names them), its writes. */
  byMetric(metricIds: readonly string[]): MetricWrites[] {
    const out: MetricWrites[] = new Array(metricIds.length);
    for (let i = 0; i < metricIds.length; i++) out[i] = { metricId: metricIds[i]!, writes: new MetricRange(this, i, metricIds[i]!) };
    return out;
  }

  /** Replays metric i's writes in the order they were made. */
  applyMetric(i: number, into: RecordWriter, metricId: string): void {
    this.applyRange(i === 0 ? 0 : this.ends[i - 1]!, this.ends[i]!, into);
    const start = this.stateStarts[i]!;
    const end = this.stateEnds[i]!;
    // A plain view: a Buffer's subarray costs several times as much to make, once per metric of the commit.
    if (end > start) into.put('state', metricId, new Uint8Array(this.states.buffer, this.states.byteOffset + start, end - start));
  }
}

/** One metric's share of a batch's writes. */
class MetricRange implements RecordWrites {
  constructor(
    private readonly batch: BatchWrites,
    private readonly metric: number,
    private readonly metricId: string,
  ) {}

  apply(into: RecordWriter): void {
    this.batch.applyMetric(this.metric, into, this.metricId);
  }
}
