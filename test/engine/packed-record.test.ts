// Records as a processing thread keeps them: their points without their
// ids, in the densest form the record allows (a collector's push: entries
// of one shape, often one set of timestamps shared by all), read back by
// the offsets the record's entries give, to the same points and bits as
// the record as read.
import { describe, expect, it } from 'vitest';
import type { Series } from '../../engine/aggregation.js';
import { encodeIncomingBatch, type IncomingEntries } from '../../engine/incoming-batch.js';
import { packRecordPoints, RecordPoints } from '../../engine/packed-record.js';

const S = 1_000_000;
const T0 = Date.UTC(2024, 0, 1) * 1000;
type Metric = [id: string, points: [t: number, v: number][]];
const id = (i: number) => `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`;

function record(metrics: Metric[]): { bytes: Buffer; entries: IncomingEntries } {
  const series = (points: [number, number][]): Series => ({
    timestamps: Float64Array.from(points, ([t]) => T0 + t * S),
    values: Float64Array.from(points, ([, v]) => v),
  });
  return encodeIncomingBatch(new Map(metrics.map(([name, points]) => [name, series(points)])));
}

/** `bytes` packed into a buffer with guard bytes after them: packing must write exactly the length it gives. */
function packed(bytes: Uint8Array): Uint8Array {
  const packing = packRecordPoints(bytes);
  const size = packing.length;
  const into = new Uint8Array(size + 8).fill(0xee);
  packing.write(into);
  expect(into.subarray(size)).toEqual(new Uint8Array(8).fill(0xee));
  return into.subarray(0, size);
}

function points(reader: RecordPoints, entries: IncomingEntries, i: number): Series {
  const into = { timestamps: new Float64Array(entries.counts[i]!), values: new Float64Array(entries.counts[i]!) };
  expect(reader.copy(entries.offsets[i]!, entries.counts[i]!, into, 0)).toBe(entries.counts[i]);
  return into;
}

const bits = (a: Float64Array) => [...new Uint8Array(a.buffer)];

describe('packed records', () => {
  // Size of each form: ENTRIES 8 + 8 an entry + 16 a point; UNIFORM 20 + 16 a point; SHARED 20 + 8 a point + 8 a shared timestamp.
  it.each<[string, Metric[], number]>([
    ['time-major: one timestamp shared by every metric (SHARED)', Array.from({ length: 50 }, (_, i): Metric => [id(i), [[7, i / 3]]]), 20 + 8 + 8 * 50],
    ['every metric the same 10 timestamps (SHARED)', Array.from({ length: 20 }, (_, i): Metric => [id(i), Array.from({ length: 10 }, (_, k): [number, number] => [60 * k, i * k])]), 20 + 80 + 8 * 200],
    ['one shape, timestamps that differ (UNIFORM)', Array.from({ length: 30 }, (_, i): Metric => [id(i), [[i, 1], [i + 1, 2]]]), 20 + 16 * 60],
    ['one shape, the same timestamps in another order (UNIFORM)', [[id(0), [[0, 1], [1, 2]]], [id(1), [[1, 1], [0, 2]]]], 20 + 16 * 4],
    ['one shape, no points (SHARED of nothing)', [[id(0), []], [id(1), []]], 20],
    ['ids of different lengths (ENTRIES)', Array.from({ length: 40 }, (_, i): Metric => [`${i}${'x'.repeat((i * 7) % 13)}`, [[5, i]]]), 8 + 8 * 40 + 16 * 40],
    ['point counts that differ (ENTRIES)', Array.from({ length: 40 }, (_, i): Metric => [id(i), Array.from({ length: (i * 5) % 4 }, (_, k): [number, number] => [k, i - k])]), 8 + 8 * 40 + 16 * 60],
    ['infinities and negative zero, timestamps shared (SHARED)', [['a', [[0, -0], [1, Infinity]]], ['b', [[0, -Infinity], [1, NaN]]]], 20 + 16 + 8 * 4],
    ['one metric (SHARED)', [['only', [[0, 1], [1, 2], [2, 3]]]], 20 + 24 + 24],
    ['no metric (ENTRIES)', [], 8],
  ])('give back the points and bits of the record as read, by its offsets: %s', (_case, metrics, size) => {
    const { bytes, entries } = record(metrics);
    expect(packRecordPoints(bytes).length).toBe(size);
    const raw = new RecordPoints().of(bytes, false);
    const fromPacked = new RecordPoints().of(packed(bytes), true);
    // In reverse order, as a batch's metrics are not in the record's.
    for (let i = metrics.length - 1; i >= 0; i--) {
      const a = points(raw, entries, i);
      const b = points(fromPacked, entries, i);
      expect(bits(b.timestamps)).toEqual(bits(a.timestamps));
      expect(bits(b.values)).toEqual(bits(a.values));
      expect([...a.timestamps]).toEqual(metrics[i]![1].map(([t]) => T0 + t * S));
    }
  });

  it.each<[string, (n: number) => [number, number][]]>([
    ['shared timestamps', () => [[0, 0]]],
    ['timestamps that differ', (n) => [[n, 0]]],
    ['point counts that differ', (n) => Array.from({ length: 1 + (n % 2) }, (_, k): [number, number] => [k, 0])],
  ])('keep the bits of NaN payloads as the record has them: %s', (_case, shape) => {
    const { bytes, entries } = record([0, 1, 2].map((i): Metric => [id(i), shape(i)]));
    // Each metric's first value set to a NaN of its own payload, in the record's bytes.
    const payloads = [0x7ff00000_00000001n, 0xfff80000_deadbeefn, 0x7ff7ffff_ffffffffn];
    payloads.forEach((payload, i) => bytes.writeBigUInt64LE(payload, entries.offsets[i]! + 8 * entries.counts[i]!));
    const into = packed(bytes);
    for (const payload of payloads) {
      const word = Buffer.alloc(8);
      word.writeBigUInt64LE(payload);
      expect(Buffer.from(into).indexOf(word)).toBeGreaterThan(0);
    }
  });

  it.each<[string, Metric[]]>([
    ['SHARED', [[id(0), [[0, 1]]], [id(1), [[0, 2]]]]],
    ['UNIFORM', [[id(0), [[0, 1]]], [id(1), [[1, 2]]]]],
    ['ENTRIES', [['a', [[0, 1]]], ['bb', [[1, 2]]]]],
  ])('refuse an offset no entry has: %s', (_case, metrics) => {
    const { bytes, entries } = record(metrics);
    const reader = new RecordPoints().of(packed(bytes), true);
    const into = { timestamps: new Float64Array(1), values: new Float64Array(1) };
    expect(() => reader.copy(entries.offsets[1]! + 1, 1, into, 0)).toThrow(RangeError);
    expect(() => reader.copy(entries.offsets[1]! + 4096, 1, into, 0)).toThrow(RangeError);
  });

  it('are a third of the points\' bytes for a time-major push of 10,000 metrics, against 8 bytes an entry and 16 a point before', () => {
    const { bytes } = record(Array.from({ length: 10_000 }, (_, i): Metric => [id(i), [[0, i]]]));
    expect(bytes.length).toBe(4 + 10_000 * (1 + 36 + 4 + 16));
    expect(packRecordPoints(bytes).length).toBe(20 + 8 + 8 * 10_000);
  });
});
