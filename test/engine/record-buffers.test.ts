// The buffers pushes are encoded into: given back once appended and reused,
// never while a caller holds them, and never one the pool did not allocate.
import { describe, expect, it } from 'vitest';
import { RecordBuffers } from '../../engine/record-buffers.js';

describe('RecordBuffers', () => {
  it('gives a buffer of the size asked', () => {
    expect(new RecordBuffers().take(1000).length).toBe(1000);
  });

  it('reuses a buffer given back, the smallest that fits', () => {
    const pool = new RecordBuffers();
    const big = pool.take(200_000);
    const small = pool.take(10);
    pool.give(big);
    pool.give(small);
    expect(pool.take(50).buffer).toBe(small.buffer);
    expect(pool.take(100_000).buffer).toBe(big.buffer);
  });

  it('never gives the same memory to two callers', () => {
    const pool = new RecordBuffers();
    const first = pool.take(100);
    pool.give(first);
    pool.give(first);
    const [a, b] = [pool.take(100), pool.take(100)];
    expect(a.buffer).not.toBe(b.buffer);
  });

  it.each<[string, (pool: RecordBuffers) => Uint8Array]>([
    ['a small Buffer.allocUnsafe, which shares its memory', () => Buffer.allocUnsafe(100)],
    ['a buffer of another pool', () => new RecordBuffers().take(100)],
    ['a buffer larger than the largest kept', (pool) => pool.take(5_000)],
  ])('does not keep %s', (_, made) => {
    const pool = new RecordBuffers(8, 4096);
    pool.give(made(pool));
    expect(pool.spareCount).toBe(0);
  });

  it('keeps at most the number of spare buffers it was given', () => {
    const pool = new RecordBuffers(2);
    const taken = [pool.take(10), pool.take(10), pool.take(10)];
    for (const bytes of taken) pool.give(bytes);
    expect(pool.spareCount).toBe(2);
  });
});
