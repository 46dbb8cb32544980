/**
 * Reused Float64 memory for one metric update at a time. An update copies
 * the metric's raw tail (up to a block of points: 3,600 at 1 s for a 1 h
 * block) and merges the new points into it, ~100 KB of arrays per update
 * when each has its own ArrayBuffer: external memory that V8 tracks and
 * sweeps, which kept its background threads ~70% of a core busy under
 * ingestion. Views into a few large blocks cost none of that.
 */

/** Allocates a zeroed array of `n`; views from a Float64Scratch or fresh arrays. */
export type Float64Alloc = (n: number) => Float64Array;

export const freshFloat64: Float64Alloc = (n) => new Float64Array(n);

const BLOCK = 64 * 1024;
/** Blocks kept between uses; an update needing more (a huge push) allocates past it once. */
const MAX_KEPT_BLOCKS = 16;
/**
 * Views remembered per use (between resets), by the order they were taken
 * in: an update takes a few per granularity.
 */
const MAX_KEPT_VIEWS = 64;

export class Float64Scratch {
  private readonly blocks: Float64Array[] = [];
  private block = 0;
  private used = 0;
  /**
   * The k-th view taken since the last reset, with the block it views and
   * where it starts there. Updates of metrics fed alike (a time-major
   * batch: the same points per metric, the same tail) take the same sizes
   * in the same order, so the view made for the previous update is the one
   * wanted again: a view is an object with an ArrayBuffer reference (~100
   * bytes), ~10 per update, that the worker's young collections then swept.
   */
  private readonly views: Float64Array[] = [];
  private readonly viewBlocks: Float64Array[] = [];
  private readonly viewStarts = new Int32Array(MAX_KEPT_VIEWS);
  private taken = 0;

  /** A zeroed view of `n` values, valid until the next `reset`. */
  readonly take: Float64Alloc = (n) => {
    for (;;) {
      const current = this.blocks[this.block];
      if (current === undefined) {
        this.blocks.push(new Float64Array(Math.max(BLOCK, n)));
        continue;
      }
      if (this.used + n <= current.length) {
        const view = this.viewAt(current, n);
        this.used += n;
        return view.fill(0);
      }
      this.block++;
      this.used = 0;
    }
  };

  /** The view of `n` values of `block` from `used`: the one kept for this turn when it is that, else a new one (kept). */
  private viewAt(block: Float64Array, n: number): Float64Array {
    const k = this.taken++;
    if (k >= MAX_KEPT_VIEWS) return block.subarray(this.used, this.used + n);
    const kept = this.views[k];
    if (kept !== undefined && kept.length === n && this.viewBlocks[k] === block && this.viewStarts[k] === this.used) return kept;
    const view = block.subarray(this.used, this.used + n);
    this.views[k] = view;
    this.viewBlocks[k] = block;
    this.viewStarts[k] = this.used;
    return view;
  }

  /** Every view taken so far is given back (and must not be used any more). */
  reset(): void {
    this.block = 0;
    this.used = 0;
    this.taken = 0;
    if (this.blocks.length > MAX_KEPT_BLOCKS) {
      this.blocks.length = MAX_KEPT_BLOCKS;
      // A kept view of a block let go would keep that block.
      this.views.length = 0;
      this.viewBlocks.length = 0;
    }
  }
}
