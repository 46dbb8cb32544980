import { describe, expect, it } from 'vitest';
import { defaultPolicyChunk, random } from '../../bench/split-codec.bench.js';
import {
  CorruptSplitError,
  compactRowCount,
  decodeSplit,
  encodeCompactSplit,
  encodeSplit,
  growCompactSplit,
  splitEncodings,
  type SplitColumns,
} from '../../formats/split-codec.js';

const MINUTE = 60_000_000;
const KEY = 3600 * MINUTE;

/** Rows `from` to `to` of `data`, one a minute from KEY, columns and masks from the given functions of the row. */
function rows(from: number, to: number, columns: ((i: number) => number)[], present: (((i: number) => boolean) | null)[] = columns.map(() => null)): SplitColumns {
  const index = Array.from({ length: to - from }, (_, k) => from + k);
  return {
    timestamps: Float64Array.from(index, (i) => KEY + i * MINUTE),
    columns: columns.map((f) => Float64Array.from(index, f)),
    present: present.map((p) => (p === null ? null : Uint8Array.from(index, (i) => (p(i) ? 1 : 0)))),
  };
}

function concat(a: SplitColumns, b: SplitColumns): SplitColumns {
  const joined = (x: Float64Array, y: Float64Array): Float64Array => {
    const out = new Float64Array(x.length + y.length);
    out.set(x);
    out.set(y, x.length);
    return out;
  };
  return {
    timestamps: joined(a.timestamps, b.timestamps),
    columns: a.columns.map((c, j) => joined(c, b.columns[j]!)),
    present: a.present.map((m, j) => {
      const n = b.present[j];
      if (m === null && n === null) return null;
      return Uint8Array.from([...(m ?? new Uint8Array(a.timestamps.length).fill(1)), ...(n ?? new Uint8Array(b.timestamps.length).fill(1))]);
    }),
  };
}

function bitsOf(values: Float64Array): number[] {
  return [...new Uint32Array(values.buffer, values.byteOffset, 2 * values.length)];
}

/** Decodes `bytes` and checks that it holds `data`'s rows bit for bit (absent rows aside). */
function expectHolds(bytes: Uint8Array, data: SplitColumns): void {
  const decoded = decodeSplit(bytes, KEY, MINUTE, data.columns.length);
  expect([...decoded.timestamps]).toEqual([...data.timestamps]);
  data.columns.forEach((column, j) => {
    const mask = data.present[j];
    const present = Array.from(column, (_, i) => mask === null || mask[i] !== 0);
    expect(decoded.present[j] === null ? present.map(() => true) : [...decoded.present[j]!].map((p) => p === 1)).toEqual(present);
    const kept = (values: Float64Array): number[] => bitsOf(values).filter((_, w) => present[w >> 1]);
    expect(kept(decoded.columns[j]!)).toEqual(kept(column));
  });
}

const decimal = (seed: number, digits: number) => {
  const rand = random(seed);
  return () => Math.round((40 + 10 * rand()) * 10 ** digits) / 10 ** digits;
};
const tiny = (seed: number) => {
  const rand = random(seed);
  return () => 1e-20 * (1 + rand());
};

// Columns named by what they pin. Each case: earlier rows, added rows, and
// whether the added rows still fit the earlier plan (else grow gives null).
const cases: [string, SplitColumns, SplitColumns, boolean][] = [
  ['a decimal gauge continued', rows(0, 15, [decimal(1, 2)]), rows(15, 30, [decimal(2, 2)]), true],
  ['a decimal gauge that needs a decimal more', rows(0, 15, [decimal(1, 2)]), rows(15, 30, [decimal(2, 3)]), false],
  ['a decimal gauge followed by NaN', rows(0, 15, [decimal(1, 2)]), rows(15, 16, [() => NaN]), false],
  ['sums of decimals whose residuals need more bits', rows(0, 4, [(i) => i / 4]), rows(4, 8, [(i) => 0.1 * i + 0.2]), true],
  ['residuals that need more bits, absent rows in both parts', rows(0, 6, [(i) => i / 4], [(i) => i % 2 === 0]), rows(6, 12, [(i) => 0.1 * i + 0.2], [(i) => i % 3 !== 0]), true],
  ['residuals that need more bits where earlier deltas then overflow', rows(0, 3, [(i) => -1.1e15 + 1.1e15 * i + (i % 2)]), rows(3, 5, [() => 1.1e15 + 0.375]), false],
  ['floats (byte-split) continued, with NaN', rows(0, 15, [tiny(3)]), rows(15, 30, [(i) => (i === 20 ? NaN : 1e-20 * (1 + 1 / i))]), true],
  ['a constant that stays', rows(0, 15, [() => 5, decimal(1, 2)]), rows(15, 30, [() => 5, decimal(2, 2)]), true],
  ['a constant that starts to vary', rows(0, 15, [() => 5, decimal(1, 2)]), rows(15, 30, [(i) => i, decimal(2, 2)]), false],
  ['a copy that stays one', rows(0, 15, [decimal(1, 2), decimal(1, 2)]), rows(15, 30, [decimal(2, 2), decimal(2, 2)]), true],
  ['a copy that parts', rows(0, 15, [decimal(1, 2), decimal(1, 2)]), rows(15, 30, [decimal(2, 2), decimal(3, 2)]), false],
  ['a quotient that stays one', rows(0, 15, [(i) => (i + 1) / 3, (i) => i + 1, () => 3]), rows(15, 30, [(i) => (i + 1) / 3, (i) => i + 1, () => 3]), true],
  ['a quotient that stops being one', rows(0, 15, [(i) => (i + 1) / 3, (i) => i + 1, () => 3]), rows(15, 30, [(i) => i / 7, (i) => i + 1, () => 3]), false],
  [
    'absent rows in both parts',
    rows(0, 15, [decimal(1, 2), tiny(2)], [(i) => i % 3 !== 0, (i) => i % 2 === 0]),
    rows(15, 30, [decimal(2, 2), tiny(4)], [(i) => i % 4 !== 0, (i) => i % 5 === 0]),
    true,
  ],
  ['absent rows in the added part only', rows(0, 15, [decimal(1, 2)]), rows(15, 30, [decimal(2, 2)], [(i) => i % 2 === 0]), true],
  ['absent rows in the earlier part only', rows(0, 15, [decimal(1, 2)], [(i) => i > 3]), rows(15, 30, [decimal(2, 2)]), true],
  ['a column without values that gets some', rows(0, 15, [decimal(1, 2), () => 1], [null, () => false]), rows(15, 30, [decimal(2, 2), () => 1]), false],
  ['the default policy chunk', defaultPolicyChunkRows(0, 15), defaultPolicyChunkRows(15, 30), true],
];

function defaultPolicyChunkRows(from: number, to: number): SplitColumns {
  const { data } = defaultPolicyChunk(7, 30);
  const columns = data.columns.map((c) => (i: number) => c[i]!);
  return rows(from, to, columns);
}

describe('growCompactSplit', () => {
  it.each(cases)('appends %s as encoding every row on the earlier plan does, or gives null when the rows no longer fit it', (_, first, added, fits) => {
    const earlier = encodeCompactSplit(KEY, MINUTE, first);
    const whole = concat(first, added);
    const grown = growCompactSplit(earlier, KEY, MINUTE, added);
    const encoded = encodeCompactSplit(KEY, MINUTE, whole, earlier);
    expect(grown !== null).toBe(fits);
    if (grown !== null) {
      expect([...grown]).toEqual([...encoded]);
      expect(splitEncodings(grown)).toEqual(splitEncodings(earlier));
      expect(compactRowCount(grown)).toBe(whole.timestamps.length);
    }
    expectHolds(encoded, whole);
  });

  it('grows chunk after chunk of random decimal series with absent rows to what they hold', () => {
    const rand = random(42);
    for (let series = 0; series < 30; series++) {
      const digits = Math.floor(4 * rand());
      const value = decimal(series, digits);
      const absent = rand() / 2;
      let bytes: Uint8Array | null = null;
      let whole: SplitColumns | null = null;
      for (let at = 0; at < 120; ) {
        const next = Math.min(120, at + 1 + Math.floor(20 * rand()));
        const part = rows(at, next, [value, (i) => i % 7, value], [null, () => rand() >= absent, () => rand() >= absent]);
        whole = whole === null ? part : concat(whole, part);
        bytes = bytes === null ? encodeCompactSplit(KEY, MINUTE, part) : (growCompactSplit(bytes, KEY, MINUTE, part) ?? encodeCompactSplit(KEY, MINUTE, whole, bytes));
        at = next;
      }
      expectHolds(bytes!, whole!);
    }
  });

  it('gives null for a split in the Arrow container', () => {
    const first = rows(0, 15, [decimal(1, 2)]);
    expect(growCompactSplit(encodeSplit(KEY, MINUTE, first), KEY, MINUTE, rows(15, 20, [decimal(2, 2)]))).toBeNull();
  });

  const rejects: [string, () => unknown, new (...args: never[]) => Error][] = [
    ['rows at or before the last row', () => growCompactSplit(encodeCompactSplit(KEY, MINUTE, rows(0, 15, [decimal(1, 2)])), KEY, MINUTE, rows(14, 20, [decimal(2, 2)])), RangeError],
    ['another column count', () => growCompactSplit(encodeCompactSplit(KEY, MINUTE, rows(0, 15, [decimal(1, 2)])), KEY, MINUTE, rows(15, 20, [decimal(2, 2), decimal(3, 2)])), CorruptSplitError],
    [
      'corrupt earlier bytes',
      () => {
        const bytes = encodeCompactSplit(KEY, MINUTE, rows(0, 15, [decimal(1, 2)]));
        bytes[bytes.length - 1] ^= 0xff;
        return growCompactSplit(bytes, KEY, MINUTE, rows(15, 20, [decimal(2, 2)]));
      },
      CorruptSplitError,
    ],
  ];
  it.each(rejects)('rejects %s', (_, grow, error) => {
    expect(grow).toThrow(error);
  });
});

describe('encodeCompactSplit with an earlier split', () => {
  const derived = (encoding: string): boolean => encoding === 'constant' || encoding === 'same' || encoding === 'quotient';
  it.each(cases)('encodes %s to what it holds: with the earlier derived columns where they hold, else as the full plan', (_, first, added) => {
    const earlier = encodeCompactSplit(KEY, MINUTE, first);
    const whole = concat(first, added);
    const encoded = encodeCompactSplit(KEY, MINUTE, whole, earlier);
    expectHolds(encoded, whole);
    const plain = encodeCompactSplit(KEY, MINUTE, whole);
    const before = splitEncodings(earlier);
    const hold = before.every((encoding, j) => !derived(encoding) || splitEncodings(plain)[j] === encoding);
    if (hold) expect(splitEncodings(encoded).map(derived)).toEqual(before.map(derived));
    else expect([...encoded]).toEqual([...plain]);
  });

  // A new chunk after the earlier one: its rows do not begin with the earlier rows.
  const after: [string, SplitColumns, SplitColumns, string[]][] = [
    ['keeps the earlier layouts where the rows fit them', rows(0, 15, [decimal(1, 2), tiny(2), () => 5]), rows(15, 30, [decimal(2, 2), tiny(3), () => 5]), ['delta', 'xor', 'constant']],
    ['keeps a layout the full plan would not pick for these rows', rows(0, 15, [tiny(2)]), rows(15, 30, [(i) => 1e-20 * (1 + 1 / i)]), ['xor']],
    ['stores a column that turned constant as one', rows(0, 15, [decimal(1, 2), decimal(2, 2)]), rows(15, 30, [decimal(3, 2), () => 7]), ['delta', 'constant']],
    ['plans afresh a column whose values no longer fit its decimals', rows(0, 15, [decimal(1, 2), decimal(2, 2)]), rows(15, 30, [decimal(3, 2), tiny(4)]), ['delta', 'bytesplit']],
    ['plans every column afresh once a derived column no longer holds', rows(0, 15, [() => 5, decimal(2, 2)]), rows(15, 30, [decimal(3, 2), decimal(3, 2)]), ['delta', 'same']],
  ];
  it.each(after)('for the rows after it %s', (_, first, next, encodings) => {
    const earlier = encodeCompactSplit(KEY, MINUTE, first);
    const bytes = encodeCompactSplit(KEY, MINUTE, next, earlier);
    expect(splitEncodings(bytes)).toEqual(encodings);
    expectHolds(bytes, next);
  });

  it('takes the fewest decimals up to the earlier ones, as the full plan does', () => {
    const earlier = encodeCompactSplit(KEY, MINUTE, rows(0, 15, [decimal(1, 3)]));
    const next = rows(15, 30, [decimal(2, 1)]);
    const bytes = encodeCompactSplit(KEY, MINUTE, next, earlier);
    expect([...bytes]).toEqual([...encodeCompactSplit(KEY, MINUTE, next)]);
  });

  it('re-plans a column stored plain (its choice rests on repeats the new rows may not have)', () => {
    const repeating = (i: number) => Math.floor(i / 3) / 7;
    const first = rows(0, 40, [repeating]);
    const earlier = encodeCompactSplit(KEY, MINUTE, first);
    expect(splitEncodings(earlier)).toEqual(['raw']);
    const whole = concat(first, rows(40, 80, [tiny(9)]));
    expect([...encodeCompactSplit(KEY, MINUTE, whole, earlier)]).toEqual([...encodeCompactSplit(KEY, MINUTE, whole)]);
  });
});

describe('encodeCompactSplit without an earlier split', () => {
  // Uniform tiny floats (byte-split) for the first 64 rows, then a slow walk (XOR) for the rest.
  const layoutsChange = (): SplitColumns => {
    const rand = random(5);
    let walk = 1.2345e-20;
    return rows(0, 300, [(i) => (i < 64 ? 1e-20 * (1 + rand()) : (walk *= 1 + 1e-4 * (rand() - 0.5)))]);
  };
  it('chooses the layouts of a long split on its first 64 rows, as the chunks after it keep them', () => {
    const data = layoutsChange();
    const bytes = encodeCompactSplit(KEY, MINUTE, data);
    expect(splitEncodings(bytes)).toEqual(['bytesplit']);
    expect(splitEncodings(encodeSplit(KEY, MINUTE, data))).toEqual(['xor']);
    expectHolds(bytes, data);
  });

  const later: [string, SplitColumns][] = [
    ['values that need more decimals after the first rows', rows(0, 200, [(i) => (i < 100 ? i / 4 : i / 8)])],
    ['a constant that varies after the first rows', rows(0, 200, [(i) => (i < 100 ? 3 : i), decimal(1, 2)])],
    ['columns equal only in the first rows', rows(0, 200, [(i) => i / 4, (i) => (i < 100 ? i / 4 : 1 + i / 4)])],
  ];
  it.each(later)('plans %s as the full plan does', (_, data) => {
    const bytes = encodeCompactSplit(KEY, MINUTE, data);
    expect(splitEncodings(bytes)).toEqual(splitEncodings(encodeSplit(KEY, MINUTE, data)));
    expectHolds(bytes, data);
  });
});
