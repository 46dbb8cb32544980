/**
 * Buffers the main thread encodes incoming records into (one per push and
 * shard), given back once the push is appended and reused. A record lives
 * across its append, longer than a young-generation collection, so a fresh
 * buffer per push (~570 KB for a time-major push of 10,000 metrics) became
 * old-generation garbage, freed only by a full collection, which V8 starts
 * for external memory only after it has grown by 64 MB; malloc then kept the
 * pages. Only buffers this pool allocated are taken back: a small
 * Buffer.allocUnsafe shares its memory with others.
 */

/** Spare buffers kept: as many as the pushes usually in flight. */
const MOST_SPARE = 8;
/** Larger buffers are not kept: the spare ones hold at most MOST_SPARE times this. */
const LARGEST_KEPT = 4 * 1024 ** 2;
/** Buffers are allocated by this many bytes, so that pushes of similar sizes reuse them. */
const STEP = 64 * 1024;

export class RecordBuffers {
  private readonly spare: ArrayBuffer[] = [];
  private readonly own = new WeakSet<ArrayBuffer>();

  constructor(
    private readonly mostSpare = MOST_SPARE,
    private readonly largestKept = LARGEST_KEPT,
  ) {}

  /** `size` bytes, not initialized, the caller's until given back. */
  take(size: number): Buffer {
    let best = -1;
    for (let i = 0; i < this.spare.length; i++) {
      const length = this.spare[i]!.byteLength;
      if (length >= size && (best === -1 || length < this.spare[best]!.byteLength)) best = i;
    }
    const memory = best === -1 ? this.allocate(size) : this.spare.splice(best, 1)[0]!;
    return Buffer.from(memory, 0, size);
  }

  /** Takes back a buffer `take` gave, once nothing reads it any more; any other is left alone. */
  give(bytes: Uint8Array): void {
    const memory = bytes.buffer as ArrayBuffer;
    if (!this.own.has(memory) || this.spare.includes(memory)) return;
    if (this.spare.length >= this.mostSpare || memory.byteLength > this.largestKept) return;
    this.spare.push(memory);
  }

  /** Spare buffers kept now. */
  get spareCount(): number {
    return this.spare.length;
  }

  private allocate(size: number): ArrayBuffer {
    const memory = Buffer.allocUnsafeSlow(Math.max(STEP, Math.ceil(size / STEP) * STEP)).buffer as ArrayBuffer;
    this.own.add(memory);
    return memory;
  }
}
