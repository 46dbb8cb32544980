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
/**
 * Slots come in pages: a backlog that grows adds pages and never copies
 * the ones it has. Grown by doubling, the columns of a time-major backlog
 * (hundreds of thousands of slots) were allocated, faulted in and copied
 * through every size: a visible share of the main thread in its profiles.
 */
const PAGE_BITS = 12;
const PAGE_SLOTS = 1 << PAGE_BITS;
const PAGE_MASK = PAGE_SLOTS - 1;
/**
 * Pages kept when the backlog empties (3.5 MiB of columns, 65,536 slots,
 * for a collector's next push). A burst's other pages go: kept for twice
 * its peak backlog, as they were, those of a 2.3M-point burst
 * (bench:footprint) held 20 MB for good.
 */
const KEPT_PAGES = 16;
export const KEPT_SLOTS = KEPT_PAGES * PAGE_SLOTS;

/** The columns of PAGE_SLOTS slots. */
class Page {
  readonly seqs = new Float64Array(PAGE_SLOTS);
  readonly offsets = new Uint32Array(PAGE_SLOTS);
  readonly counts = new Uint32Array(PAGE_SLOTS);
  readonly oldest = new Float64Array(PAGE_SLOTS);
  readonly newest = new Float64Array(PAGE_SLOTS);
  readonly notedAt = new Float64Array(PAGE_SLOTS);
  /** The next slot of the metric, or of the free list. */
  readonly next = new Int32Array(PAGE_SLOTS);
  /** At a metric's oldest slot: its newest one. */
  readonly tails = new Int32Array(PAGE_SLOTS);
}

export class PendingRefs {
  /** Per metric, its oldest slot. */
  private readonly heads = new Map<string, number>();
  /** Slot s is at index s & PAGE_MASK of page s >>> PAGE_BITS. */
  private readonly pages: Page[] = [new Page()];
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

  /** Slots its pages hold, used or not. */
  get capacity(): number {
    return this.pages.length * PAGE_SLOTS;
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

  private page(s: number): Page {
    return this.pages[s >>> PAGE_BITS]!;
  }

  private seqOf(s: number): number {
    return this.pages[s >>> PAGE_BITS]!.seqs[s & PAGE_MASK]!;
  }

  private nextOf(s: number): number {
    return this.pages[s >>> PAGE_BITS]!.next[s & PAGE_MASK]!;
  }

  private setNext(s: number, next: number): void {
    this.pages[s >>> PAGE_BITS]!.next[s & PAGE_MASK] = next;
  }

  /** Notes a ref, in seq order among the metric's (a record another node appended may be noted after later ones). */
  add(metricId: string, seq: number, offset: number, count: number, oldest: number, newest: number, notedAt: number): void {
    const s = this.slot();
    const page = this.page(s);
    const i = s & PAGE_MASK;
    page.seqs[i] = seq;
    page.offsets[i] = offset;
    page.counts[i] = count;
    page.oldest[i] = oldest;
    page.newest[i] = newest;
    page.notedAt[i] = notedAt;
    this.total += count;
    const head = this.heads.get(metricId);
    if (head === undefined) {
      page.next[i] = NONE;
      page.tails[i] = s;
      this.heads.set(metricId, s);
      return;
    }
    const headPage = this.page(head);
    const tail = headPage.tails[head & PAGE_MASK]!;
    if (this.seqOf(tail) <= seq) {
      page.next[i] = NONE;
      this.setNext(tail, s);
      headPage.tails[head & PAGE_MASK] = s;
      return;
    }
    if (this.seqOf(head) > seq) {
      page.next[i] = head;
      page.tails[i] = tail;
      this.heads.set(metricId, s);
      return;
    }
    let prev = head;
    while (this.seqOf(this.nextOf(prev)) <= seq) prev = this.nextOf(prev);
    page.next[i] = this.nextOf(prev);
    this.setNext(prev, s);
  }

  /**
   * A metric's refs as the reorder window sees them, oldest first, in
   * objects kept for the next call (which overwrites them): a sweep asks for
   * every pending metric's, and a metric may have hundreds of refs.
   */
  window(metricId: string): readonly WindowRef[] {
    const { view } = this;
    let n = 0;
    for (let s = this.heads.get(metricId) ?? NONE; s !== NONE; n++) {
      const page = this.page(s);
      const i = s & PAGE_MASK;
      let ref = this.viewed[n];
      if (ref === undefined) this.viewed.push((ref = { seq: 0, oldest: 0, newest: 0, notedAt: 0 }));
      ref.seq = page.seqs[i]!;
      ref.oldest = page.oldest[i]!;
      ref.newest = page.newest[i]!;
      ref.notedAt = page.notedAt[i]!;
      view[n] = ref;
      s = page.next[i]!;
    }
    view.length = n;
    return view;
  }

  /** A metric's first `n` refs (all by default), to hand to a job. */
  refs(metricId: string, n = Infinity): IncomingRef[] {
    const out: IncomingRef[] = [];
    for (let s = this.heads.get(metricId) ?? NONE; s !== NONE && out.length < n; ) {
      const page = this.page(s);
      const i = s & PAGE_MASK;
      out.push({ seq: page.seqs[i]!, offset: page.offsets[i]!, count: page.counts[i]! });
      s = page.next[i]!;
    }
    return out;
  }

  /** A metric's pending measures. */
  measuresOf(metricId: string): number {
    let n = 0;
    for (let s = this.heads.get(metricId) ?? NONE; s !== NONE; s = this.nextOf(s)) n += this.page(s).counts[s & PAGE_MASK]!;
    return n;
  }

  /**
   * Drops a metric's refs up to seq `upTo` (all by default), telling `each`
   * the seq of every one; the measures dropped.
   */
  release(metricId: string, upTo = Infinity, each: (seq: number) => void = () => undefined): number {
    const head = this.heads.get(metricId);
    if (head === undefined) return 0;
    const tail = this.page(head).tails[head & PAGE_MASK]!;
    let dropped = 0;
    let s = head;
    while (s !== NONE) {
      const page = this.page(s);
      const i = s & PAGE_MASK;
      const seq = page.seqs[i]!;
      if (seq > upTo) break;
      const after = page.next[i]!;
      dropped += page.counts[i]!;
      each(seq);
      page.next[i] = this.free;
      this.free = s;
      s = after;
    }
    this.total -= dropped;
    if (s === NONE) {
      this.heads.delete(metricId);
      if (this.heads.size === 0) this.shrink();
    } else if (s !== head) {
      this.page(s).tails[s & PAGE_MASK] = tail;
      this.heads.set(metricId, s);
    }
    return dropped;
  }

  private slot(): number {
    if (this.free !== NONE) {
      const s = this.free;
      this.free = this.nextOf(s);
      return s;
    }
    if (this.unused === this.pages.length * PAGE_SLOTS) this.pages.push(new Page());
    return this.unused++;
  }

  /** Once no ref is left: no window objects, and at most KEPT_PAGES pages. */
  private shrink(): void {
    this.free = NONE;
    this.unused = 0;
    this.view.length = 0;
    this.viewed.length = 0;
    this.pages.length = Math.min(this.pages.length, KEPT_PAGES);
  }
}
