// Round trips through the formats: what the server prints, it reads back.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../formats/duration.js';
import { formatTimestamp, parseTimestamp } from '../../formats/timestamp.js';

// parseDuration reads through float seconds, as Gnocchi's to_timespan
// (pytimeparse, then timedelta(seconds=float)) does; microsecond precision
// is exact up to 2**32 seconds (about 136 years) and within 1 µs beyond.
const EXACT_LIMIT = 2 ** 32 * 1e6 - 1;
const MICROS_2200 = Date.UTC(2200, 0, 1) * 1000;

describe('format round trips', () => {
  it('formatTimestamp then parseTimestamp gives back the microseconds (1970..2200)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MICROS_2200 }), (micros) => {
        expect(parseTimestamp(formatTimestamp(micros))).toBe(micros);
      }),
      { numRuns: 2000 },
    );
  });

  it('formatTimestamp then parseTimestamp on whole seconds and whole days', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MICROS_2200 / 1e6 }), fc.boolean(), (seconds, day) => {
        const micros = (day ? Math.floor(seconds / 86_400) * 86_400 : seconds) * 1e6;
        expect(parseTimestamp(formatTimestamp(micros))).toBe(micros);
      }),
      { numRuns: 1000 },
    );
  });

  it('formatDuration then parseDuration gives back positive microseconds', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: 1, max: 1_000_000_000 }),
          fc.integer({ min: 1, max: 100 * 365 * 86_400 }).map((s) => s * 1e6),
          fc.integer({ min: 1, max: EXACT_LIMIT }),
          fc.constantFrom(1, 999_999, 1_000_000, 59_999_999, 86_399_999_999, 86_400_000_000, 86_400_000_001, 172_800_000_000),
        ),
        (micros) => {
          expect(parseDuration(formatDuration(micros))).toBe(micros);
        },
      ),
      { numRuns: 2000 },
    );
  });

  // (At Number.MAX_SAFE_INTEGER itself the float seconds round up to 2**53 µs,
  // which parseDuration refuses as out of range.)
  it('formatDuration then parseDuration is within 1 µs up to the largest safe integers', () => {
    fc.assert(
      fc.property(fc.integer({ min: EXACT_LIMIT, max: Number.MAX_SAFE_INTEGER - 4 }), (micros) => {
        expect(Math.abs(parseDuration(formatDuration(micros)) - micros)).toBeLessThanOrEqual(1);
      }),
      { numRuns: 500 },
    );
  });
});
