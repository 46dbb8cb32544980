import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { formatDuration, parseDuration, parsePythonFloat } from '../../formats/duration.js';
import { FormatError } from '../../formats/errors.js';

// Expected values were observed with Gnocchi 4.4's utils.to_timespan and
// Python's str(datetime.timedelta) on this machine.

const SECOND = 1_000_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

function errorOf(action: () => unknown): FormatError {
  try {
    action();
  } catch (error) {
    if (error instanceof FormatError) return error;
    throw error;
  }
  throw new Error('expected a FormatError');
}

describe('parsePythonFloat', () => {
  it.each([
    ['an integer', '60', 60],
    ['a signed integer', '+12', 12],
    ['a negative decimal', '-1.5', -1.5],
    ['a bare leading dot', '.5', 0.5],
    ['a bare trailing dot', '5.', 5],
    ['an exponent', '1E3', 1000],
    ['underscores between digits', '1_000.000_1', 1000.0001],
    ['an underscore in the exponent', '1e1_0', 1e10],
    ['surrounding whitespace', ' \t12\n', 12],
    ['infinity in any case', 'Infinity', Infinity],
    ['a signed short infinity', '-inf', -Infinity],
  ])('reads %s', (_, text, expected) => {
    expect(parsePythonFloat(text)).toBe(expected);
  });

  it('reads nan as NaN', () => {
    expect(parsePythonFloat('NaN')).toBeNaN();
  });

  it.each([
    ['the empty string', ''],
    ['whitespace alone', '   '],
    ['a lone dot', '.'],
    ['hexadecimal', '0x10'],
    ['doubled underscores', '1__0'],
    ['a leading underscore', '_1'],
    ['a trailing underscore', '1_'],
    ['an underscore before the dot', '1_.5'],
    ['an underscore after the dot', '1._5'],
    ['an exponent without digits', '1e'],
    ['a date', '2015-03-06'],
    ['a duration', '5 minutes'],
  ])('refuses %s', (_, text) => {
    expect(parsePythonFloat(text)).toBeUndefined();
  });
});

describe('parseDuration', () => {
  it.each([
    ['a number is seconds', 60, MINUTE],
    ['a fractional number keeps its microseconds', 0.5, 500_000],
    ['a numeric string is seconds', '60', MINUTE],
    ['a numeric string may carry whitespace', ' 10 ', 10 * SECOND],
    ['a numeric string may use an exponent', '1e3', 1000 * SECOND],
    ['a numeric string may use underscores', '1_0', 10 * SECOND],
    ['a numeric string may start with a dot', '.5', 500_000],
    ['one microsecond survives', '0.000001', 1],
    ['a float second rounds to the microsecond', '1.1', 1_100_000],
  ])('%s', (_, input, expected) => {
    expect(parseDuration(input)).toBe(expected);
  });

  it.each([
    ['1s', SECOND],
    ['60s', MINUTE],
    ['1 sec', SECOND],
    ['1 secs', SECOND],
    ['1 second', SECOND],
    ['1 seconds', SECOND],
    ['1m', MINUTE],
    ['1 min', MINUTE],
    ['1 mins', MINUTE],
    ['1 minute', MINUTE],
    ['5 minutes', 5 * MINUTE],
    ['1h', HOUR],
    ['1 hr', HOUR],
    ['1 hrs', HOUR],
    ['1 hour', HOUR],
    ['1 hours', HOUR],
    ['1d', DAY],
    ['1 dy', DAY],
    ['1 dys', DAY],
    ['1 day', DAY],
    ['2 days', 2 * DAY],
    ['1w', WEEK],
    ['1 wk', WEEK],
    ['1 wks', WEEK],
    ['1 week', WEEK],
    ['1 weeks', WEEK],
  ])('reads the unit in %j', (input, expected) => {
    expect(parseDuration(input)).toBe(expected);
  });

  it.each([
    ['units are case-insensitive', '1 MINUTE', MINUTE],
    ['units combine without separators', '1m24s', 84 * SECOND],
    ['units combine with a comma', '1 minute, 24 secs', 84 * SECOND],
    ['units combine with a slash', '1w/2d', WEEK + 2 * DAY],
    ['a separator may stand before its comma', '1 day , 2 hours', DAY + 2 * HOUR],
    ['a trailing comma is allowed', '1 day,', DAY],
    ['a fractional hour counts', '1.5 hours', 90 * MINUTE],
    ['fractional seconds count', '1.2 seconds', 1_200_000],
    ['fractional seconds with another unit count', '1 minute 1.5 seconds', 61_500_000],
    ['fractional minutes and seconds add up', '1.5 minutes 1.5 seconds', 91_500_000],
    ['H:MM:SS is a clock', '1:00:00', HOUR],
    ['hours in a clock may exceed a day', '100:00:00', 100 * HOUR],
    ['a day count may precede a clock', '1 day, 0:00:00', DAY],
    ['a compact day count may precede a clock', '1d2:00:00', DAY + 2 * HOUR],
    ['a week count may precede a clock', '1 week 2:00:00', WEEK + 2 * HOUR],
    ['M:SS is minutes and seconds', '1:24', 84 * SECOND],
    ['MM:SS is minutes and seconds', '01:02', 62 * SECOND],
    ['MM:SS may have fractional seconds', '12:34.5', 754_500_000],
    [':SS is seconds', ':22', 22 * SECOND],
    ['D:HH:MM:SS is a day clock', '1:02:03:04', DAY + 2 * HOUR + 3 * MINUTE + 4 * SECOND],
    ['an explicit plus sign is allowed', '+1 hour', HOUR],
    ['pytimeparse takes "|" as a plus sign', '|1 minute', MINUTE],
    ['one trailing newline is tolerated', '1 minute\n', MINUTE],
    ['non-second units are truncated to whole seconds', '1.0000001 minutes', MINUTE],
  ])('%s (%j)', (_, input, expected) => {
    expect(parseDuration(input)).toBe(expected);
  });

  it.each([
    ['a negative duration', '-2 days', -2 * DAY],
    ['a spaced minus sign', '- 1 minute', -MINUTE],
    ['a negative number of seconds', '-60', -MINUTE],
    ['zero', '0', 0],
    ['the sign covering every integer unit', '-1 minute 10 seconds', -70 * SECOND],
    ['the sign skipping integer seconds after a fractional unit', '- 1.5 minutes 10 seconds', -80 * SECOND],
    ['a fraction of a minute truncated to nothing', '0.01 minutes', 0],
  ])('allows %s when non-positive spans are allowed', (_, input, expected) => {
    expect(parseDuration(input, { allowNonPositive: true })).toBe(expected);
  });

  it('never returns negative zero', () => {
    expect(Object.is(parseDuration('-0', { allowNonPositive: true }), 0)).toBe(true);
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['a boolean', true],
    ['an object', {}],
    ['an array', ['60']],
  ])('refuses %s as an invalid timespan', (_, input) => {
    expect(errorOf(() => parseDuration(input)).message).toBe('Invalid timespan');
  });

  it.each([
    ['the empty string', ''],
    ['whitespace alone', '   '],
    ['a word', 'abc'],
    ['years, which pytimeparse does not know', '1 year'],
    ['milliseconds, which pytimeparse does not know', '1 ms'],
    ['a dotted abbreviation', '1 hr.'],
    ['a one-digit seconds clock', '1:2'],
    ['units out of order', '1 minute, 1 hour'],
    ['hexadecimal', '0x10'],
    ['an inner newline', '1\nminute'],
    ['infinity', 'inf'],
    ['negative infinity', '-inf'],
    ['a value too large for microseconds', '1e300'],
    ['an infinite number', Infinity],
  ])('refuses %s as unparseable', (_, input) => {
    expect(errorOf(() => parseDuration(input, { allowNonPositive: true })).message).toBe(
      'Unable to parse timespan',
    );
  });

  it.each([
    ['a malformed decimal', '1.2.3 minutes', "could not convert string to float: '1.2.3'"],
    ['a lone dot', '. minutes', "could not convert string to float: '.'"],
    ['a NaN string', 'nan', 'cannot convert float NaN to integer'],
    ['a NaN number', NaN, 'cannot convert float NaN to integer'],
  ])("refuses %s with Python's own message", (_, input, message) => {
    expect(errorOf(() => parseDuration(input)).message).toBe(message);
  });

  it.each([
    ['zero', 0],
    ['a zero string', '0'],
    ['a negative number of seconds', '-60'],
    ['a negative duration', '-2 days'],
    ['a fraction truncated to nothing', '0.01 minutes'],
    ['less than half a microsecond', '0.0000001'],
  ])('refuses %s as not positive by default', (_, input) => {
    expect(errorOf(() => parseDuration(input)).message).toBe('Timespan must be positive');
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0:00:00'],
    [MINUTE, '0:01:00'],
    [HOUR, '1:00:00'],
    [10 * HOUR, '10:00:00'],
    [DAY, '1 day, 0:00:00'],
    [30 * DAY, '30 days, 0:00:00'],
    [100 * HOUR, '4 days, 4:00:00'],
    [500_000, '0:00:00.500000'],
    [1, '0:00:00.000001'],
    [DAY + HOUR + MINUTE + SECOND + 1, '1 day, 1:01:01.000001'],
    [-MINUTE, '-1 day, 23:59:00'],
    [-1, '-1 day, 23:59:59.999999'],
    [-HOUR + 1, '-1 day, 23:00:00.000001'],
    [-DAY, '-1 day, 0:00:00'],
    [-2 * DAY, '-2 days, 0:00:00'],
  ])('formats %d µs as str(timedelta) does: %j', (micros, expected) => {
    expect(formatDuration(micros)).toBe(expected);
  });

  it('round-trips every positive duration through parseDuration', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 * DAY }), (micros) => {
        expect(parseDuration(formatDuration(micros))).toBe(micros);
      }),
    );
  });
});
