/**
 * The processor's pending refs, packed: a slot per (metric, record) in
 * typed-array columns, each metric's slots chained oldest record first.
 * A burst leaves hundreds of thousands of refs waiting; as objects (with
 * their boxed timestamps) they were promoted to the old generation and
 * walked by every full collection, which let the heap grow to a multiple
 * of them. Columns are a few flat buffers the collector never looks into.
 */
import { grown } from '../formats/grown.js';
import type { IncomingEntries } from './incoming-batch.js';
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
 * Pages kept when the backlog empties (2 MiB of columns, 65,536 slots,
 * for a collector's next push). A burst's other pages go: kept for twice
 * its peak backlog, as they were, those of a 2.3M-point burst
 * (bench:footprint) held 20 MB for good.
 */
const KEPT_PAGES = 16;
export const KEPT_SLOTS = KEPT_PAGES * PAGE_SLOTS;
/** Longest window answered from an array kept for its length (at most ~1 MB of them, all lengths). */
const MAX_VIEW_LENGTH = 512;
/** Rows kept for metrics without refs at most (beyond as many as there are metrics with): ~60 bytes each. */
const MAX_IDLE_ROWS = 1 << 16;
/** Records and metrics tables' first size, and what they shrink back to. */
const FIRST_ROWS = 64;

/**
 * The columns of PAGE_SLOTS slots, 32 bytes a slot. What every ref of a
 * record shares (its seq, when it was noted) is the record's, and a
 * metric's newest slot is the metric's: a time-major push notes one ref
 * for each of thousands of metrics, and held that twice in each of them.
 */
class Page {
  /** The ref's record (see Records). */
  readonly records = new Uint32Array(PAGE_SLOTS);
  readonly offsets = new Uint32Array(PAGE_SLOTS);
  readonly counts = new Uint32Array(PAGE_SLOTS);
  readonly oldest = new Float64Array(PAGE_SLOTS);
  readonly newest = new Float64Array(PAGE_SLOTS);
  /** The next slot of the metric, or of the free list. */
  readonly next = new Int32Array(PAGE_SLOTS);
}

/** Rows numbered from 0, those let go used again first. */
class Rows {
  private readonly free: number[] = [];
  private used = 0;

  take(): number {
    return this.free.pop() ?? this.used++;
  }

  give(row: number): void {
    this.free.push(row);
  }

  /** Rows handed out so far: a table's columns must hold that many. */
  get extent(): number {
    return this.used;
  }

  clear(): void {
    this.free.length = 0;
    this.used = 0;
  }
}

export class PendingRefs {
  /**
   * Per metric, its row in heads and tails, kept once its refs are all
   * released (its head NONE), for its next ones: a time-major collector's
   * metrics are all released by processing and noted again by the next
   * push, and taking them out of the map and putting them back cost the
   * main thread ~1 ms a push of 10,000 metrics, six times what noting them
   * in their rows does. Rows without refs go once more of them than
   * MAX_IDLE_ROWS outnumber those with.
   */
  private readonly metrics = new Map<string, number>();
  private readonly metricRows = new Rows();
  /** Metrics with refs. */
  private live = 0;
  /** Per metric row, its oldest slot (NONE: no refs) and its newest. */
  private heads = new Int32Array(FIRST_ROWS);
  private tails = new Int32Array(FIRST_ROWS);
  /** Per metric row, its metric (undefined once let go). */
  private readonly rowIds: (string | undefined)[] = [];
  /**
   * The metric row of each entry of the record last added: collectors push
   * the same metrics in the same order, and a row checked against its id
   * costs less than a lookup in a map of thousands.
   */
  private lastRows = new Int32Array(FIRST_ROWS).fill(NONE);
  /** Per record row: its seq, when it was noted, and how many of its refs are left. */
  private readonly recordRows = new Rows();
  private seqs = new Float64Array(FIRST_ROWS);
  private notedAt = new Float64Array(FIRST_ROWS);
  private left = new Uint32Array(FIRST_ROWS);
  /** Slot s is at index s & PAGE_MASK of page s >>> PAGE_BITS. */
  private readonly pages: Page[] = [new Page()];
  /**
   * What window answers: views[n] holds the first n of `viewed`, the
   * objects it fills. An array per length rather than one array cut to
   * each metric's length: cut short, V8 trims its store, and lengthened
   * again it allocates a new one, ~60 MB of garbage a second on the main
   * thread in sweeps of a time-major backlog (10,000 metrics of up to
   * hundreds of refs). Longer windows than MAX_VIEW_LENGTH share `view`.
   */
  private readonly views: WindowRef[][] = [];
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
    return this.live;
  }

  has(metricId: string): boolean {
    return this.headOf(metricId) !== NONE;
  }

  /** The metrics with refs. */
  *metricIds(): IterableIterator<string> {
    for (const [id, row] of this.metrics) if (this.heads[row] !== NONE) yield id;
  }

  private page(s: number): Page {
    return this.pages[s >>> PAGE_BITS]!;
  }

  private seqOf(s: number): number {
    return this.seqs[this.pages[s >>> PAGE_BITS]!.records[s & PAGE_MASK]!]!;
  }

  private nextOf(s: number): number {
    return this.pages[s >>> PAGE_BITS]!.next[s & PAGE_MASK]!;
  }

  private setNext(s: number, next: number): void {
    this.pages[s >>> PAGE_BITS]!.next[s & PAGE_MASK] = next;
  }

  /**
   * Notes the refs of record `seq`, noted at `notedAt`, one per entry; each
   * goes in seq order among its metric's (a record another node appended
   * may be noted after later ones).
   */
  add(seq: number, notedAt: number, refs: IncomingEntries): void {
    const n = refs.metricIds.length;
    if (n === 0) return;
    const record = this.recordRows.take();
    if (record >= this.seqs.length) {
      this.seqs = grown(this.seqs, record + 1);
      this.notedAt = grown(this.notedAt, record + 1);
      this.left = grown(this.left, record + 1);
    }
    this.seqs[record] = seq;
    this.notedAt[record] = notedAt;
    this.left[record] = n;
    const { metricIds, offsets, counts, oldest, newest } = refs;
    if (n > this.lastRows.length) {
      const rows = new Int32Array(n).fill(NONE);
      rows.set(this.lastRows);
      this.lastRows = rows;
    }
    for (let k = 0; k < n; k++) {
      const s = this.slot();
      const page = this.page(s);
      const i = s & PAGE_MASK;
      page.records[i] = record;
      page.offsets[i] = offsets[k]!;
      page.counts[i] = counts[k]!;
      page.oldest[i] = oldest[k]!;
      page.newest[i] = newest[k]!;
      this.total += counts[k]!;
      this.lastRows[k] = this.link(metricIds[k]!, s, seq, this.lastRows[k]!);
    }
  }

  /** The row of a metric with refs, `hint` if it is that metric's; undefined for none. */
  private rowOf(metricId: string, hint: number): number | undefined {
    return hint !== NONE && this.rowIds[hint] === metricId ? hint : this.metrics.get(metricId);
  }

  /** Puts slot s, of record `seq`, in its metric's chain; answers the metric's row. */
  private link(metricId: string, s: number, seq: number, hint: number): number {
    let row = this.rowOf(metricId, hint);
    if (row === undefined) {
      row = this.metricRows.take();
      if (row >= this.heads.length) {
        this.heads = grown(this.heads, row + 1);
        this.tails = grown(this.tails, row + 1);
      }
      this.heads[row] = NONE;
      this.rowIds[row] = metricId;
      this.metrics.set(metricId, row);
    }
    if (this.heads[row] === NONE) {
      this.setNext(s, NONE);
      this.heads[row] = this.tails[row] = s;
      this.live++;
      return row;
    }
    const tail = this.tails[row]!;
    if (this.seqOf(tail) <= seq) {
      this.setNext(s, NONE);
      this.setNext(tail, s);
      this.tails[row] = s;
      return row;
    }
    const head = this.heads[row]!;
    if (this.seqOf(head) > seq) {
      this.setNext(s, head);
      this.heads[row] = s;
      return row;
    }
    let prev = head;
    while (this.seqOf(this.nextOf(prev)) <= seq) prev = this.nextOf(prev);
    this.setNext(s, this.nextOf(prev));
    this.setNext(prev, s);
    return row;
  }

  private headOf(metricId: string): number {
    const row = this.metrics.get(metricId);
    return row === undefined ? NONE : this.heads[row]!;
  }

  /**
   * A metric's refs as the reorder window sees them, oldest first, in
   * objects kept for the next call (which overwrites them): a sweep asks for
   * every pending metric's, and a metric may have hundreds of refs.
   */
  window(metricId: string): readonly WindowRef[] {
    const { viewed } = this;
    let n = 0;
    for (let s = this.headOf(metricId); s !== NONE; n++) {
      const page = this.page(s);
      const i = s & PAGE_MASK;
      const record = page.records[i]!;
      let ref = viewed[n];
      if (ref === undefined) viewed.push((ref = { seq: 0, oldest: 0, newest: 0, notedAt: 0 }));
      ref.seq = this.seqs[record]!;
      ref.oldest = page.oldest[i]!;
      ref.newest = page.newest[i]!;
      ref.notedAt = this.notedAt[record]!;
      s = page.next[i]!;
    }
    return this.viewOf(n);
  }

  /** The first n window objects, in an array kept for that length (see views). */
  private viewOf(n: number): readonly WindowRef[] {
    if (n > MAX_VIEW_LENGTH) {
      const { view } = this;
      for (let k = 0; k < n; k++) view[k] = this.viewed[k]!;
      view.length = n;
      return view;
    }
    let view = this.views[n];
    if (view === undefined) {
      for (let k = this.views.length; k < n; k++) this.views[k] = undefined!;
      this.views[n] = view = this.viewed.slice(0, n);
    }
    return view;
  }

  /**
   * Writes a metric's first `n` refs into `out` from index `at`, as seq,
   * offset and count (a job's refs in a JobBatch); how many it wrote.
   */
  copyRefs(metricId: string, n: number, out: Float64Array, at: number): number {
    let copied = 0;
    for (let s = this.headOf(metricId); s !== NONE && copied < n; copied++) {
      const page = this.page(s);
      const i = s & PAGE_MASK;
      out[at++] = this.seqs[page.records[i]!]!;
      out[at++] = page.offsets[i]!;
      out[at++] = page.counts[i]!;
      s = page.next[i]!;
    }
    return copied;
  }

  /** A metric's pending measures. */
  measuresOf(metricId: string): number {
    let n = 0;
    for (let s = this.headOf(metricId); s !== NONE; s = this.nextOf(s)) n += this.page(s).counts[s & PAGE_MASK]!;
    return n;
  }

  /**
   * Drops a metric's refs up to seq `upTo` (all by default), telling `done`
   * the seq of every record none of whose refs is left; the measures dropped.
   */
  release(metricId: string, upTo = Infinity, done?: (seq: number) => void): number {
    const row = this.metrics.get(metricId);
    if (row === undefined || this.heads[row] === NONE) return 0;
    const head = this.heads[row]!;
    let dropped = 0;
    let s = head;
    while (s !== NONE) {
      const page = this.page(s);
      const i = s & PAGE_MASK;
      const record = page.records[i]!;
      const seq = this.seqs[record]!;
      if (seq > upTo) break;
      const after = page.next[i]!;
      dropped += page.counts[i]!;
      if (--this.left[record]! === 0) {
        this.recordRows.give(record);
        done?.(seq);
      }
      page.next[i] = this.free;
      this.free = s;
      s = after;
    }
    this.total -= dropped;
    if (s === NONE) {
      this.heads[row] = NONE;
      if (--this.live === 0) this.shrink();
      else if (this.metrics.size - this.live > Math.max(MAX_IDLE_ROWS, this.live)) this.dropIdleRows();
    } else if (s !== head) this.heads[row] = s;
    return dropped;
  }

  /** Lets go of the rows of metrics without refs. */
  private dropIdleRows(): void {
    for (const [id, row] of this.metrics) {
      if (this.heads[row] !== NONE) continue;
      this.metrics.delete(id);
      this.rowIds[row] = undefined;
      this.metricRows.give(row);
    }
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

  /**
   * Once no ref is left: window objects for MAX_VIEW_LENGTH refs, at most
   * KEPT_PAGES pages, and tables of their first size; the metrics' rows
   * stay for their next refs unless more than MAX_IDLE_ROWS.
   */
  private shrink(): void {
    this.free = NONE;
    this.unused = 0;
    // The window arrays kept per length are rebuilt at a cost of the square of the longest: they stay, those of longer windows go.
    this.view.length = 0;
    if (this.viewed.length > MAX_VIEW_LENGTH) this.viewed.length = MAX_VIEW_LENGTH;
    this.pages.length = Math.min(this.pages.length, KEPT_PAGES);
    this.recordRows.clear();
    if (this.metrics.size > MAX_IDLE_ROWS) {
      this.metrics.clear();
      this.metricRows.clear();
      this.rowIds.length = 0;
      this.lastRows = new Int32Array(FIRST_ROWS).fill(NONE);
      this.heads = new Int32Array(FIRST_ROWS);
      this.tails = new Int32Array(FIRST_ROWS);
    }
    if (this.seqs.length > FIRST_ROWS) {
      this.seqs = new Float64Array(FIRST_ROWS);
      this.notedAt = new Float64Array(FIRST_ROWS);
      this.left = new Uint32Array(FIRST_ROWS);
    }
  }
}
