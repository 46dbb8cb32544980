/**
 * The free bytes of a buffer that holds blocks of varying sizes, given and
 * taken back in any order (record-cache.ts): kept as ranges sorted by
 * where they start, adjacent ones merged, so that finding room costs the
 * count of free ranges rather than of blocks held (hundreds of records of
 * a time-major backlog, mostly of one size: few ranges). First fit, the
 * lowest offset: the buffer's pages are touched only as far as blocks
 * reach into it.
 */
export class FreeRanges {
  /** Free range i is [starts[i], ends[i]). */
  private readonly starts: number[];
  private readonly ends: number[];

  constructor(size: number) {
    this.starts = size > 0 ? [0] : [];
    this.ends = size > 0 ? [size] : [];
  }

  /** The lowest offset of `length` free bytes, now taken; -1 when no range has them. */
  take(length: number): number {
    for (let i = 0; i < this.starts.length; i++) {
      const start = this.starts[i]!;
      if (this.ends[i]! - start < length) continue;
      if (this.ends[i]! - start === length) {
        this.starts.splice(i, 1);
        this.ends.splice(i, 1);
      } else {
        this.starts[i] = start + length;
      }
      return start;
    }
    return -1;
  }

  /** Gives back the `length` bytes at `start`, taken before. */
  give(start: number, length: number): void {
    if (length === 0) return;
    const end = start + length;
    // The first range after it.
    let lo = 0;
    let hi = this.starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.starts[mid]! < start) lo = mid + 1;
      else hi = mid;
    }
    const joinsBefore = lo > 0 && this.ends[lo - 1] === start;
    const joinsAfter = lo < this.starts.length && this.starts[lo] === end;
    if (joinsBefore && joinsAfter) {
      this.ends[lo - 1] = this.ends[lo]!;
      this.starts.splice(lo, 1);
      this.ends.splice(lo, 1);
    } else if (joinsBefore) {
      this.ends[lo - 1] = end;
    } else if (joinsAfter) {
      this.starts[lo] = start;
    } else {
      this.starts.splice(lo, 0, start);
      this.ends.splice(lo, 0, end);
    }
  }

}
