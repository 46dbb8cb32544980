import { describe, expect, it } from 'vitest';
import { grown } from '../../formats/grown.js';

describe('grown', () => {
  it.each([
    { what: 'keeps an array that holds the size', length: 8, size: 8, expected: 8, same: true },
    { what: 'doubles an array a little short', length: 8, size: 9, expected: 16, same: false },
    { what: 'takes the size when past double', length: 8, size: 40, expected: 40, same: false },
    { what: 'grows an empty array to the size', length: 0, size: 3, expected: 3, same: false },
  ])('$what', ({ length, size, expected, same }) => {
    const array = Float64Array.from({ length }, (_, i) => i + 0.5);
    const out = grown(array, size);
    expect(out).toBeInstanceOf(Float64Array);
    expect(out.length).toBe(expected);
    expect(out === array).toBe(same);
    expect(Array.from(out.subarray(0, length))).toEqual(Array.from(array));
  });
});
