import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { formatTimestamp, MAX_TIMESTAMP_LENGTH, writeTimestamp } from '../../formats/timestamp.js';
import { legacyFormatTimestamp } from './legacy-formatters.js';
import { writtenText } from './written.js';

const DAY = 86_400_000_000;
// Python's datetime ends with year 9999; this is the first instant after it.
const YEAR_10000 = 253_402_300_800_000_000;

/** writeTimestamp's text, checking it stays within its bounds. */
function written(micros: number): string {
  return writtenText((buf, pos) => writeTimestamp(buf, pos, micros), MAX_TIMESTAMP_LENGTH, 5);
}

function expectLegacy(micros: number): void {
  const expected = legacyFormatTimestamp(micros);
  expect(formatTimestamp(micros)).toBe(expected);
  expect(written(micros)).toBe(expected);
}

const instants = fc.oneof(
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }).map((n) => n - (n % 1_000_000)),
  fc.double({ min: 2 ** 53, max: YEAR_10000, maxExcluded: true, noNaN: true }).map(Math.floor),
);

describe('formatTimestamp and writeTimestamp', () => {
  it.each([
    0, 1, 999_999, 1_000_000, 59_999_999, 86_399_999_999, DAY, DAY + 1, 951_782_400_000_000, 1_456_790_399_999_999,
    1_704_067_200_000_000, 1_704_067_200_250_000, 4_107_542_399_999_999, 4_107_542_400_000_000, Number.MAX_SAFE_INTEGER,
    253_402_300_799_000_000, 253_402_300_799_999_936,
  ])('write %d µs as the previous formatTimestamp did', (micros) => {
    expectLegacy(micros);
  });

  it('match the previous formatTimestamp on any instant up to year 9999', () => {
    fc.assert(fc.property(instants, (micros) => expectLegacy(micros)), { numRuns: 20_000 });
  });

  it('match it along regular series crossing days, in any order of series', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            start: fc.integer({ min: 0, max: Date.UTC(2200, 0, 1) * 1000 }),
            step: fc.constantFrom(1, 250_000, 1_000_000, 60_000_000, 3_600_000_000, DAY),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        (series) => {
          for (let i = 0; i < 50; i++) for (const { start, step } of series) expectLegacy(start + i * step);
        },
      ),
      { numRuns: 300 },
    );
  });
});
