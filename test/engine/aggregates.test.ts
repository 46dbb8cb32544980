// Cross-metric evaluation (engine/aggregates): alignment, fill modes,
// overlap, and every operation, against values computed by hand.
import { describe, expect, it } from 'vitest';
import { alignAndEvaluate, dropsPoint, unionTimestamps, type AlignOptions, type Fill } from '../../engine/aggregates/align.js';
import { EngineError } from '../../engine/errors.js';
import { parseOperations } from '../../formats/operations.js';

const S = 1_000_000;
const ts = (...seconds: number[]) => Float64Array.from(seconds, (s) => s * S);
const vals = (...v: number[]) => Float64Array.from(v);

// Grid t0..t4: a = [43.1, 12, -16, 9, -], b = [2, 4, -, 15, 5]
const A = { key: ['a', 'mean'] as const, timestamps: ts(0, 1, 2, 3), values: vals(43.1, 12, -16, 9) };
const B = { key: ['b', 'mean'] as const, timestamps: ts(0, 1, 3, 4), values: vals(2, 4, 15, 5) };

function run(operations: string, options: Partial<AlignOptions> = {}, series = [A, B]) {
  return alignAndEvaluate([{ granularity: S, series }], parseOperations(operations), { neededOverlap: 100, ...options });
}

/** Points of the first sampling's column `i`, with the fill's drops applied. */
function points(operations: string, options: Partial<AlignOptions> = {}, series = [A, B], i = 0): [number, number][] {
  const result = run(operations, options, series);
  const s = result.samplings[0]!;
  const out: [number, number][] = [];
  s.timestamps.forEach((t, k) => {
    const v = s.columns[i]![k]!;
    if (!dropsPoint(options.fill, v)) out.push([t / S, v]);
  });
  return out;
}

function expectClose(actual: [number, number][], expected: [number, number][]): void {
  expect(actual.map(([t]) => t)).toEqual(expected.map(([t]) => t));
  actual.forEach(([, v], i) => {
    const want = expected[i]![1];
    if (Number.isNaN(want)) expect(v).toBeNaN();
    else expect(v).toBeCloseTo(want, 10);
  });
}

function errorOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    if (err instanceof EngineError) return err.description;
    throw err;
  }
  throw new Error('no error');
}

const AB = '(metric (a mean) (b mean))';

describe('fill modes and overlap', () => {
  it.each<[string, Partial<AlignOptions>, [number, number][]]>([
    ['null', { fill: 'null' }, [[0, 22.55], [1, 8], [2, -16], [3, 12], [4, 5]]],
    ['dropna', { fill: 'dropna' }, [[0, 22.55], [1, 8], [2, -16], [3, 12], [4, 5]]],
    ['number', { fill: 0 }, [[0, 22.55], [1, 8], [2, -8], [3, 12], [4, 2.5]]],
    ['ffill', { fill: 'ffill' }, [[0, 22.55], [1, 8], [2, -6], [3, 12], [4, 7]]],
    ['bfill', { fill: 'bfill' }, [[0, 22.55], [1, 8], [2, -0.5], [3, 12], [4, 5]]],
    ['full_ffill', { fill: 'full_ffill' }, [[0, 22.55], [1, 8], [2, -6], [3, 12], [4, 7]]],
    ['full_bfill', { fill: 'full_bfill' }, [[0, 22.55], [1, 8], [2, -0.5], [3, 12], [4, 7]]],
    ['overlap 50% trims to the overlapping span', { neededOverlap: 50 }, [[0, 22.55], [1, 8], [2, -16], [3, 12]]],
    ['overlap 50% with stop keeps the tail', { neededOverlap: 50, stop: 10 * S }, [[0, 22.55], [1, 8], [2, -16], [3, 12], [4, 5]]],
  ])('%s', (_name, options, expected) => {
    expectClose(points(`(aggregate mean ${AB})`, options), expected);
  });

  it('needed overlap not met names the series', () => {
    expect(errorOf(() => run(`(aggregate mean ${AB})`))).toEqual({
      cause: "Metrics can't being aggregated",
      reason: 'Less than 100.000000% of datapoints overlap in this timespan (75.00%)',
      detail: [['a', 'mean'], ['b', 'mean']],
    });
  });

  it('disjoint series do not overlap', () => {
    const far = { key: ['b', 'mean'] as const, timestamps: ts(100), values: vals(1) };
    expect(errorOf(() => run(`(aggregate mean ${AB})`, {}, [A, far]))).toMatchObject({ reason: 'No overlap' });
  });

  it('start bound slices each series at the rounded start', () => {
    expectClose(points(`(aggregate mean ${AB})`, { fill: 'null', start: 2.5 * S, stop: 4 * S }), [[2, -16], [3, 12]]);
  });
});

describe('aggregate across series', () => {
  it.each<[string, [number, number][]]>([
    ['mean', [[0, 22.55], [1, 8], [2, -16], [3, 12], [4, 5]]],
    ['sum', [[0, 45.1], [1, 16], [2, -16], [3, 24], [4, 5]]],
    ['count', [[0, 2], [1, 2], [2, 1], [3, 2], [4, 1]]],
    ['min', [[0, 2], [1, 4], [2, -16], [3, 9], [4, 5]]],
    ['max', [[0, 43.1], [1, 12], [2, -16], [3, 15], [4, 5]]],
    ['median', [[0, 22.55], [1, 8], [2, -16], [3, 12], [4, 5]]],
    ['var', [[0, 422.3025], [1, 16], [2, 0], [3, 9], [4, 0]]],
    ['std', [[0, 20.55], [1, 4], [2, 0], [3, 3], [4, 0]]],
    ['rate:mean', [[1, -14.55], [2, -24], [3, 28], [4, -7]]],
  ])('%s', (method, expected) => {
    expectClose(points(`(aggregate ${method} ${AB})`, { fill: 'null' }), expected);
  });

  it('marks the result aggregated', () => {
    expect(run(`(aggregate mean ${AB})`, { fill: 'null' }).aggregated).toBe(true);
    expect(run(`(abs ${AB})`, { fill: 'null' }).aggregated).toBe(false);
  });
});

describe('per-series operations', () => {
  const one = [A];
  it.each<[string, [number, number][]]>([
    ['(rolling mean 2 (metric a mean))', [[1, 27.55], [2, -2], [3, -3.5]]],
    ['(rolling sum 3 (metric a mean))', [[2, 39.1], [3, 5]]],
    ['(rolling max 2 (metric a mean))', [[1, 43.1], [2, 12], [3, 9]]],
    ['(rolling rate:sum 2 (metric a mean))', [[2, -59.1], [3, -3]]],
    ['(rateofchange (metric a mean))', [[1, -31.1], [2, -28], [3, 25]]],
    ['(resample mean 2 (metric a mean))', [[0, 27.55], [2, -3.5]]],
    ['(resample max 2 (metric a mean))', [[0, 43.1], [2, 9]]],
    ['(clip (metric a mean) 0 10)', [[0, 10], [1, 10], [2, 0], [3, 9]]],
    ['(clip_min (metric a mean) 10)', [[0, 43.1], [1, 12], [2, 10], [3, 10]]],
    ['(clip_max (metric a mean) 10)', [[0, 10], [1, 10], [2, -16], [3, 9]]],
    ['(abs (metric a mean))', [[0, 43.1], [1, 12], [2, 16], [3, 9]]],
    ['(negative (metric a mean))', [[0, -43.1], [1, -12], [2, 16], [3, -9]]],
    ['(floor (metric a mean))', [[0, 43], [1, 12], [2, -16], [3, 9]]],
    ['(ceil (metric a mean))', [[0, 44], [1, 12], [2, -16], [3, 9]]],
    ['(cos (metric a mean))', [[0, Math.cos(43.1)], [1, Math.cos(12)], [2, Math.cos(-16)], [3, Math.cos(9)]]],
    ['(+ (metric a mean) 2)', [[0, 45.1], [1, 14], [2, -14], [3, 11]]],
    ['(- 10 (metric a mean))', [[0, -33.1], [1, -2], [2, 26], [3, 1]]],
    ['(/ (metric a mean) 0)', [[0, Infinity], [1, Infinity], [2, -Infinity], [3, Infinity]]],
    ['(% (metric a mean) 5)', [[0, 3.1], [1, 2], [2, 4], [3, 4]]],
    ['(** (metric a mean) 2)', [[0, 1857.61], [1, 144], [2, 256], [3, 81]]],
    ['(> (metric a mean) 10)', [[0, 1], [1, 1], [2, 0], [3, 0]]],
    ['(≠ (metric a mean) 12)', [[0, 1], [1, 0], [2, 1], [3, 1]]],
  ])('%s', (ops, expected) => {
    const got = points(ops, { fill: 'null' }, one);
    if (expected.some(([, v]) => !Number.isFinite(v))) expect(got).toEqual(expected);
    else expectClose(got, expected);
  });

  it('a rolling window longer than the series is refused', () => {
    expect(errorOf(() => run('(rolling mean 5 (metric a mean))', { fill: 'null' }, [A]))).toEqual({
      cause: "Metrics can't being aggregated",
      reason: "Rolling window '5' is greater than serie length '4'",
      detail: [['a', 'mean']],
    });
  });

  it('series on different grids cannot be combined', () => {
    const err = errorOf(() => run('(+ (metric a mean) (resample mean 2 (metric a mean)))', { fill: 'null' }, [A]));
    expect(err).toMatchObject({ reason: expect.stringMatching(/^Can't compute timeseries with different granularity \['metric'/) });
  });

  it('two series combined are aggregated', () => {
    const result = run('(- (metric a mean) (metric b mean))', { fill: 'null' });
    expect(result.aggregated).toBe(true);
    expect([...result.samplings[0]!.columns[0]!]).toEqual([41.1, 8, NaN, -6, NaN]);
  });

  it('a metric list keeps one column per reference', () => {
    const result = run(`(+ ${AB} 1)`, { fill: 0 });
    expect(result.samplings[0]!.columns.map((c) => [...c])).toEqual([
      [44.1, 13, -15, 10, 1],
      [3, 5, 1, 16, 6],
    ]);
  });
});

describe('granularities', () => {
  it('answers the coarsest first', () => {
    const result = alignAndEvaluate(
      [
        { granularity: S, series: [A] },
        { granularity: 60 * S, series: [{ key: ['a', 'mean'], timestamps: ts(0), values: vals(12) }] },
      ],
      parseOperations('(metric a mean)'),
      { neededOverlap: 100, fill: 'dropna' as Fill },
    );
    expect(result.samplings.map((s) => s.granularity)).toEqual([60 * S, S]);
  });
});

describe('unionTimestamps', () => {
  it.each<[string, number[][], number[]]>([
    ['equal arrays', [[1, 2, 3], [1, 2, 3]], [1, 2, 3]],
    ['same length and ends, different middle', [[1, 2, 4], [1, 3, 4]], [1, 2, 3, 4]],
    ['interleaved', [[1, 5], [2, 3, 9]], [1, 2, 3, 5, 9]],
    ['one empty', [[], [4, 6]], [4, 6]],
    ['three with a subset', [[1, 2, 3], [2], [0, 3]], [0, 1, 2, 3]],
  ])('%s', (_name, arrays, expected) => {
    expect([...unionTimestamps(arrays.map((a) => Float64Array.from(a)))]).toEqual(expected);
  });

  it('reads only the view of an array that is part of a larger buffer', () => {
    const buffer = Float64Array.from([9, 1, 2, 3, 9]);
    expect([...unionTimestamps([buffer.subarray(1, 4), Float64Array.from([1, 2, 3])])]).toEqual([1, 2, 3]);
    expect([...unionTimestamps([buffer.subarray(1, 4), Float64Array.from([1, 2, 4])])]).toEqual([1, 2, 3, 4]);
  });
});
