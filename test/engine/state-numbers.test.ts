// A metric state's numbers (engine/state-numbers.ts) come back bit for bit
// whatever they are, and take few bytes in the cases states are made of:
// whole units or seconds from a base, decimals of few places, a repeat.
import { describe, expect, it } from 'vitest';
import { MAX_LONG_BYTES, MAX_NUMBER_BYTES, NumberReader, writeLong, writeOffset, writeValue } from '../../engine/state-numbers.js';

const S = 1_000_000;
const T = 1_700_000_000 * S;

/** Writes with `write` into a fresh buffer; the bytes taken and what `read` gives back from them. */
function roundTrip(write: (out: Buffer) => number, read: (r: NumberReader) => number): { size: number; back: number } {
  const out = Buffer.alloc(32, 0xee);
  const size = write(out);
  const r = new NumberReader(out, 0);
  const back = read(r);
  expect(r.at).toBe(size);
  return { size, back };
}

describe('state numbers', () => {
  it.each([
    [0, 1],
    [127, 1],
    [128, 2],
    [2 ** 35, 6],
    [2 ** 53 - 1, MAX_LONG_BYTES],
  ])('write %d as a varint of %d bytes and read it back', (x, bytes) => {
    const { size, back } = roundTrip((out) => writeLong(out, x, 0), (r) => r.long());
    expect([size, back]).toEqual([bytes, x]);
  });

  it.each<[string, number, number, number, number]>([
    ['a split key in splits', 7870 * 216_000 * S, 0, 216_000 * S, 3],
    ['a timestamp 29 periods after its base', T + 29 * 60 * S, T, 60 * S, 2],
    ['a timestamp a period after its base', T + 60 * S, T, 60 * S, 1],
    ['a timestamp before its base', T - 60 * S, T, 60 * S, 1],
    ['a timestamp off the grid, in microseconds', T + 1_500_000, T, S, 4],
    ['a timestamp with a fraction of a microsecond', T + 0.5, T, S, MAX_NUMBER_BYTES],
    ['a granularity in seconds', 60 * S, 0, S, 2],
    ['-0', -0, 0, S, MAX_NUMBER_BYTES],
    ['NaN', Number.NaN, 0, S, MAX_NUMBER_BYTES],
    ['far from its base', 2 ** 60, 0, 1, MAX_NUMBER_BYTES],
  ])('an offset: %s', (_name, x, base, unit, bytes) => {
    const { size, back } = roundTrip((out) => writeOffset(out, 0, x, base, unit), (r) => r.offset(base, unit));
    expect(size).toBe(bytes);
    expect(Object.is(back, x)).toBe(true);
  });

  it.each<[string, number, number, number]>([
    ['the base again', 53.24, 53.24, 1],
    ['a decimal of 2 places, no base', 53.24, Number.NaN, 3],
    ['a decimal of 1 place', 28.5, Number.NaN, 2],
    ['a counter one above its base', 123_456_789_013, 123_456_789_012, 1],
    ['a decimal near its base of as many places', 53.25, 53.24, 1],
    ['a third', 1 / 3, Number.NaN, MAX_NUMBER_BYTES],
    ['a sum off its decimal by rounding', 0.1 + 0.2, Number.NaN, MAX_NUMBER_BYTES],
    ['a decimal of 5 places', 0.00001, Number.NaN, 1],
    ['a large decimal of 5 places', 123_456_789.12345, 123_456_789.12344, 1],
    ['-0 after 0', -0, 0, MAX_NUMBER_BYTES],
    ['0 after -0', 0, -0, 1],
    ['NaN', Number.NaN, Number.NaN, MAX_NUMBER_BYTES],
    ['infinity', Infinity, Infinity, 1],
    ['past 2^47', 2 ** 48, Number.NaN, MAX_NUMBER_BYTES],
    ['the smallest double', 5e-324, 0, MAX_NUMBER_BYTES],
  ])('a value: %s', (_name, v, base, bytes) => {
    const { size, back } = roundTrip((out) => writeValue(out, 0, v, base), (r) => r.value(base));
    expect(size).toBe(bytes);
    expect(Object.is(back, v)).toBe(true);
  });
});
