import { describe, expect, it } from 'vitest';
import type { ArchivePolicy } from '../../engine/archive-policy.js';
import type { Series } from '../../engine/aggregation.js';
import { computeUpdate, rawBackWindow, receivedOf, sortMeasures } from '../../engine/compute-update.js';

const S = 1_000_000;
const T0 = Date.UTC(2015, 2, 6, 14, 0, 0) * 1000;

function series(points: [number, number][]): Series {
  return {
    timestamps: Float64Array.from(points.map(([t]) => t)),
    values: Float64Array.from(points.map(([, v]) => v)),
  };
}

function policy(overrides: Partial<ArchivePolicy> = {}): ArchivePolicy {
  return {
    name: 'p',
    backWindow: 0,
    definition: [{ granularity: 60 * S, points: null, timespan: null }],
    aggregationMethods: ['count', 'mean'],
    ...overrides,
  };
}

/** Rows of one granularity as [timestamp, count, mean]. */
function rows(update: ReturnType<typeof computeUpdate>, granularity = 60 * S): number[][] {
  const g = update!.granularities.find((x) => x.granularity === granularity)!;
  return g.splits.flatMap(({ rows: r }) =>
    Array.from(r.timestamps, (t, i) => [t, r.columns[0]![i]!, r.columns[1]![i]!]),
  );
}

describe('sortMeasures', () => {
  it.each([
    ['keeps the first of duplicates inside one push', [series([[T0, 5], [T0, 7]])], [[T0, 5]]],
    ['keeps the later push across pushes', [series([[T0, 5]]), series([[T0, 7]])], [[T0, 7]]],
    ['keeps the newest push of three, and its first value', [series([[T0, 5]]), series([[T0, 7], [T0, 8]]), series([[T0 + S, 1]])], [[T0, 7], [T0 + S, 1]]],
    ['keeps the later push when it is out of order', [series([[T0 + S, 1], [T0, 5]]), series([[T0 + 2 * S, 3], [T0, 9], [T0 + S, 2]])], [[T0, 9], [T0 + S, 2], [T0 + 2 * S, 3]]],
    ['sorts by timestamp', [series([[T0 + 2 * S, 2], [T0, 1]])], [[T0, 1], [T0 + 2 * S, 2]]],
    ['passes sorted input through', [series([[T0, 1], [T0 + S, 2]])], [[T0, 1], [T0 + S, 2]]],
    ['puts ordered pushes that overtook each other back in order', [series([[T0 + 2 * S, 3], [T0 + 3 * S, 4]]), series([[T0, 1], [T0 + S, 2]])], [[T0, 1], [T0 + S, 2], [T0 + 2 * S, 3], [T0 + 3 * S, 4]]],
    ['orders three overtaking pushes and skips an empty one', [series([[T0 + 4 * S, 5]]), series([]), series([[T0 + 2 * S, 3], [T0 + 3 * S, 4]]), series([[T0, 1]])], [[T0, 1], [T0 + 2 * S, 3], [T0 + 3 * S, 4], [T0 + 4 * S, 5]]],
    ['keeps the later push when ordered pushes share their first timestamp', [series([[T0 + S, 2]]), series([[T0, 1], [T0 + S, 7]]), series([[T0, 9]])], [[T0, 9], [T0 + S, 7]]],
    ['keeps the later push when ordered pushes interleave', [series([[T0 + 2 * S, 3], [T0 + 4 * S, 5]]), series([[T0, 1], [T0 + 3 * S, 4]])], [[T0, 1], [T0 + 2 * S, 3], [T0 + 3 * S, 4], [T0 + 4 * S, 5]]],
    ['keeps the later push when an ordered push ends on the next one\'s first timestamp', [series([[T0 + S, 2], [T0 + 2 * S, 3]]), series([[T0, 1], [T0 + S, 8]])], [[T0, 1], [T0 + S, 8], [T0 + 2 * S, 3]]],
  ])('%s', (_name, batches, expected) => {
    const s = sortMeasures(receivedOf(batches));
    expect(Array.from(s.timestamps, (t, i) => [t, s.values[i]])).toEqual(expected);
  });

  // A few pushes sort by insertion, many by TypedArray sort: the same rule either way.
  it.each([10, 40, 300])('keeps, of %i one-point pushes in shuffled order with repeats, the newest push per timestamp', (pushes) => {
    let seed = pushes;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const batches = Array.from({ length: pushes }, (_, k) => series([[T0 + Math.floor(random() * pushes / 3) * S, k]]));
    const newest = new Map<number, number>();
    for (const b of batches) newest.set(b.timestamps[0]!, b.values[0]!);
    const s = sortMeasures(receivedOf(batches));
    expect(Array.from(s.timestamps, (t, i) => [t, s.values[i]])).toEqual([...newest].sort(([a], [b]) => a - b));
  });
});

describe('sortMeasures against the rule, pushes of several points', () => {
  // Stretches of a series in shuffled order (taken whole when disjoint and
  // ordered), some overlapping or unordered (the general sort): one rule.
  it.each([
    ['disjoint ordered stretches', 0],
    ['stretches overlapping now and then', 0.3],
  ])('%s', (_name, overlap) => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let trial = 0; trial < 50; trial++) {
      const stretches = Array.from({ length: 2 + Math.floor(random() * 8) }, (_, k) => {
        const start = k * 10 - (random() < overlap ? 3 : 0);
        return Array.from({ length: 1 + Math.floor(random() * 10) }, (_, i): [number, number] => [T0 + (start + i) * S, trial * 1000 + k * 10 + i]);
      });
      const batches = stretches.sort(() => random() - 0.5).map((points) => series(points));
      const kept = new Map<number, number>();
      for (const b of batches) {
        const first = new Map<number, number>();
        b.timestamps.forEach((t, i) => first.has(t) || first.set(t, b.values[i]!));
        for (const [t, v] of first) kept.set(t, v);
      }
      const s = sortMeasures(receivedOf(batches));
      expect(Array.from(s.timestamps, (t, i) => [t, s.values[i]])).toEqual([...kept].sort(([a], [b]) => a - b));
    }
  });
});

describe('computeUpdate', () => {
  it('aggregates new measures into their periods', () => {
    const u = computeUpdate(policy(), null, receivedOf([series([[T0 + 5 * S, 1], [T0 + 35 * S, 3], [T0 + 65 * S, 10]])]));
    expect(rows(u)).toEqual([[T0, 2, 2], [T0 + 60 * S, 1, 10]]);
    expect(u!.accepted).toBe(3);
  });

  it('replaces the stored raw point when a later push repeats its timestamp', () => {
    const tail = series([[T0 + 5 * S, 1]]);
    const u = computeUpdate(policy(), tail, receivedOf([series([[T0 + 5 * S, 100], [T0 + 10 * S, 3]])]));
    expect(rows(u)).toEqual([[T0, 2, 51.5]]);
    expect(Array.from(u!.tail.values)).toEqual([100, 3]);
    expect(u!.firstChanged).toBe(T0 + 5 * S);
  });

  it.each([
    ['back_window 0 drops a point before the current period', 0, T0 + 20 * 60 * S, null],
    ['back_window 0 accepts a point inside the current period', 0, T0 + 34 * 60 * S + 1 * S, T0 + 34 * 60 * S],
    ['back_window 2 accepts a point two periods back', 2, T0 + 32 * 60 * S + 30 * S, T0 + 32 * 60 * S],
    ['back_window 2 drops a point three periods back', 2, T0 + 31 * 60 * S + 59 * S, null],
  ])('%s', (_name, backWindow, late, expectedPeriod) => {
    const p = policy({ backWindow });
    const tail = series([[T0 + 34 * 60 * S + 10 * S, 1]]);
    const u = computeUpdate(p, tail, receivedOf([series([[late, 5]])]));
    if (expectedPeriod === null) expect(u).toBeNull();
    else expect(rows(u)[0]![0]).toBe(expectedPeriod);
  });

  it('keeps one more raw block when a rate method needs the previous point', () => {
    expect(rawBackWindow(policy({ aggregationMethods: ['mean'] }))).toBe(0);
    expect(rawBackWindow(policy({ aggregationMethods: ['rate:mean'] }))).toBe(1);
  });

  it('truncates the tail to the back window', () => {
    const u = computeUpdate(policy({ backWindow: 1 }), null, receivedOf([
      series([[T0, 1], [T0 + 60 * S, 2], [T0 + 120 * S, 3], [T0 + 130 * S, 4]]),
    ]));
    expect(Array.from(u!.tail.timestamps)).toEqual([T0 + 60 * S, T0 + 120 * S, T0 + 130 * S]);
  });

  it('keeps only the periods inside the timespan and marks older splits for deletion', () => {
    const p = policy({ definition: [{ granularity: 60 * S, points: 3, timespan: 180 * S }] });
    const points: [number, number][] = Array.from({ length: 6 }, (_, i) => [T0 + i * 60 * S, i]);
    const u = computeUpdate(p, null, receivedOf([series(points)]));
    expect(rows(u).map((r) => r[0])).toEqual([T0 + 3 * 60 * S, T0 + 4 * 60 * S, T0 + 5 * 60 * S]);
    expect(u!.granularities[0]!.deleteBefore).toBe(Math.floor((T0 + 2 * 60 * S) / (3600 * 60 * S)) * 3600 * 60 * S);
  });

  it('cuts rows into splits of 3600 periods', () => {
    const p = policy({ definition: [{ granularity: S, points: null, timespan: null }] });
    const hour = Math.ceil(T0 / (3600 * S)) * 3600 * S;
    const u = computeUpdate(p, null, receivedOf([series([[hour - S, 1], [hour, 2]])]));
    expect(u!.granularities[0]!.splits.map((s) => s.key)).toEqual([hour - 3600 * S, hour]);
  });

  it('marks absent values where a method has none (std of one point)', () => {
    const p = policy({ aggregationMethods: ['count', 'std'] });
    const u = computeUpdate(p, null, receivedOf([series([[T0, 1], [T0 + 60 * S, 2], [T0 + 61 * S, 4]])]));
    const split = u!.granularities[0]!.splits[0]!.rows;
    expect(Array.from(split.present[1]!)).toEqual([0, 1]);
    expect(split.columns[1]![1]).toBeCloseTo(Math.SQRT2, 12);
  });
});
