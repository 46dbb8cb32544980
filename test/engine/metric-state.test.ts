// Metric states round-trip, with or without an inline chunk, and states
// written by format 2 (no frozen-chunk count in the granularity headers) and
// by formats 3 to 6 (no inline chunk) still read.
import { describe, expect, it } from 'vitest';
import { decodeMetricState, encodeMetricState, type InlineChunk, type MetricState } from '../../engine/metric-state.js';
import { encodeRawSplit } from '../../engine/split.js';

const G = 1_000_000;

function state(frozen: number, tailFrozen = 0, inline?: InlineChunk): MetricState {
  const raw = encodeRawSplit({ timestamps: Float64Array.of(0, G), columns: [Float64Array.of(1, 2)], present: [null] });
  return {
    tail: { timestamps: Float64Array.of(0, G), values: Float64Array.of(1, 2) },
    granularities: [
      { granularity: G, open: { key: 0, raw, frozen, inline }, oldestSealedKey: null },
      { granularity: 60 * G, open: null, oldestSealedKey: -3600 * 60 * G },
    ],
    lastSeq: 7,
    tailFrozen,
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

/** The state as plain values: byte arrays as their bytes, whichever class of view holds them (a Buffer or a plain Uint8Array). */
const plain = (s: MetricState) =>
  JSON.parse(
    JSON.stringify(s, function (this: Record<string, unknown>, k: string, v: unknown) {
      // The holder's own value: a Buffer has become its toJSON() by now.
      const original = this[k];
      return ArrayBuffer.isView(original) ? [...(original as Uint8Array)] : v;
    }),
  );

describe('metric state', () => {
  it.each([
    [0, 0],
    [3, 0],
    [1, 5],
  ])('round-trips with %i open split chunks and %i tail chunks', (frozen, tailFrozen) => {
    expect(plain(decodeMetricState(encodeMetricState(state(frozen, tailFrozen), 1)))).toEqual(plain(state(frozen, tailFrozen)));
  });

  it('round-trips with an inline chunk', () => {
    const inline = { first: 5 * G, bytes: Buffer.of(9, 8, 7) };
    const bytes = encodeMetricState(state(0, 2, inline), 1);
    // Its bytes, length (1 byte) and first timestamp.
    expect(bytes.length).toBe(encodeMetricState(state(0, 2), 1).length + 3 + 1 + 8);
    expect(plain(decodeMetricState(bytes))).toEqual(plain(state(0, 2, inline)));
  });

  it('reads a format 2 state as one with no frozen chunks', () => {
    expect(plain(decodeMetricState(asVersion(2, state(0), 1)))).toEqual(plain(state(0)));
  });

  it('reads a format 3 to 6 state as one without inline chunks', () => {
    expect(plain(decodeMetricState(asVersion(3, state(3, 1), 1)))).toEqual(plain(state(3, 1)));
  });

  it.each([
    ['format 7', (st: MetricState) => encodeMetricState(st, 1)],
    ['format 3 to 6', (st: MetricState) => asVersion(3, st, 1)],
  ])('reads a %s state among other bytes, as processing reads a batch\'s states out of one buffer', (_name, encode) => {
    const st = state(1, 2, { first: 5 * G, bytes: Buffer.of(9, 8, 7) });
    const alone = encode(st);
    const among = Buffer.concat([Buffer.from([0xff, 4, 3]), alone, Buffer.from([4, 0xee])]);
    expect(plain(decodeMetricState(among, 3, 3 + alone.length))).toEqual(plain(decodeMetricState(alone)));
  });

  it('takes fewer bytes than format 3 to 6 took for the same state', () => {
    // Headers: 14 + 19 (an open split, no sealed one) + 17 (a sealed split, no open one) where format 3 took 20 + 2 x 32.
    expect(asVersion(3, state(3, 1), 1).length - encodeMetricState(state(3, 1), 1).length).toBe(84 - 50);
  });
});
