/**
 * The processor's pending refs, packed: a slot per (metric, record) in
 * typed-array columns, each metric's slots chained oldest record first.
 * A burst leaves hundreds of thousands of refs waiting; as objects (with
 * their boxed timestamps) they were promoted to the old generation and
 * walked by every full collection, which let the heap grow to a multiple
 * of them. Columns are a few flat buffers the collector never looks into.
 */
import type { IncomingRef } from './incoming-batch.js';
import type { WindowRef } from './reorder-window.js';

const NONE = -1;
/** Slots allocated at first. */
const LEAST_SLOTS = 1024;
/**
 * Slots kept when the backlog empties (3 MiB of columns). A collector's
 * push of 10,000 series, with a few more in flight, fills tens of thousands
 * of slots and is processed before the next one comes: columns shrunk to
 * the least each time grew back through every size, allocating (and
 * faulting in) fresh memory for each: a visible share of the main thread
 * in time-major profiles.
 */
const KEPT_SLOTS = 65536;

export class PendingRefs {
  /** Per metric, its oldest slot. */
  private readonly heads = new Map<string, number>();
  private seqs = new Float64Array(LEAST_SLOTS);
  private offsets = new Uint32Array(LEAST_SLOTS);
  private counts = new Uint32Array(LEAST_SLOTS);
  private oldest = new Float64Array(LEAST_SLOTS);
  private newest = new Float64Array(LEAST_SLOTS);
  private notedAt = new Float64Array(LEAST_SLOTS);
  /** The next slot of the metric, or of the free list. */
  private next = new Int32Array(LEAST_SLOTS);
  /** At a metric's oldest slot: its newest one. */
  private tails = new Int32Array(LEAST_SLOTS);
  /** What window answers, and the objects it fills. */
  private readonly view: WindowRef[] = [];
  private readonly viewed: WindowRef[] = [];
  private free = NONE;
  /** Slots never used yet start here. */
  private unused = 0;
  private total = 0;

  /** The measures of every ref, all metrics together. */
  get measures(): number {
    return this.total;
  }

  /** Metrics with refs. */
  get size(): number {
    return this.heads.size;
  }

  has(metricId: string): boolean {
    return this.heads.has(metricId);
  }

  metricIds(): IterableIterator<string> {
    return this.heads.keys();
  }

  /** Notes a ref, in seq order among the metric's (a record another node appended may be noted after later ones). */
  add(metricId: string, seq: number, offset: number, count: number, oldest: number, newest: number, notedAt: number): void {
    const s = this.slot();
    this.seqs[s] = seq;
    this.offsets[s] = offset;
    this.counts[s] = count;
    this.oldest[s] = oldest;
    this.newest[s] = newest;
    this.notedAt[s] = notedAt;
    this.total += count;
    const head = this.heads.get(metricId);
    if (head === undefined) {
      this.next[s] = NONE;
      this.tails[s] = s;
      this.heads.set(metricId, s);
      return;
    }
    const tail = this.tails[head]!;
    if (this.seqs[tail]! <= seq) {
      this.next[s] = NONE;
      this.next[tail] = s;
      this.tails[head] = s;
      return;
    }
    if (this.seqs[head]! > seq) {
      this.next[s] = head;
      this.tails[s] = tail;
      this.heads.set(metricId, s);
      return;
    }
    let prev = head;
    while (this.seqs[this.next[prev]!]! <= seq) prev = this.next[prev]!;
    this.next[s] = this.next[prev]!;
    this.next[prev] = s;
  }

  /**
   * A metric's refs as the reorder window sees them, oldest first, in
   * objects kept for the next call (which overwrites them): a sweep asks for
   * every pending metric's, and a metric may have hundreds of refs.
   */
  window(metricId: string): readonly WindowRef[] {
    const { view } = this;
    let n = 0;
    for (let s = this.heads.get(metricId) ?? NONE; s !== NONE; s = this.next[s]!, n++) {
      let ref = this.viewed[n];
      if (ref === undefined) this.viewed.push((ref = { seq: 0, oldest: 0, newest: 0, notedAt: 0 }));
      ref.seq = this.seqs[s]!;
      ref.oldest = this.oldest[s]!;
      ref.newest = this.newest[s]!;
      ref.notedAt = this.notedAt[s]!;
      view[n] = ref;
    }
    view.length = n;
    return view;
  }

  /** A metric's first `n` refs (all by default), to hand to a job. */
  refs(metricId: string, n = Infinity): IncomingRef[] {
    const out: IncomingRef[] = [];
    for (let s = this.heads.get(metricId) ?? NONE; s !== NONE && out.length < n; s = this.next[s]!) {
      out.push({ seq: this.seqs[s]!, offset: this.offsets[s]!, count: this.counts[s]! });
    }
    return out;
  }

  /** A metric's pending measures. */
  measuresOf(metricId: string): number {
    let n = 0;
    for (let s = this.heads.get(metricId) ?? NONE; s !== NONE; s = this.next[s]!) n += this.counts[s]!;
    return n;
  }

  /**
   * Drops a metric's refs up to seq `upTo` (all by default), telling `each`
   * the seq of every one; the measures dropped.
   */
  release(metricId: string, upTo = Infinity, each: (seq: number) => void = () => undefined): number {
    const head = this.heads.get(metricId);
    if (head === undefined) return 0;
    const tail = this.tails[head]!;
    let dropped = 0;
    let s = head;
    while (s !== NONE && this.seqs[s]! <= upTo) {
      const after = this.next[s]!;
      dropped += this.counts[s]!;
      each(this.seqs[s]!);
      this.next[s] = this.free;
      this.free = s;
      s = after;
    }
    this.total -= dropped;
    if (s === NONE) {
      this.heads.delete(metricId);
      if (this.heads.size === 0) this.shrink();
    } else if (s !== head) {
      this.tails[s] = tail;
      this.heads.set(metricId, s);
    }
    return dropped;
  }

  private slot(): number {
    if (this.free !== NONE) {
      const s = this.free;
      this.free = this.next[s]!;
      return s;
    }
    if (this.unused === this.seqs.length) this.resize(2 * this.seqs.length);
    return this.unused++;
  }

  /** Back to at most KEPT_SLOTS (and no window objects) once no ref is left: a burst's backlog must not hold its peak for good. */
  private shrink(): void {
    this.free = NONE;
    this.unused = 0;
    this.view.length = 0;
    this.viewed.length = 0;
    if (this.seqs.length > KEPT_SLOTS) this.resize(KEPT_SLOTS);
  }

  private resize(slots: number): void {
    const grown = <T extends Float64Array | Uint32Array | Int32Array>(a: T, make: new (n: number) => T): T => {
      const b = new make(slots);
      b.set(a.subarray(0, Math.min(a.length, slots)));
      return b;
    };
    this.seqs = grown(this.seqs, Float64Array);
    this.offsets = grown(this.offsets, Uint32Array);
    this.counts = grown(this.counts, Uint32Array);
    this.oldest = grown(this.oldest, Float64Array);
    this.newest = grown(this.newest, Float64Array);
    this.notedAt = grown(this.notedAt, Float64Array);
    this.next = grown(this.next, Int32Array);
    this.tails = grown(this.tails, Int32Array);
  }
}
