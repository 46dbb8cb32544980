import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { FormatError } from '../../formats/errors.js';
import { formatTimestamp, parseTimestamp } from '../../formats/timestamp.js';

// Expected values were observed with Gnocchi 4.4's utils.to_timestamp and
// Python's datetime.isoformat() on this machine.

const SECOND = 1_000_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

// 2015-03-06T14:33:57.123456Z
const NOW = 1_425_652_437_123_456;
const MAX_EXACT = Number.MAX_SAFE_INTEGER;

function errorOf(action: () => unknown): FormatError {
  try {
    action();
  } catch (error) {
    if (error instanceof FormatError) return error;
    throw error;
  }
  throw new Error('expected a FormatError');
}

describe('parseTimestamp', () => {
  it.each([
    ['an integer number', 1425652437, 1_425_652_437_000_000],
    ['a fractional number', 1425652437.5, 1_425_652_437_500_000],
    ['zero', 0, 0],
    ['a numeric string', '1425652437', 1_425_652_437_000_000],
    ['a numeric string with microseconds', '1425652437.123456', 1_425_652_437_123_456],
    ['a float rounded to the nearest microsecond', '1425652437.1234', 1_425_652_437_123_400],
    ['a numeric string with an exponent', '1e9', 1_000_000_000_000_000],
    ['a numeric string with a leading dot', '.5', 500_000],
    ['a numeric string with a trailing dot', '5.', 5 * SECOND],
    ['a numeric string with a plus sign', '+12', 12 * SECOND],
    ['a numeric string with underscores', '1_000', 1000 * SECOND],
    ['a numeric string with whitespace', ' 12 ', 12 * SECOND],
    ['one microsecond', '0.000001', 1],
    ['a bare year, which is seconds rather than a date', '2015', 2015 * SECOND],
    ['a compact date, which is seconds too', '20150306', 20_150_306 * SECOND],
    ['less than a nanosecond before the epoch, truncated to it', '-0.0000000001', 0],
    ['a year-2100 float exact to the microsecond', '4102444800.123456', 4_102_444_800_123_456],
  ])('reads epoch seconds: %s', (_, input, expected) => {
    expect(parseTimestamp(input, NOW)).toBe(expected);
  });

  it.each([
    ['a date alone', '2015-03-06', 1_425_600_000_000_000],
    ['a year and month', '2015-03', 1_425_168_000_000_000],
    ['a T separator', '2015-03-06T14:33:57', 1_425_652_437_000_000],
    ['a space separator', '2015-03-06 14:33:57', 1_425_652_437_000_000],
    ['hours only', '2015-03-06T14', 1_425_650_400_000_000],
    ['hours and minutes', '2015-03-06T14:33', 1_425_652_380_000_000],
    ['a leap day', '2000-02-29', 951_782_400_000_000],
    ['the epoch', '1970-01-01', 0],
    ['a plus sign before the year', '+2015-03-06', 1_425_600_000_000_000],
    ['leading whitespace', ' 2015-03-06', 1_425_600_000_000_000],
    ['a minus sign after whitespace, which numpy ignores', ' -2015-03-06', 1_425_600_000_000_000],
    ['trailing whitespace after a time', '2015-03-06T14:33:57 ', 1_425_652_437_000_000],
    ['the last exact microsecond', '2255-06-05T23:47:34.740991', MAX_EXACT],
  ])('reads ISO 8601: %s (%j)', (_, input, expected) => {
    expect(parseTimestamp(input, NOW)).toBe(expected);
  });

  it.each([
    ['one digit', '2015-03-06T14:33:57.5', 1_425_652_437_500_000],
    ['six digits', '2015-03-06T14:33:57.123456', 1_425_652_437_123_456],
    ['a single microsecond', '2015-03-06T14:33:57.000001', 1_425_652_437_000_001],
    ['a dot without digits', '2015-03-06T14:33:57.', 1_425_652_437_000_000],
    ['seven digits rounding down', '2015-03-06T14:33:57.1234564', 1_425_652_437_123_456],
    ['seven digits rounding up', '2015-03-06T14:33:57.1234567', 1_425_652_437_123_457],
    ['nine digits', '2015-03-06T14:33:57.123456999', 1_425_652_437_123_457],
    ['eighteen digits, the most numpy reads', '2015-03-06T14:33:57.123456789012345678', 1_425_652_437_123_457],
    ['rounding carried into the next day', '2015-03-06T23:59:59.9999995', 1_425_686_400_000_000],
    ['a leap-day end', '2016-02-29T23:59:59.999999', 1_456_790_399_999_999],
  ])('reads fractional seconds: %s', (_, input, expected) => {
    expect(parseTimestamp(input, NOW)).toBe(expected);
  });

  it.each([
    ['Z', '2015-03-06T14:33:57Z', 1_425_652_437_000_000],
    ['Z after hours only', '2015-03-06T14Z', 1_425_650_400_000_000],
    ['Z followed by whitespace', '2015-03-06T14:33:57.25Z ', 1_425_652_437_250_000],
    ['+HH:MM', '2015-03-06T14:33:57+02:00', 1_425_645_237_000_000],
    ['+HHMM', '2015-03-06T14:33:57+0200', 1_425_645_237_000_000],
    ['-HH', '2015-03-06T14:33:57-02', 1_425_659_637_000_000],
    ['+HH after fractional seconds', '2015-03-06T14:33:57.123+02', 1_425_645_237_123_000],
    ['a half-hour offset', '2015-03-06T14:33:57-05:30', 1_425_672_237_000_000],
    ['an offset crossing midnight', '2015-03-06T00:30:00+01:00', 1_425_598_200_000_000],
    ['an offset moving a pre-epoch local time after it', '1969-12-31T23:00:00-02:00', HOUR],
    ['a negative offset at the epoch', '1970-01-01T00:00:00-00:01', MINUTE],
    ['an offset followed by whitespace', '2015-03-06T14:33:57+02:00 ', 1_425_645_237_000_000],
  ])('applies the timezone offset: %s', (_, input, expected) => {
    expect(parseTimestamp(input, NOW)).toBe(expected);
  });

  it.each([
    ['now', NOW - 123_456],
    ['NOW', NOW - 123_456],
    ['Now', NOW - 123_456],
    ['today', 1_425_600_000_000_000],
    ['TODAY', 1_425_600_000_000_000],
  ])('reads the numpy special word %j at whole-second or whole-day resolution', (input, expected) => {
    expect(parseTimestamp(input, NOW)).toBe(expected);
  });

  it.each([
    ['-2 days', NOW - 2 * DAY],
    ['10 minutes', NOW + 10 * MINUTE],
    ['+1 hour', NOW + HOUR],
    ['- 10 s', NOW - 10 * SECOND],
    ['1d', NOW + DAY],
    ['-1 week', NOW - 7 * DAY],
    ['1:24', NOW + 84 * SECOND],
    ['10:00:00', NOW + 10 * HOUR],
    ['1 day, 0:00:00', NOW + DAY],
    ['0 seconds', NOW],
  ])('reads %j as a duration relative to now', (input, expected) => {
    expect(parseTimestamp(input, NOW)).toBe(expected);
  });

  it('takes now from the clock when not given', () => {
    const before = Date.now() * 1000;
    const parsed = parseTimestamp('-1 hour');
    expect(parsed).toBeGreaterThanOrEqual(before - HOUR);
    expect(parsed).toBeLessThanOrEqual(Date.now() * 1000 - HOUR);
  });

  it.each([
    ['a negative number', -1],
    ['a negative numeric string', '-1'],
    ['a tenth of a microsecond before the epoch', '-0.0000001'],
    ['the day before the epoch', '1969-12-31'],
    ['a fraction that would round onto the epoch', '1969-12-31T23:59:59.9999999'],
    ['an offset moving the epoch before itself', '1970-01-01T00:00:00+00:01'],
    ['a two-digit year, not a 20th-century one', '0015-03-06'],
    ['a negative year', '-2015-03-06'],
    ['year zero without digits', '+-01-01'],
    ['a relative time reaching before the epoch', '-3000 weeks'],
  ])('refuses %s as before the epoch', (_, input) => {
    expect(errorOf(() => parseTimestamp(input, NOW)).message).toBe('Timestamp must be after Epoch');
  });

  it.each([
    ['a lowercase t separator', '2015-03-06t14:33:57'],
    ['single-digit month and day', '2015-3-6'],
    ['single-digit time fields', '2015-03-06T1:2:3'],
    ['a trailing separator', '2015-03-06T'],
    ['trailing whitespace after a date', '2015-03-06 '],
    ['a timezone after a date', '2015-03-06Z'],
    ['an offset after a date', '2015-03-06+02:00'],
    ['a lowercase z', '2015-03-06T14:33:57z'],
    ['whitespace before the offset', '2015-03-06T14:33:57 +02:00'],
    ['a one-digit offset', '2015-03-06T14:33:57+2'],
    ['a three-digit offset', '2015-03-06T14:33:57+020'],
    ['an hour offset followed by whitespace', '2015-03-06T14:33:57+02 '],
    ['seconds in the offset', '2015-03-06T14:33:57+02:00:00'],
    ['an offset of 24 hours', '2015-03-06T14:33:57+24:00'],
    ['an offset of 60 minutes', '2015-03-06T14:33:57+02:60'],
    ['a zone name', '2015-03-06T14:33:57UTC'],
    ['a comma before the fraction', '2015-03-06T14:33:57,123'],
    ['nineteen fractional digits', '2015-03-06T14:33:57.1234567890123456789'],
    ['hour 24', '2015-03-06T24:00:00'],
    ['minute 60', '2015-03-06T14:60'],
    ['a leap second', '2016-02-29T23:59:60'],
    ['February 29 of a common year', '2015-02-29'],
    ['February 29 of a common century year', '1900-02-29'],
    ['month 13', '2015-13-01'],
    ['month 0', '2015-00-01'],
    ['day 0', '2015-01-00'],
    ['day 32', '2015-01-32'],
    ['the basic ISO format', '20150306T143357'],
    ['a week date', '2015-W10'],
    ['NaT', 'NaT'],
    ['nat', 'nat'],
    ['the empty string', ''],
    ['whitespace alone', ' '],
    ['now with whitespace', ' now'],
    ['a NaN string', 'nan'],
    ['an infinity string', 'inf'],
    ['a negative infinity string', '-inf'],
    ['hexadecimal', '0x10'],
    ['doubled underscores', '1__0'],
    ['a malformed relative number', '1.2.3 minutes'],
    ['an unknown relative unit', '1 year'],
    ['a word', 'yesterday'],
    ['a lone sign', '+'],
    ['a time past the last exact microsecond', '2255-06-05T23:47:34.740992'],
    ['a far-future date', '9999-12-31'],
    ['epoch seconds past the last exact microsecond', '9007199255'],
    ['a huge epoch number', 1e300],
    ['a relative time past the last exact microsecond', '1000000 weeks'],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['null', null],
    ['undefined', undefined],
    ['a boolean', true],
    ['an object', {}],
    ['an array', ['2015-03-06']],
  ])('refuses %s as unconvertible', (_, input) => {
    expect(errorOf(() => parseTimestamp(input, NOW)).message).toBe('Unable to convert timestamps');
  });
});

describe('formatTimestamp', () => {
  it.each([
    [0, '1970-01-01T00:00:00+00:00'],
    [1, '1970-01-01T00:00:00.000001+00:00'],
    [1_425_652_437_000_000, '2015-03-06T14:33:57+00:00'],
    [1_425_652_437_123_400, '2015-03-06T14:33:57.123400+00:00'],
    [951_782_400_000_000, '2000-02-29T00:00:00+00:00'],
    [1_456_790_399_999_999, '2016-02-29T23:59:59.999999+00:00'],
    [2_147_483_648_000_000, '2038-01-19T03:14:08+00:00'],
    [4_107_542_399_999_999, '2100-02-28T23:59:59.999999+00:00'],
    [4_107_542_400_000_000, '2100-03-01T00:00:00+00:00'],
    [MAX_EXACT, '2255-06-05T23:47:34.740991+00:00'],
    [253_402_300_799_000_000, '9999-12-31T23:59:59+00:00'],
    [253_402_300_799_999_936, '9999-12-31T23:59:59.999936+00:00'],
  ])('formats %d µs as isoformat() does: %j', (micros, expected) => {
    expect(formatTimestamp(micros)).toBe(expected);
  });

  it('gives the right date when calls alternate between days', () => {
    const monday = 1_425_254_400_000_000;
    expect([monday, monday + DAY, monday + 1, monday + DAY + HOUR].map(formatTimestamp)).toEqual([
      '2015-03-02T00:00:00+00:00',
      '2015-03-03T00:00:00+00:00',
      '2015-03-02T00:00:00.000001+00:00',
      '2015-03-03T01:00:00+00:00',
    ]);
  });

  it.each([
    '1970-01-01T00:00:00+00:00',
    '2015-03-06T14:33:57+00:00',
    '2015-03-06T14:33:57.123400+00:00',
    '2015-03-06T14:33:57.000001+00:00',
    '2015-12-31T23:59:59.999999+00:00',
    '2016-02-29T12:00:00.500000+00:00',
    '2255-06-05T23:47:34.740991+00:00',
  ])('round-trips %j through parseTimestamp', (text) => {
    expect(formatTimestamp(parseTimestamp(text))).toBe(text);
  });

  it('round-trips every exact microsecond through parseTimestamp', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_EXACT }), (micros) => {
        expect(parseTimestamp(formatTimestamp(micros))).toBe(micros);
      }),
      { numRuns: 2000 },
    );
  });

  it('round-trips microseconds through their epoch-seconds form', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800 * SECOND }), (micros) => {
        expect(parseTimestamp(micros / SECOND)).toBe(micros);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('parseTimestamp: reading.relative', () => {
  // Pinned against the answer itself: relative exactly when two "nows" give two answers.
  const DAY = 86_400_000_000;
  const relative = (input: unknown) => {
    const reading = { relative: false };
    parseTimestamp(input, 10 * DAY, reading);
    return reading.relative;
  };

  it.each(['now', 'NOW', 'today', '-2 days', '+10 minutes', '1 hour'])('is set for %s', (input) => {
    expect(relative(input)).toBe(true);
    expect(parseTimestamp(input, 10 * DAY)).not.toBe(parseTimestamp(input, 20 * DAY));
  });

  it.each<unknown>(['2015-03-06T14:33:57', '2015-03-06', '1425652437', '1425652437.5', 1425652437, '2015-03-06T14:33:57+02:00', '2015-03-06 14:33'])(
    'is left unset for %s',
    (input) => {
      expect(relative(input)).toBe(false);
      expect(parseTimestamp(input, 10 * DAY)).toBe(parseTimestamp(input, 20 * DAY));
    },
  );
});
