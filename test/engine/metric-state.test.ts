// Metric states round-trip (with or without an inline chunk, the newest
// chunk's key, masks, several methods, numbers off every grid), keep the
// rows of a metric receiving points raw, take the bytes version 5 promises
// for a settled quiet metric, and states written
// by format 2 (no frozen-chunk count in the granularity headers), formats 3
// to 6 (no inline chunk) and format 7 (version 4) still read.
import { describe, expect, it } from 'vitest';
import { writeVaruint } from '../../formats/varint.js';
import { decodeMetricState, encodeMetricState, lastSeqOf, openSplitOf, type InlineChunk, type MetricState } from '../../engine/metric-state.js';
import { encodeRawSplit } from '../../engine/split.js';

const G = 1_000_000;

function state(frozen: number, tailFrozen = 0, inline?: InlineChunk, newest?: number): MetricState {
  const raw = encodeRawSplit({ timestamps: Float64Array.of(0, G), columns: [Float64Array.of(1, 2)], present: [null] });
  return {
    tail: { timestamps: Float64Array.of(0, G), values: Float64Array.of(1, 2) },
    granularities: [
      { granularity: G, open: { key: 0, raw, frozen, newest, inline }, oldestSealedKey: null },
      { granularity: 60 * G, open: null, oldestSealedKey: -3600 * 60 * G },
    ],
    lastSeq: 7,
    tailFrozen,
  };
}

/**
 * What a settled quiet metric of bench:footprint p60 holds (60 s x mean,
 * 30 rows of which 29 in a 69-byte inline chunk, one raw row, the tail's
 * one point), as that run stored it.
 */
function quiet(): MetricState {
  const key = 1_699_920_000 * G;
  const raw = encodeRawSplit({ timestamps: Float64Array.of(1_700_001_720 * G), columns: [Float64Array.of(53.24)], present: [null] });
  return {
    tail: { timestamps: Float64Array.of(1_700_001_740 * G), values: Float64Array.of(53.24) },
    tailFrozen: 0,
    granularities: [{ granularity: 60 * G, open: { key, raw, frozen: 0, inline: { first: 1_699_999_980 * G, bytes: Buffer.alloc(69, 7) } }, oldestSealedKey: null }],
    lastSeq: 7_521_892_888,
  };
}

/**
 * A state (without inline chunks) as an older format wrote it, fixed
 * headers: 3, a 20-byte header (version, granularity count, column count,
 * 0, tail points, lastSeq, tail chunks) and 32-byte granularity headers
 * (granularity, open key or NaN, oldest sealed key or NaN, raw length,
 * chunks); 2, a 16-byte header and 28-byte granularity headers, without the
 * chunk counts.
 */
function asVersion(version: 2 | 3, st: MetricState, columns: number): Buffer {
  const n = st.tail.timestamps.length;
  const head = Buffer.alloc(version === 2 ? 16 : 20);
  head.set([version, st.granularities.length, columns, 0]);
  head.writeUInt32LE(n, 4);
  head.writeDoubleLE(st.lastSeq, 8);
  if (version === 3) head.writeUInt32LE(st.tailFrozen, 16);
  const parts = [head, Buffer.from(st.tail.timestamps.buffer), Buffer.from(st.tail.values.buffer)];
  for (const g of st.granularities) {
    const h = Buffer.alloc(version === 2 ? 28 : 32);
    h.writeDoubleLE(g.granularity, 0);
    h.writeDoubleLE(g.open?.key ?? Number.NaN, 8);
    h.writeDoubleLE(g.oldestSealedKey ?? Number.NaN, 16);
    h.writeUInt32LE(g.open?.raw.length ?? 0, 24);
    if (version === 3) h.writeUInt32LE(g.open?.frozen ?? 0, 28);
    parts.push(h, Buffer.from(g.open?.raw ?? []));
  }
  return Buffer.concat(parts);
}

/**
 * A state as format 7 wrote it (version 4): version, granularity count,
 * column count, 0, lastSeq (float64), tail points and chunks (varints), the
 * tail's timestamps and values (float64), per granularity its float64,
 * flags (open, oldest sealed, inline), then as flagged the open key and
 * oldest sealed key (float64), the raw length and chunk count (varints),
 * the inline length (varint) and first timestamp (float64), the raw rows
 * and the inline chunk. It kept no newest chunk key.
 */
function asVersion4(st: MetricState, columns: number): Buffer {
  const out = Buffer.alloc(4096);
  out.set([4, st.granularities.length, columns, 0]);
  out.writeDoubleLE(st.lastSeq, 4);
  let at = writeVaruint(out, st.tailFrozen, writeVaruint(out, st.tail.timestamps.length, 12));
  for (const column of [st.tail.timestamps, st.tail.values]) for (const v of column) at = out.writeDoubleLE(v, at);
  for (const { granularity, open, oldestSealedKey } of st.granularities) {
    at = out.writeDoubleLE(granularity, at);
    out[at++] = (open === null ? 0 : 1) | (oldestSealedKey === null ? 0 : 2) | (open?.inline === undefined ? 0 : 4);
    if (open !== null) at = out.writeDoubleLE(open.key, at);
    if (oldestSealedKey !== null) at = out.writeDoubleLE(oldestSealedKey, at);
    if (open === null) continue;
    at = writeVaruint(out, open.frozen, writeVaruint(out, open.raw.length, at));
    if (open.inline !== undefined) at = out.writeDoubleLE(open.inline.first, writeVaruint(out, open.inline.bytes.length, at));
    for (const part of [open.raw, open.inline?.bytes ?? Buffer.alloc(0)]) {
      out.set(part, at);
      at += part.length;
    }
  }
  return out.subarray(0, at);
}

/** The state as plain values: byte arrays as their bytes, whichever class of view holds them (a Buffer or a plain Uint8Array). */
const plain = (s: MetricState) =>
  JSON.parse(
    JSON.stringify(s, function (this: Record<string, unknown>, k: string, v: unknown) {
      // The holder's own value: a Buffer has become its toJSON() by now; a double NaN, -0 or infinite as its name.
      const original = this[k];
      if (typeof original === 'number' && (!Number.isFinite(original) || Object.is(original, -0))) return Object.is(original, -0) ? '-0' : String(original);
      if (original instanceof Float64Array) return [...original].map((x) => (Object.is(x, -0) ? '-0' : Number.isFinite(x) ? x : String(x)));
      return ArrayBuffer.isView(original) ? [...(original as Uint8Array)] : v;
    }),
  );

/** A state of one open split of `rows` rows over `columns` (row-major values), and a tail of `tail` [timestamp, value] points. */
function custom(granularity: number, key: number, timestamps: number[], columns: number[][], masks: (number[] | null)[], tail: [number, number][], lastSeq = 3): MetricState {
  const raw = encodeRawSplit({
    timestamps: Float64Array.from(timestamps),
    columns: columns.map((c) => Float64Array.from(c)),
    present: masks.map((m) => (m === null ? null : Uint8Array.from(m))),
  });
  return {
    tail: { timestamps: Float64Array.from(tail, ([t]) => t), values: Float64Array.from(tail, ([, v]) => v) },
    tailFrozen: 1,
    granularities: [{ granularity, open: { key, raw, frozen: 2, newest: key + 7 * granularity, inline: undefined }, oldestSealedKey: key - 3 * 3600 * granularity }],
    lastSeq,
  };
}

const T = 1_700_000_000 * G;

describe('metric state', () => {
  it.each([
    [0, 0],
    [3, 0],
    [1, 5],
  ])('round-trips with %i open split chunks and %i tail chunks', (frozen, tailFrozen) => {
    expect(plain(decodeMetricState(encodeMetricState(state(frozen, tailFrozen, undefined, frozen > 0 ? 0 : undefined), 1)))).toEqual(
      plain(state(frozen, tailFrozen, undefined, frozen > 0 ? 0 : undefined)),
    );
  });

  it('round-trips with an inline chunk', () => {
    const inline = { first: 5 * G, bytes: Buffer.of(9, 8, 7) };
    const bytes = encodeMetricState(state(0, 2, inline), 1);
    // Its bytes, length (1 byte) and first timestamp (5 periods from the key: 1 byte).
    expect(bytes.length).toBe(encodeMetricState(state(0, 2), 1).length + 3 + 1 + 1);
    expect(plain(decodeMetricState(bytes))).toEqual(plain(state(0, 2, inline)));
  });

  it.each<[string, MetricState]>([
    ['several methods, a period of one point (same values)', custom(60 * G, T, [T, T + 60 * G], [[1.5, 2], [1.5, 2], [1.5, 2], [1, 1]], [null, null, null, null], [[T + 61 * G, 2]])],
    ['masks and absent values', custom(G, T, [T, T + 3 * G, T + 4 * G], [[1, Number.NaN, 3], [0, 0, 9]], [[1, 0, 1], null], [])],
    ['values past every decimal form: thirds, huge, tiny, -0, infinities', custom(G, T, [T, T + G], [[1 / 3, 1e300], [-0, 5e-324], [Infinity, -Infinity]], [null, null, null], [[T + 0.5, 1 / 7], [T + G + 0.25, -0]])],
    ['counters: large integers that step by little', custom(10 * G, T, [T, T + 10 * G, T + 20 * G], [[123_456_789_012, 123_456_789_013, 123_456_789_020]], [null], [[T + 20 * G, 123_456_789_020], [T + 25 * G, 123_456_789_021]])],
    ['timestamps off the grid and before the key, a granularity of a fraction of a microsecond', custom(0.5, 1e15 + 0.5, [1e15 + 0.5, 1e15 + 1], [[-2.25, 7.125]], [null], [[-1e15, 1], [1e18, 2]])],
    ['a lastSeq past 2^35', custom(G, 0, [0], [[1]], [null], [], 2 ** 52 + 2)],
    ['one row of several methods (the compact form)', custom(60 * G, T, [T + 60 * G], [[1.5], [1.5], [2.25], [1]], [null, null, null, null], [[T + 61 * G, 1.5]])],
    ['one row with an absent value (the compact form)', custom(G, T, [T + 3 * G], [[Number.NaN], [9]], [[0], null], [[T + 3 * G, 9]])],
  ])('round-trips %s bit for bit', (_name, st) => {
    const bytes = encodeMetricState(st, st.granularities[0]!.open!.raw[1]!);
    expect(plain(decodeMetricState(bytes))).toEqual(plain(st));
    expect(lastSeqOf(bytes)).toBe(st.lastSeq);
    // The rebuilt raw rows are the very bytes given (processing merges into them).
    expect([...decodeMetricState(bytes).granularities[0]!.open!.raw]).toEqual([...st.granularities[0]!.open!.raw]);
  });

  it.each([
    [1, false],
    [2, true],
    [15, true],
  ])('an open split of %i rows is stored raw: %s (a metric receiving points rewrites them on every update)', (rows, raw) => {
    const timestamps = Array.from({ length: rows }, (_, i) => T + i * G);
    const st = custom(G, T, timestamps, [timestamps.map((_, i) => i / 4)], [null], []);
    expect(encodeMetricState(st, 1).includes(Buffer.from(st.granularities[0]!.open!.raw))).toBe(raw);
  });

  it.each([
    [1, false],
    [2, true],
  ])('a tail of %i points is stored raw: %s', (points, raw) => {
    const st = custom(G, T, [T], [[1]], [null], Array.from({ length: points }, (_, i): [number, number] => [T + (5 + i) * G, i / 3]));
    expect(encodeMetricState(st, 1).includes(Buffer.from(st.tail.timestamps.buffer))).toBe(raw);
  });

  it('reads an open split without rows as none, its tail intact', () => {
    const empty = encodeRawSplit({ timestamps: new Float64Array(0), columns: [new Float64Array(0)], present: [null] });
    const st = state(0);
    st.granularities[0]!.open!.raw = empty;
    const back = decodeMetricState(encodeMetricState(st, 1));
    expect(back.granularities[0]!.open).toBeNull();
    expect(plain({ ...back, granularities: [] })).toEqual(plain({ ...st, granularities: [] }));
  });

  it('keeps an open split without rows whose chunks hold some, its chunk count and newest key', () => {
    const empty = encodeRawSplit({ timestamps: new Float64Array(0), columns: [new Float64Array(0)], present: [null] });
    const st = state(2, 0, undefined, 5 * G);
    st.granularities[0]!.open!.raw = empty;
    expect(plain(decodeMetricState(encodeMetricState(st, 1)))).toEqual(plain(st));
  });

  it('reads a format 2 state as one with no frozen chunks', () => {
    expect(plain(decodeMetricState(asVersion(2, state(0), 1)))).toEqual(plain(state(0)));
  });

  it('reads a format 3 to 6 state as one without inline chunks', () => {
    expect(plain(decodeMetricState(asVersion(3, state(3, 1), 1)))).toEqual(plain(state(3, 1)));
  });

  it('reads a format 7 state (version 4) as one without the newest chunk key', () => {
    const inline = { first: 5 * G, bytes: Buffer.of(9, 8, 7) };
    expect(plain(decodeMetricState(asVersion4(state(0, 2, inline), 1)))).toEqual(plain(state(0, 2, inline)));
    expect(plain(decodeMetricState(asVersion4(state(3, 1), 1)))).toEqual(plain(state(3, 1)));
    expect(lastSeqOf(asVersion4(quiet(), 1))).toBe(quiet().lastSeq);
  });

  it.each([
    ['format 9', (st: MetricState) => encodeMetricState(st, 1)],
    ['format 7', (st: MetricState) => asVersion4(st, 1)],
    ['format 3 to 6', (st: MetricState) => asVersion(3, st, 1)],
  ])("reads a %s state among other bytes, as processing reads a batch's states out of one buffer", (_name, encode) => {
    const st = state(1, 2, { first: 5 * G, bytes: Buffer.of(9, 8, 7) });
    const alone = encode(st);
    const among = Buffer.concat([Buffer.from([0xff, 4, 3]), alone, Buffer.from([4, 0xee])]);
    expect(plain(decodeMetricState(among, 3, 3 + alone.length))).toEqual(plain(decodeMetricState(alone)));
  });

  it.each([
    ['format 9', (st: MetricState) => encodeMetricState(st, 1)],
    ['format 7', (st: MetricState) => asVersion4(st, 1)],
  ])('gives one granularity\'s open split of a %s state', (_name, encode) => {
    const st = quiet();
    expect(plain({ ...st, granularities: [{ granularity: 0, open: openSplitOf(encode(st), 60 * G), oldestSealedKey: null }] })).toEqual(
      plain({ ...st, granularities: [{ granularity: 0, open: st.granularities[0]!.open, oldestSealedKey: null }] }),
    );
    expect(openSplitOf(encode(st), G)).toBeNull();
  });

  it("stores a settled quiet metric's state in 99 bytes where format 7 took 152", () => {
    // Header 3 + 5 (lastSeq) + 2 (tail counts); granularity flags 1, granularity 2, key 3, row and chunk counts 2, inline length 1 and first 2;
    // raw row: timestamp 2, value 3, mask flag 1; tail: timestamp 2, value 1 (the raw row's); inline chunk 69.
    expect([asVersion4(quiet(), 1).length, encodeMetricState(quiet(), 1).length]).toEqual([152, 99]);
  });
});
