// Expected values were computed with Gnocchi 4.4's carbonara on numpy 1.24
// (quantile evaluated by following its algorithm) and written here by hand.
import { describe, expect, it } from 'vitest';
import {
  aggregate,
  aggregateMany,
  calendarGroupStart,
  isCalendarGroup,
  parseMethod,
  resample,
  roundTimestamp,
  type AggregationMethod,
  type CalendarGroup,
  type Grouping,
  type Series,
} from '../../engine/aggregation.js';

const S = 1_000_000;
const MIN = 60 * S;

type Point = readonly [timestamp: number, value: number];

function series(points: readonly Point[]): Series {
  return {
    timestamps: Float64Array.from(points, ([t]) => t),
    values: Float64Array.from(points, ([, v]) => v),
  };
}

function method(name: string): AggregationMethod {
  const parsed = parseMethod(name);
  if (!parsed) throw new Error(`bad method ${name}`);
  return parsed;
}

function pairs({ timestamps, values }: Series): Point[] {
  return Array.from(timestamps, (t, i) => [t, values[i]!] as const);
}

function run(points: readonly Point[], grouping: Grouping, name: string, start?: number): Point[] {
  return pairs(aggregate(series(points), grouping, method(name), start));
}

/** Microseconds since the epoch of a UTC ISO date-time, plus extra microseconds. */
function utc(iso: string, micros = 0): number {
  return Date.parse(`${iso}Z`) * 1000 + micros;
}

// Three one-minute groups: [3, 1, 4, 1, 5], [10, 20], [7].
const BASIC: Point[] = [
  [0, 3], [10 * S, 1], [20 * S, 4], [30 * S, 1], [40 * S, 5],
  [60 * S, 10], [70 * S, 20],
  [150 * S, 7],
];

describe('parseMethod', () => {
  it.each([
    ['mean', 'mean', undefined, false],
    ['count', 'count', undefined, false],
    ['rate:last', 'last', undefined, true],
    ['1pct', 'quantile', 1, false],
    ['50pct', 'quantile', 50, false],
    ['rate:95pct', 'quantile', 95, true],
    ['99pct', 'quantile', 99, false],
  ] as const)('accepts %s', (name, base, q, rate) => {
    const expected: AggregationMethod = q === undefined ? { name, base, rate } : { name, base, q, rate };
    expect(parseMethod(name)).toEqual(expected);
  });

  it.each(['', 'avg', 'Mean', 'quantile', '0pct', '05pct', '100pct', '95pctx', 'rate:', 'rate:rate:mean', ' mean'])(
    'rejects %j, which is not an archive-policy method',
    (name) => {
      expect(parseMethod(name)).toBeNull();
    },
  );
});

describe('isCalendarGroup', () => {
  it.each([
    ['Y', true], ['H', true], ['Q', true], ['M', true], ['W', true],
    ['D', false], ['y', false], ['', false], ['60', false],
  ] as const)('%j -> %s', (s, expected) => {
    expect(isCalendarGroup(s)).toBe(expected);
  });
});

describe('roundTimestamp', () => {
  it.each([
    ['floors inside a bucket', 61 * S, MIN, MIN],
    ['keeps a timestamp on a boundary', MIN, MIN, MIN],
    ['floors one microsecond before a boundary', MIN - 1, MIN, 0],
    ['works at microsecond granularity', 1_500_001, 1, 1_500_001],
    ['works at millisecond granularity', 1_500_999, 1000, 1_500_000],
    ['floors a modern timestamp to the day', utc('2024-05-17T12:34:56.789', 123), 86_400 * S, utc('2024-05-17T00:00:00')],
    // Gnocchi divides float64 nanosecond counts: this boundary point lands in
    // the previous millisecond there, so it must here too.
    ['reproduces Gnocchi float division on a sub-second boundary', 1_715_949_300_818_000, 1000, 1_715_949_300_817_000],
  ])('%s', (_behaviour, ts, granularity, expected) => {
    expect(roundTimestamp(ts, granularity)).toBe(expected);
  });
});

describe('calendarGroupStart', () => {
  it.each<[string, CalendarGroup, number, number]>([
    ['Y: last microsecond of a year', 'Y', utc('2024-12-31T23:59:59', 999_999), utc('2024-01-01T00:00:00')],
    ['Y: first instant of a year', 'Y', utc('2025-01-01T00:00:00'), utc('2025-01-01T00:00:00')],
    ['Y: leap day', 'Y', utc('2024-02-29T12:00:00'), utc('2024-01-01T00:00:00')],
    ['H: end of first half', 'H', utc('2024-06-30T23:59:59', 999_999), utc('2024-01-01T00:00:00')],
    ['H: start of second half', 'H', utc('2024-07-01T00:00:00'), utc('2024-07-01T00:00:00')],
    ['H: last day of the year', 'H', utc('2024-12-31T00:00:00'), utc('2024-07-01T00:00:00')],
    ['Q: end of Q1', 'Q', utc('2024-03-31T23:59:59', 999_999), utc('2024-01-01T00:00:00')],
    ['Q: start of Q2', 'Q', utc('2024-04-01T00:00:00'), utc('2024-04-01T00:00:00')],
    ['Q: inside Q3', 'Q', utc('2024-08-15T00:00:00'), utc('2024-07-01T00:00:00')],
    ['Q: end of Q4', 'Q', utc('2024-12-31T23:00:00'), utc('2024-10-01T00:00:00')],
    ['M: end of a leap February', 'M', utc('2024-02-29T23:59:59', 999_999), utc('2024-02-01T00:00:00')],
    ['M: first of March after a leap day', 'M', utc('2024-03-01T00:00:00'), utc('2024-03-01T00:00:00')],
    ['M: century leap day', 'M', utc('2000-02-29T00:00:00'), utc('2000-02-01T00:00:00')],
    ['W: Saturday belongs to the week of the previous Sunday', 'W', utc('2024-03-02T23:59:59', 999_999), utc('2024-02-25T00:00:00')],
    ['W: Sunday starts a week', 'W', utc('2024-03-03T00:00:00'), utc('2024-03-03T00:00:00')],
    ['W: leap day (Thursday)', 'W', utc('2024-02-29T12:00:00'), utc('2024-02-25T00:00:00')],
    ['W: a week spanning new year is keyed in December', 'W', utc('2024-01-01T00:00:00'), utc('2023-12-31T00:00:00')],
    ['W: the epoch falls in a week starting in 1969', 'W', 0, utc('1969-12-28T00:00:00')],
  ])('%s', (_behaviour, group, ts, expected) => {
    expect(calendarGroupStart(ts, group)).toBe(expected);
  });
});

describe('aggregate: every method over one-minute groups', () => {
  it.each<[string, Point[]]>([
    ['mean', [[0, 2.8], [MIN, 15], [2 * MIN, 7]]],
    ['sum', [[0, 14], [MIN, 30], [2 * MIN, 7]]],
    ['first', [[0, 3], [MIN, 10], [2 * MIN, 7]]],
    ['last', [[0, 5], [MIN, 20], [2 * MIN, 7]]],
    ['min', [[0, 1], [MIN, 10], [2 * MIN, 7]]],
    ['max', [[0, 5], [MIN, 20], [2 * MIN, 7]]],
    ['count', [[0, 5], [MIN, 2], [2 * MIN, 1]]],
    // Sample std (ddof=1); the single-point group has none.
    ['std', [[0, 1.7888543819998317], [MIN, 7.0710678118654755]]],
    // Odd count: middle value; even count: average of the two middles.
    ['median', [[0, 3], [MIN, 15], [2 * MIN, 7]]],
  ])('%s', (name, expected) => {
    expect(run(BASIC, MIN, name)).toEqual(expected);
  });
});

describe('aggregate: percentiles interpolate linearly between sorted positions', () => {
  it.each<[string, Point[]]>([
    // Group of 5: position 4 * q/100; group of 2 starts at offset 5; single point is exact.
    ['1pct', [[0, 1], [MIN, 10.099999999999998], [2 * MIN, 7]]],
    ['25pct', [[0, 1], [MIN, 12.5], [2 * MIN, 7]]],
    ['50pct', [[0, 3], [MIN, 15], [2 * MIN, 7]]],
    ['95pct', [[0, 4.8], [MIN, 19.5], [2 * MIN, 7]]],
    ['99pct', [[0, 4.96], [MIN, 19.900000000000002], [2 * MIN, 7]]],
  ])('%s', (name, expected) => {
    expect(run(BASIC, MIN, name)).toEqual(expected);
  });

  it('uses the exact sorted value when the position is an integer', () => {
    // 25pct of [1, 1, 3, 4, 5] is position 1 exactly, 50pct position 2.
    expect(run(BASIC.slice(0, 5), MIN, '25pct')).toEqual([[0, 1]]);
    expect(run(BASIC.slice(0, 5), MIN, '50pct')).toEqual([[0, 3]]);
  });

  it('computes weights from the absolute position in the grouped array, as Gnocchi does', () => {
    const group: Point[] = [[MIN, 0], [MIN + 10 * S, 1]];
    const preceded: Point[] = [[0, 9], [S, 9], [2 * S, 9], [3 * S, 9], [4 * S, 9], ...group];
    expect(run(group, MIN, '95pct')).toEqual([[MIN, 0.95]]);
    expect(run(preceded, MIN, '95pct')).toEqual([[0, 9], [MIN, 0.9500000000000002]]);
  });
});

describe('aggregate: numeric edge cases', () => {
  it('accumulates sums left to right like numpy.bincount', () => {
    const points: Point[] = [[0, 1e16], [1, 1], [2, -1e16]];
    expect(run(points, MIN, 'sum')).toEqual([[0, 0]]);
    expect(run(points, MIN, 'mean')).toEqual([[0, 0]]);
  });

  const LARGE: Point[] = [[0, 1.7e308], [1, 1.7e308], [MIN, 1e308], [MIN + 1, -1e308], [2 * MIN, 1.7e308]];
  it.each<[string, string, Point[]]>([
    ['sum overflows to Infinity', 'sum', [[0, Infinity], [MIN, 0], [2 * MIN, 1.7e308]]],
    ['mean overflows through the sum', 'mean', [[0, Infinity], [MIN, 0], [2 * MIN, 1.7e308]]],
    ['std overflows on squared deviations', 'std', [[0, Infinity], [MIN, Infinity]]],
    ['median averages the middle with itself, overflowing even for one point', 'median', [[0, Infinity], [MIN, 0], [2 * MIN, Infinity]]],
    ['50pct interpolates with weights and does not overflow', '50pct', [[0, 1.7e308], [MIN, 0], [2 * MIN, 1.7e308]]],
    ['max', 'max', [[0, 1.7e308], [MIN, 1e308], [2 * MIN, 1.7e308]]],
    ['min', 'min', [[0, 1.7e308], [MIN, -1e308], [2 * MIN, 1.7e308]]],
  ])('large values: %s', (_behaviour, name, expected) => {
    expect(run(LARGE, MIN, name)).toEqual(expected);
  });

  const WITH_NAN: Point[] = [[0, 1], [1, NaN], [MIN, NaN], [MIN + 1, 3]];
  it.each<[string, string, Point[]]>([
    ['min skips NaN (it sorts last in numpy argsort)', 'min', [[0, 1], [MIN, 3]]],
    ['max picks NaN (the last element of the argsort)', 'max', [[0, NaN], [MIN, NaN]]],
    ['median sorts NaN last and averages with it', 'median', [[0, NaN], [MIN, NaN]]],
  ])('%s', (_behaviour, name, expected) => {
    expect(run(WITH_NAN, MIN, name)).toEqual(expected);
  });

  it('groups microsecond timestamps at millisecond granularity', () => {
    expect(run([[1, 1], [999, 2], [1000, 3], [1001, 5]], 1000, 'mean')).toEqual([[0, 1.5], [1000, 4]]);
  });

  // Groups are sized from the periods the points span: every point must
  // still be counted, periods with gaps and odd granularities included.
  it.each([
    ['1 s points in 1 h', 3600 * S, 7200, S],
    ['sparse points, 1 min', MIN, 500, 37 * S + 11],
    ['100 ms granularity, 30 ms apart', 100_000, 1000, 30_000],
    ['granularity not dividing a second', 333_333, 1000, 111_111],
  ])('counts every point once: %s', (_name, granularity, n, step) => {
    const points = Array.from({ length: n }, (_, i): Point => [1_700_000_000 * S + i * step, 1]);
    const counts = run(points, granularity, 'count');
    expect(counts.reduce((sum, [, c]) => sum + c, 0)).toBe(n);
    expect(counts.length).toBe(new Set(points.map(([t]) => roundTimestamp(t, granularity))).size);
  });

  it.each([0, -MIN, NaN, Infinity])('rejects granularity %s', (granularity) => {
    expect(() => run(BASIC, granularity, 'mean')).toThrow(RangeError);
  });
});

describe('aggregate: start', () => {
  it.each<[string, Point[]]>([
    ['mean', [[0, 3], [MIN, 15], [2 * MIN, 7]]],
    ['count', [[0, 2], [MIN, 2], [2 * MIN, 1]]],
  ])('only points at or after start are grouped (%s)', (name, expected) => {
    expect(run(BASIC, MIN, name, 30 * S)).toEqual(expected);
  });

  it('yields nothing when start is after the last point', () => {
    expect(run(BASIC, MIN, 'mean', 151 * S)).toEqual([]);
  });
});

describe('aggregate: rate', () => {
  // Diffs: 3 at 30s, 6 at 60s, 1 at 90s, 9 at 150s; the first point has none.
  const COUNTER: Point[] = [[0, 1], [30 * S, 4], [60 * S, 10], [90 * S, 11], [150 * S, 20]];

  it.each<[string, Point[]]>([
    ['rate:mean', [[0, 3], [MIN, 3.5], [2 * MIN, 9]]],
    ['rate:sum', [[0, 3], [MIN, 7], [2 * MIN, 9]]],
    ['rate:first', [[0, 3], [MIN, 6], [2 * MIN, 9]]],
    ['rate:last', [[0, 3], [MIN, 1], [2 * MIN, 9]]],
    ['rate:max', [[0, 3], [MIN, 6], [2 * MIN, 9]]],
    ['rate:count', [[0, 1], [MIN, 2], [2 * MIN, 1]]],
    ['rate:std', [[MIN, 3.5355339059327378]]],
    // The derived group [6, 1] sits at offset 1 of the derived array.
    ['rate:95pct', [[0, 3], [MIN, 5.749999999999999], [2 * MIN, 9]]],
  ])('%s aggregates the diffs of consecutive points', (name, expected) => {
    expect(run(COUNTER, MIN, name)).toEqual(expected);
  });

  it.each<[string, Point[], number | undefined, Point[]]>([
    ['the first point never has a rate', [[0, 1], [MIN, 3]], undefined, [[MIN, 2]]],
    ['a diff spans the start boundary from a point within one granularity before it', COUNTER, MIN, [[MIN, 7], [2 * MIN, 9]]],
    ['a point exactly one granularity before start still counts', [[0, 1], [MIN, 4]], MIN, [[MIN, 3]]],
    ['a point more than one granularity before start does not', [[0, 1], [70 * S, 5], [80 * S, 6]], 65 * S, [[MIN, 1]]],
    ['without start the same older point does', [[0, 1], [70 * S, 5], [80 * S, 6]], undefined, [[MIN, 5]]],
    ['a single point has no rate', [[0, 1]], undefined, []],
  ])('%s', (_behaviour, points, start, expected) => {
    expect(run(points, MIN, 'rate:sum', start)).toEqual(expected);
  });

  it.each<CalendarGroup>(['Y', 'H', 'Q', 'M', 'W'])('refuses to derive on calendar grouping %s', (group) => {
    expect(() => run(COUNTER, group, 'rate:mean')).toThrow(
      new TypeError('Cannot derive aggregates on calendar granularities.'),
    );
    expect(() => run([], group, 'rate:mean')).toThrow(TypeError);
  });
});

describe('aggregate: calendar groupings', () => {
  const WEEKEND: Point[] = [
    [utc('2024-03-02T23:59:59', 999_999), 1], // Saturday
    [utc('2024-03-03T00:00:00'), 2], // Sunday
    [utc('2024-03-09T00:00:00'), 4], // next Saturday
  ];
  const LEAP: Point[] = [
    [utc('2024-02-28T00:00:00'), 1],
    [utc('2024-02-29T23:59:59', 999_999), 2],
    [utc('2024-03-01T00:00:00'), 4],
  ];

  it.each<[string, Point[], CalendarGroup, Point[]]>([
    ['W splits Saturday from the following Sunday', WEEKEND, 'W', [[utc('2024-02-25T00:00:00'), 1], [utc('2024-03-03T00:00:00'), 6]]],
    ['M keeps a weekend in one month', WEEKEND, 'M', [[utc('2024-03-01T00:00:00'), 7]]],
    ['M splits the leap day from March', LEAP, 'M', [[utc('2024-02-01T00:00:00'), 3], [utc('2024-03-01T00:00:00'), 4]]],
    ['Q', LEAP, 'Q', [[utc('2024-01-01T00:00:00'), 7]]],
    ['H', LEAP, 'H', [[utc('2024-01-01T00:00:00'), 7]]],
    ['Y', LEAP, 'Y', [[utc('2024-01-01T00:00:00'), 7]]],
    ['W across a leap day', LEAP, 'W', [[utc('2024-02-25T00:00:00'), 7]]],
    ['Y across new year', [[utc('2024-12-31T23:59:59', 999_999), 1], [utc('2025-01-01T00:00:00'), 2]], 'Y', [[utc('2024-01-01T00:00:00'), 1], [utc('2025-01-01T00:00:00'), 2]]],
  ])('%s', (_behaviour, points, group, expected) => {
    expect(run(points, group, 'sum')).toEqual(expected);
  });
});

describe('aggregate: empty series', () => {
  it.each(['mean', 'sum', 'first', 'last', 'min', 'max', 'count', 'std', 'median', '95pct', 'rate:mean', 'rate:50pct'])(
    '%s yields an empty series',
    (name) => {
      expect(run([], MIN, name)).toEqual([]);
      expect(run([], MIN, name, 0)).toEqual([]);
    },
  );

  it.each<Grouping>(['Y', 'W', 1])('grouping %s yields an empty series', (grouping) => {
    expect(run([], grouping, 'median')).toEqual([]);
  });
});

describe('aggregateMany', () => {
  it('shares one timestamp column and marks absent cells', () => {
    const points: Point[] = [[0, 1], [MIN, 3], [MIN + 30 * S, 7]];
    const result = aggregateMany(series(points), MIN, ['mean', 'std', 'rate:sum'].map(method));
    expect(Array.from(result.timestamps)).toEqual([0, MIN]);
    expect(result.present.map((p) => Array.from(p))).toEqual([[1, 1], [0, 1], [0, 1]]);
    expect(result.columns.map((c) => Array.from(c))).toEqual([
      [1, 5],
      [NaN, 2.8284271247461903],
      [NaN, 6],
    ]);
  });

  it('drops groups where no method has a value', () => {
    const result = aggregateMany(series(BASIC), MIN, [method('std')]);
    expect(Array.from(result.timestamps)).toEqual([0, MIN]);
    expect(Array.from(result.present[0]!)).toEqual([1, 1]);
  });

  it('uses the derived groups as rows when only rate methods are asked', () => {
    const result = aggregateMany(series([[0, 1], [MIN, 4]]), MIN, [method('rate:mean'), method('rate:max')]);
    expect(Array.from(result.timestamps)).toEqual([MIN]);
    expect(result.columns.map((c) => Array.from(c))).toEqual([[3], [3]]);
  });

  it('matches aggregate for every method at once', () => {
    const names = ['mean', 'sum', 'first', 'last', 'min', 'max', 'count', 'std', 'median', '1pct', '99pct', 'rate:mean', 'rate:std'];
    const result = aggregateMany(series(BASIC), MIN, names.map(method), 10 * S);
    names.forEach((name, k) => {
      const rows = Array.from(result.timestamps, (t, r) => [t, result.columns[k]![r]!] as const)
        .filter((_, r) => result.present[k]![r] === 1);
      expect(rows).toEqual(run(BASIC, MIN, name, 10 * S));
    });
  });

  it('returns no rows for no methods', () => {
    const result = aggregateMany(series(BASIC), MIN, []);
    expect(result).toEqual({ timestamps: new Float64Array(0), columns: [], present: [] });
  });

  it('rejects a quantile method without q', () => {
    expect(() => aggregateMany(series(BASIC), MIN, [{ name: 'q', base: 'quantile', rate: false }])).toThrow(RangeError);
  });

  it('returns no rows and one empty column per method for an empty series', () => {
    const result = aggregateMany(series([]), MIN, [method('mean'), method('rate:mean')]);
    expect(result.timestamps.length).toBe(0);
    expect(result.columns.map((c) => c.length)).toEqual([0, 0]);
  });
});

describe('resample', () => {
  it.each<[string, Point[], Grouping, string, Point[]]>([
    [
      'means of means over five minutes',
      [[0, 1], [MIN, 2], [2 * MIN, 6], [5 * MIN, 10], [6 * MIN, 11]],
      5 * MIN, 'mean', [[0, 3], [5 * MIN, 10.5]],
    ],
    [
      'rate methods derive the aggregated values again',
      [[MIN, 7], [2 * MIN, 9], [3 * MIN, 9], [5 * MIN, 4]],
      5 * MIN, 'rate:sum', [[0, 2], [5 * MIN, -5]],
    ],
    [
      'daily maxima to calendar months',
      [[utc('2024-01-31T00:00:00'), 1], [utc('2024-02-01T00:00:00'), 5], [utc('2024-02-29T00:00:00'), 3]],
      'M', 'max', [[utc('2024-01-01T00:00:00'), 1], [utc('2024-02-01T00:00:00'), 5]],
    ],
  ])('%s', (_behaviour, points, grouping, name, expected) => {
    expect(pairs(resample(series(points), grouping, method(name)))).toEqual(expected);
  });
});

describe('scale', () => {
  it('aggregates a million points into minute groups', () => {
    const n = 1_000_000;
    const timestamps = new Float64Array(n);
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      timestamps[i] = 1_699_999_980_000_000 + i * S; // minute-aligned start
      values[i] = i % 7;
    }
    const result = aggregateMany({ timestamps, values }, MIN, ['mean', 'max', 'median', '95pct', 'rate:sum'].map(method));
    expect(result.timestamps.length).toBe(Math.ceil(n / 60));
    expect(result.present.every((p) => p.every((x) => x === 1))).toBe(true);
  });
});
