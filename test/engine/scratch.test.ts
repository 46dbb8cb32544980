// Scratch memory for processing: views never overlap until reset, come
// zeroed, and takes larger than a block still get room of their own.
import { describe, expect, it } from 'vitest';
import { Float64Scratch } from '../../engine/scratch.js';

describe('Float64Scratch', () => {
  it.each([
    ['small takes', [3, 5, 7]],
    ['a take past a block', [10, 200_000, 10]],
    ['many takes over several blocks', Array.from({ length: 50 }, () => 5_000)],
  ])('gives zeroed views that do not overlap: %s', (_name, sizes) => {
    const scratch = new Float64Scratch();
    const views = sizes.map((n, i) => {
      const view = scratch.take(n);
      expect(view.length).toBe(n);
      expect(view.every((x) => x === 0)).toBe(true);
      view.fill(i + 1);
      return view;
    });
    views.forEach((view, i) => expect(view.every((x) => x === i + 1)).toBe(true));
  });

  it('reuses its memory after reset, zeroed again', () => {
    const scratch = new Float64Scratch();
    const first = scratch.take(100).fill(7);
    scratch.reset();
    const again = scratch.take(100);
    expect(again.buffer).toBe(first.buffer);
    expect(again.every((x) => x === 0)).toBe(true);
  });

  it.each([
    ['the same sizes again', [[3, 5, 7], [3, 5, 7]]],
    ['other sizes', [[3, 5, 7], [5, 3, 7, 2]]],
    ['fewer takes, then more', [[4, 4, 4, 4], [4], [4, 4, 4, 4, 4]]],
    ['past a block, then within it', [[10, 200_000, 10], [10, 10, 10]]],
  ])('hands out views right for each use after reset, whichever views it reuses: %s', (_name, uses) => {
    const scratch = new Float64Scratch();
    for (const sizes of uses) {
      scratch.reset();
      const views = sizes.map((n, i) => {
        const view = scratch.take(n);
        expect(view.length).toBe(n);
        expect(view.every((x) => x === 0)).toBe(true);
        return view.fill(i + 1);
      });
      views.forEach((view, i) => expect(view.every((x) => x === i + 1)).toBe(true));
    }
  });
});
