// The record cache's free space: first fit at the lowest offset (pages are
// touched only as far as records reach), room given back merged with its
// neighbours whatever the order it comes back in.
import { describe, expect, it } from 'vitest';
import { FreeRanges } from '../../engine/free-ranges.js';

describe('FreeRanges', () => {
  it('takes from the lowest offset, until no range has the room', () => {
    const free = new FreeRanges(30);
    expect([free.take(10), free.take(10), free.take(11), free.take(10), free.take(1)]).toEqual([0, 10, -1, 20, -1]);
  });

  it('fills the lowest hole that fits, skipping one too small', () => {
    const free = new FreeRanges(100);
    for (let i = 0; i < 10; i++) free.take(10);
    free.give(10, 10);
    free.give(50, 10);
    free.give(60, 10);
    expect([free.take(15), free.take(10), free.take(5), free.take(1)]).toEqual([50, 10, 65, -1]);
  });

  // Ten blocks of 10 in a buffer of 100, given back in an order, then the whole buffer taken at once: it is one range again.
  it.each<[string, number[]]>([
    ['in order', [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]],
    ['in reverse', [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]],
    ['odd ones then even ones (each even one joins both neighbours)', [1, 3, 5, 7, 9, 0, 2, 4, 6, 8]],
    ['from the middle out', [5, 4, 6, 3, 7, 2, 8, 1, 9, 0]],
  ])('merges what is given back: %s', (_case, order) => {
    const free = new FreeRanges(100);
    for (let i = 0; i < 10; i++) expect(free.take(10)).toBe(10 * i);
    for (const i of order) free.give(10 * i, 10);
    expect(free.take(100)).toBe(0);
  });

  it('has no room in an empty buffer but takes nothing anywhere', () => {
    expect(new FreeRanges(0).take(1)).toBe(-1);
    expect(new FreeRanges(10).take(0)).toBe(0);
  });
});
