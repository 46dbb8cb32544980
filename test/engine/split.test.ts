import { describe, expect, it } from 'vitest';
import { random } from '../../bench/split-codec.bench.js';
import {
  decodeRawSplits,
  decodeStoredSplit,
  encodeRawRow,
  encodeRawSplit,
  encodeSealedSplit,
  mergeIntoRawSplit,
  mergeSplits,
  sliceSplit,
  splitKeyOf,
  type SplitColumns,
} from '../../engine/split.js';

const G = 1_000_000;

function split(ts: number[], cols: (number | null)[][]): SplitColumns {
  return {
    timestamps: Float64Array.from(ts),
    columns: cols.map((c) => Float64Array.from(c, (v) => (v === null ? Number.NaN : v))),
    present: cols.map((c) => (c.every((v) => v !== null) ? null : Uint8Array.from(c, (v) => (v === null ? 0 : 1)))),
  };
}

/** Rows as [timestamp, ...values], null where a method has no value. */
function rows(s: SplitColumns): (number | null)[][] {
  return Array.from(s.timestamps, (t, i) => [
    t,
    ...s.columns.map((c, k) => (s.present[k] === null || s.present[k]![i] === 1 ? c[i]! : null)),
  ]);
}

describe('stored splits', () => {
  it.each([
    ['raw', (d: SplitColumns) => encodeRawSplit(d)],
    ['sealed', (d: SplitColumns) => encodeSealedSplit(0, G, d)],
  ])('round-trips the %s form with absent values and NaN', (_name, encode) => {
    const data = split([0, G, 2 * G], [[1.5, Number.NaN, -0], [null, 2, null]]);
    const bytes = encode(data);
    const back = decodeStoredSplit(bytes, 0, G, 2);
    expect(rows(back)).toEqual(rows(data));
    expect(Object.is(back.columns[0]![2], -0)).toBe(true);
  });

  it('keys a split by its window of 3600 periods', () => {
    expect(splitKeyOf(3599 * G, G)).toBe(0);
    expect(splitKeyOf(3600 * G, G)).toBe(3600 * G);
    expect(splitKeyOf(7300 * 60 * G, 60 * G)).toBe(2 * 3600 * 60 * G);
  });
});

describe('mergeSplits', () => {
  it.each([
    [
      'appends after the stored rows, keeping masks',
      split([0, G], [[1, 2], [null, 5]]),
      split([2 * G], [[3], [6]]),
      [[0, 1, null], [G, 2, 5], [2 * G, 3, 6]],
    ],
    [
      'lets present new values replace stored ones at the same timestamp',
      split([0, G], [[1, 2], [4, 5]]),
      split([G, 2 * G], [[20, 30], [null, 60]]),
      [[0, 1, 4], [G, 20, 5], [2 * G, 30, 60]],
    ],
    [
      'interleaves older rows from a back-window update',
      split([0, 2 * G], [[1, 3]]),
      split([G], [[2]]),
      [[0, 1], [G, 2], [2 * G, 3]],
    ],
    ['returns the update when nothing is stored', split([], [[]]), split([G], [[7]]), [[G, 7]]],
  ])('%s', (_name, existing, update, expected) => {
    expect(rows(mergeSplits(existing, update))).toEqual(expected);
  });
});

describe('mergeIntoRawSplit', () => {
  function randomSplit(next: () => number, ncols: number, from: number, count: number, absent: number): SplitColumns {
    const ts: number[] = [];
    for (let t = from; ts.length < count; t++) if (next() < 0.6) ts.push(t * G);
    const cols = Array.from({ length: ncols }, () => ts.map(() => (next() < absent ? null : Math.round(next() * 100) / 4)));
    return split(ts, cols);
  }

  // Without absent values, updates starting after or at the last row take the append path.
  it.each([0.2, 0])('gives what mergeSplits gives on the decoded split, for appends, overlaps and interleaving (%f absent)', (absent) => {
    const next = random(7);
    for (let round = 0; round < 300; round++) {
      const ncols = 1 + Math.floor(next() * 3);
      const existing = randomSplit(next, ncols, 0, Math.floor(next() * 12), absent);
      const update = randomSplit(next, ncols, Math.floor(next() * 14), Math.floor(next() * 6), absent);
      const merged = decodeStoredSplit(mergeIntoRawSplit(encodeRawSplit(existing), update), 0, G, ncols);
      expect(rows(merged)).toEqual(rows(mergeSplits(existing, update)));
    }
  });
});

describe('decodeRawSplits', () => {
  // Consecutive pieces of one split, some with absent values and some without.
  const pieces = [
    split([0, G], [[1, 2], [3, 4]]),
    split([2 * G, 3 * G], [[5, null], [6, 7]]),
    split([4 * G], [[8], [9]]),
    split([5 * G, 6 * G], [[null, 10], [null, 11]]),
  ];
  const whole = split(
    [0, G, 2 * G, 3 * G, 4 * G, 5 * G, 6 * G],
    [[1, 2, 5, null, 8, null, 10], [3, 4, 6, 7, 9, null, 11]],
  );
  it.each([
    ['every column', undefined],
    ['only the first', 0],
    ['only the second', 1],
  ])('decodes raw pieces as the whole split, %s', (_name, only) => {
    const decoded = decodeRawSplits(pieces.map((p) => encodeRawSplit(p)), only);
    const expected = decodeStoredSplit(encodeRawSplit(whole), 0, G, 2, only);
    expect([...decoded.timestamps]).toEqual([...expected.timestamps]);
    expect(decoded.columns.map((c) => [...c])).toEqual(expected.columns.map((c) => [...c]));
    expect(decoded.present.map((p) => (p === null ? null : [...p]))).toEqual(expected.present.map((p) => (p === null ? null : [...p])));
  });

  it('leaves a column without absent values unmasked', () => {
    const decoded = decodeRawSplits([pieces[0]!, pieces[2]!].map((p) => encodeRawSplit(p)));
    expect(decoded.present).toEqual([null, null]);
  });
});

describe('encodeRawRow', () => {
  // Masks given full are left out by encodeRawSplit too: the row's bytes must not depend on how its mask came.
  const data = split([0, G, 2 * G], [[1.5, null, -0], [null, 2, Number.NaN], [3, 4, 5]]);
  data.present[2] = Uint8Array.of(1, 1, 1);
  it.each([0, 1, 2])('encodes row %i as encodeRawSplit encodes that row alone', (row) => {
    expect([...encodeRawRow(data, row)]).toEqual([...encodeRawSplit(sliceSplit(data, row, row + 1))]);
  });
});
