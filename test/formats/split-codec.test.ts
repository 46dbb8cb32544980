import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { makeShape, METHODS, random, type ShapeName } from '../../bench/split-codec.bench.js';
import {
  CorruptSplitError,
  decodeSplit,
  encodeCompactSplit,
  encodeSplit,
  splitEncodings,
  type ColumnEncoding,
  type SplitColumns,
} from '../../formats/split-codec.js';

const MINUTE = 60_000_000;

function bitsOf(values: Float64Array): Uint32Array {
  return new Uint32Array(values.buffer, values.byteOffset, 2 * values.length);
}

/**
 * Numbers, or [high, low] words of a bit pattern: building through a JS
 * array would canonicalise NaN payloads.
 */
function float64s(...entries: (number | [number, number])[]): Float64Array {
  const values = new Float64Array(entries.length);
  entries.forEach((entry, i) => {
    if (typeof entry === 'number') values[i] = entry;
    else bitsOf(values).set([entry[1], entry[0]], 2 * i);
  });
  return values;
}

/** What decode must return: absent rows hold 0 and all-present masks are null. */
function normalized(data: SplitColumns): SplitColumns {
  const present = data.present.map((mask) => (mask === null || mask.every((p) => p !== 0) ? null : Uint8Array.from(mask, (p) => (p !== 0 ? 1 : 0))));
  const columns = data.columns.map((column, j) => column.map((v, i) => (present[j] === null || present[j]![i] === 1 ? v : 0)));
  // `map` copies values as numbers, which may canonicalise NaN payloads.
  data.columns.forEach((column, j) => {
    const source = bitsOf(column);
    const target = bitsOf(columns[j]);
    for (let i = 0; i < column.length; i++) {
      if (present[j] === null || present[j]![i] === 1) target.set(source.subarray(2 * i, 2 * i + 2), 2 * i);
    }
  });
  return { timestamps: data.timestamps, columns, present };
}

/** Index of the first differing element, or -1: far quicker than toEqual on full splits. */
function firstDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}

function expectBitExact(actual: SplitColumns, expected: SplitColumns): void {
  const want = normalized(expected);
  expect(firstDifference(actual.timestamps, want.timestamps), 'first differing timestamp').toBe(-1);
  const none = want.columns.map(() => -1);
  expect(actual.present.map((mask) => mask === null), 'columns without a mask').toEqual(want.present.map((mask) => mask === null));
  const maskDifferences = actual.present.map((mask, j) => (mask === null ? -1 : firstDifference(mask, want.present[j]!)));
  expect(maskDifferences, 'first differing row of each mask').toEqual(none);
  const differences = actual.columns.map((column, j) => firstDifference(bitsOf(column), bitsOf(want.columns[j])));
  expect(differences, 'first differing word of each column').toEqual(none);
}

type Encode = (key: number, granularity: number, data: SplitColumns) => Uint8Array;

/** Both containers hold the same columns: every round trip runs on each. */
const CONTAINERS: [string, Encode][] = [
  ['Arrow (format 1)', encodeSplit],
  ['compact (format 2)', encodeCompactSplit],
];

/** A split of one value column, a row a minute from key 0. */
function oneColumn(values: Float64Array, present: Uint8Array | null = null): SplitColumns {
  return { timestamps: Float64Array.from(values, (_, i) => i * MINUTE), columns: [values], present: [present] };
}

function sample(n: number, seed: number, value: (rand: () => number) => number): Float64Array {
  const rand = random(seed);
  return Float64Array.from({ length: n }, () => value(rand));
}

function walk(start: number): (rand: () => number) => number {
  let v = start;
  return (rand) => (v *= 1 + 1e-4 * (rand() - 0.5));
}

/** Values of nine decimals near a million, whose decimal deltas fit but are as noisy as their bits. */
function nineDecimalWalk(): (rand: () => number) => number {
  let v = 1e6;
  return (rand) => (v = Math.round((v + 1e3 * (rand() - 0.5)) * 1e9) / 1e9);
}

function nineDecimals(rand: () => number): number {
  return Math.round(1e6 * rand() * 1e9) / 1e9;
}

function decimals(rand: () => number): number {
  return Math.round(rand() * 10_000) / 100;
}

function meanOfThreeDecimals(rand: () => number): number {
  return (decimals(rand) + decimals(rand) + decimals(rand)) / 3;
}

function stdOfFiveDecimals(rand: () => number): number {
  const xs = Array.from({ length: 5 }, () => decimals(rand));
  const mean = xs.reduce((a, b) => a + b) / 5;
  return Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / 4);
}

function everyNth(n: number, step: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => (i % step === 0 ? 1 : 0));
}

describe.each(CONTAINERS)('%s round trip', (_container, encode) => {
  const roundTrip = (key: number, granularity: number, data: SplitColumns): SplitColumns =>
    decodeSplit(encode(key, granularity, data), key, granularity, data.columns.length);

  it.each<ShapeName>(['counter', 'gauge', 'sparse'])('is bit-exact on a full %s split', (name) => {
    const { key, granularity, data } = makeShape(name);
    expectBitExact(roundTrip(key, granularity, data), data);
  });

  const special: [string, SplitColumns][] = [
    [
      'keeps NaN payloads, ±Infinity, -0, subnormals and extremes bit for bit',
      oneColumn(
        float64s(
          [0x7ff80000, 0], [0xfff80000, 0], [0x7ff00000, 1], [0x7fffffff, 0xffffffff], [0xfff00000, 0x1234],
          Infinity, -Infinity, -0, 0, 5e-324, -Number.MAX_VALUE, 1.5, -0, NaN,
        ),
      ),
    ],
    ['keeps -0 among decimals', oneColumn(new Float64Array([1.25, -0, 2.5, 0, -3.75]))],
    ['keeps a column of NaN only', oneColumn(new Float64Array(50).fill(NaN))],
    ['keeps a column of one NaN payload only', oneColumn(float64s(...Array.from({ length: 50 }, (): [number, number] => [0x7ff4dead, 0xbeef])))],
    ['keeps a column of -0 only', oneColumn(new Float64Array(50).fill(-0))],
    [
      'keeps NaN distinct from absent rows',
      oneColumn(Float64Array.of(NaN, 7, NaN, NaN, 1), Uint8Array.of(1, 0, 1, 0, 1)),
    ],
    ['drops the values of absent rows', oneColumn(new Float64Array([1, 99, 3, 99]), Uint8Array.of(1, 0, 1, 0))],
    ['keeps a column without any value', oneColumn(new Float64Array([1, 2, 3]), Uint8Array.of(0, 0, 0))],
    ['returns null for a mask where every row is present', oneColumn(new Float64Array([1, 2, 3]), Uint8Array.of(1, 1, 1))],
    [
      'keeps masks that differ between columns holding equal values',
      {
        timestamps: Float64Array.of(0, MINUTE, 2 * MINUTE),
        columns: [Float64Array.of(1, 2, 3), Float64Array.of(1, 2, 3), Float64Array.of(1, 2, 3)],
        present: [null, Uint8Array.of(1, 0, 1), Uint8Array.of(0, 1, 1)],
      },
    ],
    [
      'keeps a quotient column whose operands contain infinities and zeros',
      {
        timestamps: Float64Array.of(0, MINUTE, 2 * MINUTE, 3 * MINUTE),
        columns: [Float64Array.of(Infinity, -0, 1 / 3, 0), Float64Array.of(Infinity, -0, 1, 0), Float64Array.of(1, 2, 3, 4)],
        present: [null, null, null],
      },
    ],
    [
      'keeps sums of decimals that miss the nearest double by a few units in the last place',
      oneColumn(sample(3600, 3, (rand) => [0, 1, 2, 3, 4, 5].reduce((sum) => sum + Math.round(rand() * 10_000) / 100, 0))),
    ],
    ['keeps integers beyond 2^53', oneColumn(sample(200, 4, (rand) => 2 ** 60 + Math.floor(rand() * 1e6) * 2 ** 10))],
    ['keeps the widest delta the delta encoding takes', oneColumn(Float64Array.of(2 ** 51, -(2 ** 51)))],
    ['keeps a delta one wider', oneColumn(Float64Array.of(-(2 ** 51), 2 ** 51))],
    ['keeps integers just beyond the delta encoding', oneColumn(Float64Array.of(2 ** 51 + 2, 2 ** 51 - 1, -(2 ** 51) - 2))],
  ];
  it.each(special)('%s', (_, data) => {
    expectBitExact(roundTrip(0, MINUTE, data), data);
  });

  // Reads ask for one column: it must come out as in a full decode, also when
  // it is stored as the same as, or the quotient of, other columns.
  const shapes = (['counter', 'gauge', 'sparse'] as ShapeName[]).map((name): [string, number, SplitColumns] => {
    const { key, data } = makeShape(name);
    return [name, key, data];
  });
  it.each([...shapes, ...special.map(([name, data]): [string, number, SplitColumns] => [name, 0, data])])(
    'decodes one column alone as in the full decode: %s',
    (_, key, data) => {
      const bytes = encode(key, MINUTE, data);
      const full = decodeSplit(bytes, key, MINUTE, data.columns.length);
      for (let j = 0; j < data.columns.length; j++) {
        const one = decodeSplit(bytes, key, MINUTE, data.columns.length, j);
        expect(firstDifference(one.timestamps, full.timestamps)).toBe(-1);
        expect(firstDifference(bitsOf(one.columns[j]!), bitsOf(full.columns[j]!))).toBe(-1);
        expect(one.present[j]).toEqual(full.present[j]);
      }
    },
  );

  const grids: [string, number, number, number[]][] = [
    ['a half-second granularity', 1_704_067_200_000_000, 500_000, [0, 1, 2, 5, 3599]],
    ['a 1 µs granularity', 1_704_067_200_000_000, 1, [0, 1, 2, 3, 1000, 3599]],
    ['a first row after the key and large gaps', 3600 * MINUTE, MINUTE, [17, 18, 2000, 3599]],
  ];
  it.each(grids)('keeps timestamps with %s', (_, key, granularity, offsets) => {
    const data: SplitColumns = {
      timestamps: Float64Array.from(offsets, (k) => key + k * granularity),
      columns: [Float64Array.from(offsets, (k) => k * 0.1)],
      present: [null],
    };
    expect(key % (granularity * 3600)).toBe(0);
    expectBitExact(roundTrip(key, granularity, data), data);
  });

  it('encodes columns and masks that are views into larger arrays', () => {
    const { key, granularity, data } = makeShape('sparse');
    const n = data.timestamps.length;
    const widen = <T extends Float64Array | Uint8Array>(array: T, make: (length: number) => T): T => {
      const wide = make(n + 3);
      wide.set(array, 2);
      return wide.subarray(2, 2 + n) as T;
    };
    const views: SplitColumns = {
      timestamps: widen(data.timestamps, (length) => new Float64Array(length)),
      columns: data.columns.map((column) => widen(column, (length) => new Float64Array(length))),
      present: data.columns.map((_, j) => widen(Uint8Array.from({ length: n }, (_, i) => (i + j) % 3 === 0 ? 0 : 1), (length) => new Uint8Array(length))),
    };
    expectBitExact(roundTrip(key, granularity, views), views);
  });

  // Small buffers stay uncompressed, and Arrow reads those in place.
  const unaligned: [string, number, number][] = [
    ['a full gauge split', 1, 3600],
    ['a one-period split', 1, 1],
    ['a one-period split', 4, 1],
  ];
  it.each(unaligned)('decodes %s from a view at byte offset %i', (_, offset, periods) => {
    const { key, granularity, data } = makeShape('gauge', 1, periods);
    const bytes = encode(key, granularity, data);
    const stored = new Uint8Array(bytes.length + offset);
    stored.set(bytes, offset);
    expectBitExact(decodeSplit(stored.subarray(offset), key, granularity, METHODS.length), data);
  });

  const sizes: [string, number][] = [
    ['an empty split', 0],
    ['a single point', 1],
  ];
  it.each(sizes)('round trips %s with every method', (_, n) => {
    const data: SplitColumns = {
      timestamps: Float64Array.from({ length: n }, (_, i) => (i + 5) * MINUTE),
      columns: METHODS.map((_, j) => Float64Array.from({ length: n }, () => j + 0.5)),
      present: METHODS.map((_, j) => (j === 0 ? Uint8Array.from({ length: n }, () => 0) : null)),
    };
    expectBitExact(roundTrip(0, MINUTE, data), data);
  });
});

describe.each(CONTAINERS)('%s encodes', (_container, encode) => {
  // The encoder plans every column in working arrays it keeps between calls.
  const gauge = makeShape('gauge', 2, 200);
  const n = gauge.data.timestamps.length;
  const sparse = {
    ...gauge,
    data: { ...gauge.data, present: gauge.data.columns.map((_, j) => Uint8Array.from({ length: n }, (_, i) => ((i + j) % 3 === 0 ? 0 : 1))) },
  };
  const dense = (seed: number, periods: number) => makeShape('gauge', seed, periods);
  const cases: [string, number][] = [
    ['after a longer split', 3600],
    ['after a shorter split', 20],
  ];
  it.each(cases)('a split with absent rows to the same bytes %s', (_, periods) => {
    const { key, granularity, data } = sparse;
    const before = dense(3, periods);
    encode(before.key, before.granularity, before.data);
    const first = encode(key, granularity, data);
    const other = dense(4, periods);
    encode(other.key, other.granularity, other.data);
    expect(encode(key, granularity, data)).toEqual(first);
    expectBitExact(decodeSplit(first, key, granularity, METHODS.length), data);
  });
});

describe('encoding choice', () => {
  const gauge = makeShape('gauge').data;
  const counter = makeShape('counter').data;
  const picks: [ColumnEncoding, string, SplitColumns, number][] = [
    ['constant', 'the count of a gauge sampled at a fixed rate', gauge, 5],
    ['same', 'the max of a counter sampled once per period (equal to its mean)', counter, 3],
    ['quotient', 'the mean of a gauge (sum / count)', gauge, 0],
    ['delta', 'a counter', counter, 0],
    ['delta', 'decimals with two digits', gauge, 2],
    ['xor', 'a slow random walk of tiny floats', oneColumn(sample(3600, 5, walk(1.2345e-20))), 0],
    ['xor', 'a slow random walk of huge integers', oneColumn(sample(3600, 8, walk(1e17))), 0],
    ['bytesplit', 'uniform tiny floats', oneColumn(sample(3600, 6, (rand) => 1e-20 * (1 + rand()))), 0],
    ['raw', 'floats repeating from a small set', oneColumn(sample(3600, 7, (rand) => Math.floor(rand() * 50) / 7)), 0],
    ['raw', 'means of three decimals (values seldom repeat, a third\'s mantissa does)', oneColumn(sample(3600, 9, meanOfThreeDecimals)), 0],
    ['raw', 'floats from a small set, most rows absent', oneColumn(sample(3600, 10, (rand) => Math.floor(rand() * 50) / 7), everyNth(3600, 10)), 0],
    ['bytesplit', 'standard deviations of five decimals', oneColumn(sample(3600, 11, stdOfFiveDecimals)), 0],
    // Delta is costed first and the others dropped once their first planes
    // cost more: these pin the choice on both sides of that cut.
    ['delta', 'fifteen rows of two decimals (a frozen chunk)', oneColumn(sample(15, 12, decimals)), 0],
    ['xor', 'a walk of nine decimals near a million (deltas fit, XOR costs less)', oneColumn(sample(60, 12, nineDecimalWalk())), 0],
    ['bytesplit', 'fifteen uniform values of nine decimals (deltas fit, planes cost less)', oneColumn(sample(15, 12, nineDecimals)), 0],
  ];
  it.each(picks)('picks %s for %s', (encoding, _, data, column) => {
    const bytes = encodeSplit(0, MINUTE, data);
    expect(splitEncodings(bytes)[column]).toBe(encoding);
    expectBitExact(decodeSplit(bytes, 0, MINUTE, data.columns.length), data);
  });
});

describe('decodeSplit rejects', () => {
  const { key, granularity, data } = makeShape('gauge');
  const bytes = encodeSplit(key, granularity, data);
  const corrupt = (change: (copy: Uint8Array) => void): Uint8Array => {
    const copy = bytes.slice();
    change(copy);
    return copy;
  };
  // Bytes 1-4 hold the CRC-32 of the rest, byte 5 the column count, byte 6
  // the encoding of the first column.
  const forged = (change: (copy: Uint8Array) => void): Uint8Array =>
    corrupt((copy) => {
      change(copy);
      new DataView(copy.buffer).setUint32(1, crc32(copy.subarray(5)), true);
    });

  const cases: [string, Uint8Array, number, RegExp][] = [
    ['an empty buffer', new Uint8Array(0), 6, /truncated/],
    ['a buffer cut inside the header', bytes.subarray(0, 3), 6, /truncated/],
    ['a buffer cut after the header', bytes.subarray(0, 12), 6, /checksum/],
    ['a buffer missing its last byte', bytes.subarray(0, bytes.length - 1), 6, /checksum/],
    ['a flipped bit in the Arrow body', corrupt((b) => void (b[b.length >> 1] ^= 0x10)), 6, /checksum/],
    ['a flipped bit in the checksum', corrupt((b) => void (b[2] ^= 1)), 6, /checksum/],
    ['an unknown format version', corrupt((b) => void (b[0] = 3)), 6, /unknown split format version 3/],
    ['an unknown column encoding under a valid checksum', forged((b) => void (b[6] = 0x7f)), 6, /unknown encoding 127/],
    ['a garbled Arrow message under a valid checksum', forged((b) => b.fill(0xab, b.length - 64)), 6, /Arrow record batch/],
    ['fewer columns than stored', bytes, 5, /6 value columns, expected 5/],
    ['more columns than stored', bytes, 7, /6 value columns, expected 7/],
  ];
  it.each(cases)('%s with a CorruptSplitError', (_, input, columnCount, message) => {
    const decode = (): SplitColumns => decodeSplit(input, key, granularity, columnCount);
    expect(decode).toThrow(CorruptSplitError);
    expect(decode).toThrow(message);
  });

  it('leaves the stored bytes untouched', () => {
    const copy = bytes.slice();
    decodeSplit(bytes, key, granularity, METHODS.length);
    expect(firstDifference(bytes, copy)).toBe(-1);
  });
});

describe('decodeSplit rejects a compact split', () => {
  const { key, granularity, data } = makeShape('gauge', 1, 30);
  const bytes = encodeCompactSplit(key, granularity, data);
  /** The split with its header kept and its body replaced, under a valid checksum. */
  const withBody = (body: Uint8Array): Uint8Array => {
    const copy = Uint8Array.from([...bytes.subarray(0, bytes.length - frameOf(bytes).length), ...body]);
    new DataView(copy.buffer).setUint32(1, crc32(copy.subarray(5)), true);
    return copy;
  };
  const cases: [string, Uint8Array, RegExp][] = [
    ['a buffer missing its last byte', bytes.subarray(0, bytes.length - 1), /checksum/],
    ['a body that is not ZSTD', withBody(Uint8Array.of(1, 2, 3, 4)), /does not decompress/],
    ['a body of the wrong size', withBody(frameOf(encodeCompactSplit(key, granularity, makeShape('gauge', 1, 31).data))), /where 30 rows take/],
  ];
  it.each(cases)('%s with a CorruptSplitError', (_, input, message) => {
    const decode = (): SplitColumns => decodeSplit(input, key, granularity, METHODS.length);
    expect(decode).toThrow(CorruptSplitError);
    expect(decode).toThrow(message);
  });
});

/** A compact split's ZSTD frame: from its magic number to the end. */
function frameOf(bytes: Uint8Array): Uint8Array {
  for (let i = 5; i + 4 <= bytes.length; i++) {
    if (bytes[i] === 0x28 && bytes[i + 1] === 0xb5 && bytes[i + 2] === 0x2f && bytes[i + 3] === 0xfd) return bytes.subarray(i);
  }
  throw new Error('no ZSTD frame');
}

describe('the compact container', () => {
  it.each([1, 30, 255])('spends less than Arrow on %i rows of every method', (periods) => {
    const { key, granularity, data } = makeShape('gauge', 1, periods);
    const compact = encodeCompactSplit(key, granularity, data).length;
    const arrow = encodeSplit(key, granularity, data).length;
    expect(arrow - compact).toBeGreaterThan(200);
  });
});

describe('encodeSplit rejects', () => {
  const columns = (n: number): Float64Array[] => [new Float64Array(n)];
  const cases: [string, number, number, SplitColumns][] = [
    ['a timestamp off the granularity grid', 0, MINUTE, { timestamps: Float64Array.of(0, MINUTE + 1), columns: columns(2), present: [null] }],
    ['a timestamp before the key', MINUTE, MINUTE, { timestamps: Float64Array.of(0), columns: columns(1), present: [null] }],
    ['timestamps out of order', 0, MINUTE, { timestamps: Float64Array.of(2 * MINUTE, MINUTE), columns: columns(2), present: [null] }],
    ['a repeated timestamp', 0, MINUTE, { timestamps: Float64Array.of(MINUTE, MINUTE), columns: columns(2), present: [null] }],
    ['a fractional granularity', 0, 0.5, { timestamps: Float64Array.of(0), columns: columns(1), present: [null] }],
    ['a column of another length', 0, MINUTE, { timestamps: Float64Array.of(0), columns: columns(2), present: [null] }],
    ['a mask of another length', 0, MINUTE, { timestamps: Float64Array.of(0), columns: columns(1), present: [Uint8Array.of(1, 1)] }],
    ['a missing mask', 0, MINUTE, { timestamps: Float64Array.of(0), columns: columns(1), present: [] }],
  ];
  it.each(cases)('%s with a RangeError', (_, key, granularity, data) => {
    expect(() => encodeSplit(key, granularity, data)).toThrow(RangeError);
  });
});
