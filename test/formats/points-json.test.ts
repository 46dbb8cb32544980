import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { serializePoints, type PointSeries } from '../../formats/points-json.js';
import { legacySerializePoints } from './legacy-formatters.js';

const MICROS_2200 = Date.UTC(2200, 0, 1) * 1000;

const values = fc.oneof(
  fc.double(),
  fc.tuple(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 0, max: 4 })).map(([n, k]) => n / 10 ** k),
);

const seriesArb: fc.Arbitrary<PointSeries> = fc
  .record({
    granularity: fc.oneof(fc.constantFrom(1, 250_000, 1_000_000, 60_000_000, 86_400_000_000, 1.5e6), fc.constantFrom('Y', 'Q', 'M', 'W', 'H')),
    timestamps: fc.array(fc.integer({ min: 0, max: MICROS_2200 }), { maxLength: 60 }),
    values: fc.array(values, { minLength: 60, maxLength: 60 }),
  })
  .map(({ granularity, timestamps, values: v }) => {
    const sorted = Float64Array.from(timestamps).sort();
    return { granularity, timestamps: sorted, values: Float64Array.from(v.slice(0, sorted.length)) };
  });

/** A regular series of n points from 2024-01-01, by seconds. */
function regular(n: number): PointSeries {
  const start = Date.UTC(2024, 0, 1) * 1000;
  return {
    granularity: 1_000_000,
    timestamps: Float64Array.from({ length: n }, (_, i) => start + i * 1_000_000),
    values: Float64Array.from({ length: n }, (_, i) => Math.round(Math.sin(i) * 1e4) / 100),
  };
}

describe('serializePoints', () => {
  it('answers [] for no series or empty ones', () => {
    expect(serializePoints([]).toString()).toBe('[]');
    expect(serializePoints([{ granularity: 1e6, timestamps: new Float64Array(0), values: new Float64Array(0) }]).toString()).toBe('[]');
  });

  it('writes the text the previous implementation did', () => {
    fc.assert(
      fc.property(fc.array(seriesArb, { maxLength: 4 }), (series) => {
        expect(serializePoints(series).toString()).toBe(legacySerializePoints(series));
      }),
      { numRuns: 2_000 },
    );
  });

  it('writes answers larger than its kept buffer, and small ones after them', () => {
    for (const n of [1_000, 100_000, 300_000, 10]) {
      const series = [regular(n)];
      expect(serializePoints(series).toString()).toBe(legacySerializePoints(series));
    }
  });
});
