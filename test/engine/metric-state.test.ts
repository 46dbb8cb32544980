// Metric states round-trip, and states written by format 2 (no frozen-chunk
// count in the granularity headers) still read, as states with no chunks.
import { describe, expect, it } from 'vitest';
import { decodeMetricState, encodeMetricState, type MetricState } from '../../engine/metric-state.js';
import { encodeRawSplit } from '../../engine/split.js';

const G = 1_000_000;

function state(frozen: number, tailFrozen = 0): MetricState {
  const raw = encodeRawSplit({ timestamps: Float64Array.of(0, G), columns: [Float64Array.of(1, 2)], present: [null] });
  return {
    tail: { timestamps: Float64Array.of(0, G), values: Float64Array.of(1, 2) },
    granularities: [
      { granularity: G, open: { key: 0, raw, frozen }, oldestSealedKey: null },
      { granularity: 60 * G, open: null, oldestSealedKey: -3600 * 60 * G },
    ],
    lastSeq: 7,
    tailFrozen,
  };
}

/** The same state as format 2 wrote it: version byte 2, no tail chunk count, 28-byte granularity headers. */
function asVersion2(bytes: Buffer): Buffer {
  let offset = 20 + 16 * bytes.readUInt32LE(4);
  const parts: Buffer[] = [Buffer.from([2]), bytes.subarray(1, 16), bytes.subarray(20, offset)];
  for (let i = 0; i < bytes[1]!; i++) {
    const length = bytes.readUInt32LE(offset + 24);
    parts.push(bytes.subarray(offset, offset + 28), bytes.subarray(offset + 32, offset + 32 + length));
    offset += 32 + length;
  }
  return Buffer.concat(parts);
}

const plain = (s: MetricState) => JSON.parse(JSON.stringify(s, (_k, v: unknown) => (ArrayBuffer.isView(v) ? [...(v as Uint8Array)] : v)));

describe('metric state', () => {
  it.each([
    [0, 0],
    [3, 0],
    [1, 5],
  ])('round-trips with %i open split chunks and %i tail chunks', (frozen, tailFrozen) => {
    expect(plain(decodeMetricState(encodeMetricState(state(frozen, tailFrozen), 1)))).toEqual(plain(state(frozen, tailFrozen)));
  });

  it('reads a format 2 state as one with no frozen chunks', () => {
    expect(plain(decodeMetricState(asVersion2(encodeMetricState(state(0), 1))))).toEqual(plain(state(0)));
  });
});
