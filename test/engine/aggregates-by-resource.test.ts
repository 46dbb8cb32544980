// Resolution of metric names through resources, grouping, and history
// intervals (engine/aggregates/by-resource.ts), plus the interval filter of
// the task.
import { describe, expect, it } from 'vitest';
import type { ArchivePolicy } from '../../engine/archive-policy.js';
import {
  compareGroupValues,
  consecutivePageRuns,
  groupConsecutive,
  historyGroups,
  mergeIntervals,
  referencesByName,
  wildcardNames,
  type Interval,
} from '../../engine/aggregates/by-resource.js';
import { keepIntervals } from '../../engine/aggregates/task.js';

const policy = { name: 'p' } as unknown as ArchivePolicy;
const resolve = (id: string) => (id.startsWith('gone') ? undefined : { id, policy });

describe('referencesByName', () => {
  const resources = [
    { id: 'r1', metrics: new Map([['cpu.idle', 'm1'], ['cpu.util', 'm2'], ['noway', 'm3']]) },
    { id: 'r2', metrics: new Map([['cpu.util', 'm4'], ['disk', 'gone-5']]) },
  ];

  it.each<[string, { name: string; aggregation: string }[], [string, string, string, string][]]>([
    ['an exact name', [{ name: 'cpu.util', aggregation: 'mean' }], [['r1', 'cpu.util', 'm2', 'cpu.util'], ['r2', 'cpu.util', 'm4', 'cpu.util']]],
    ['a star', [{ name: 'cpu.*', aggregation: 'max' }], [['r1', 'cpu.idle', 'm1', 'cpu.*'], ['r1', 'cpu.util', 'm2', 'cpu.*'], ['r2', 'cpu.util', 'm4', 'cpu.*']]],
    ['a question mark and a set', [{ name: 'n?wa[xy]', aggregation: 'mean' }], [['r1', 'noway', 'm3', 'n?wa[xy]']]],
    ['regex characters taken literally', [{ name: 'cpu.+', aggregation: 'mean' }], []],
    ['a dot is not a wildcard', [{ name: 'cpu?util', aggregation: 'mean' }], [['r1', 'cpu.util', 'm2', 'cpu?util'], ['r2', 'cpu.util', 'm4', 'cpu?util']]],
    ['a metric that no longer exists', [{ name: 'disk', aggregation: 'mean' }], []],
    [
      'resources first, then wildcards in order',
      [{ name: 'noway', aggregation: 'mean' }, { name: 'cpu.util', aggregation: 'min' }],
      [['r1', 'noway', 'm3', 'noway'], ['r1', 'cpu.util', 'm2', 'cpu.util'], ['r2', 'cpu.util', 'm4', 'cpu.util']],
    ],
  ])('%s', (_name, wildcards, expected) => {
    const refs = referencesByName(resources, wildcards, resolve);
    expect(refs.map((r) => [r.resourceId, r.name, r.metricId, r.key[0]])).toEqual(expected);
    for (const r of refs) expect(r.key[1]).toBe(r.aggregation);
  });

  it('attaches the intervals of each resource', () => {
    const spans: Interval[] = [[0, 10]];
    const refs = referencesByName(resources, [{ name: 'cpu.util', aggregation: 'mean' }], resolve, (id) => (id === 'r2' ? spans : undefined));
    expect(refs.map((r) => r.intervals)).toEqual([undefined, spans]);
  });

  it('names the wildcards sorted and unique', () => {
    expect(wildcardNames([{ name: 'b', aggregation: 'mean' }, { name: 'a', aggregation: 'max' }, { name: 'b', aggregation: 'min' }])).toEqual(['a', 'b']);
  });
});

describe('grouping', () => {
  it('groups runs of equal values', () => {
    const items = [{ p: 'a', n: 1 }, { p: 'a', n: 2 }, { p: null, n: 3 }, { p: 'b', n: 4 }];
    expect(groupConsecutive(items, (i) => [i.p]).map((g) => [g.values, g.members.map((m) => m.n)])).toEqual([
      [['a'], [1, 2]],
      [[null], [3]],
      [['b'], [4]],
    ]);
  });

  it.each<[string, (string | null)[][], [string | null, number][]]>([
    ['a run spanning pages stays one group', [['a', 'a'], ['a', 'b'], ['b'], ['c']], [['a', 3], ['b', 2], ['c', 1]]],
    ['empty pages change nothing', [[], ['a'], [], ['a', null], []], [['a', 2], [null, 1]]],
    ['a page boundary between two values splits them', [['a'], ['b']], [['a', 1], ['b', 1]]],
    ['no pages, no groups', [], []],
  ])('groups paged items: %s', async (_, pages, expected) => {
    async function* read() {
      yield* pages.map((page) => page.map((p) => ({ p })));
    }
    const groups = [];
    for await (const g of consecutivePageRuns(read(), (i) => [i.p])) groups.push([g.values[0], g.members.length]);
    expect(groups).toEqual(expected);
  });

  it.each<[unknown[], unknown[], number]>([
    [['a', 1], ['a', 1], 0],
    [['a', 1], ['a', 2], -1],
    [['b'], ['a'], 1],
    [[null], ['a'], 1],
    [['a'], [null], -1],
    [[false], [true], -1],
  ])('compares %j with %j', (a, b, expected) => {
    expect(Math.sign(compareGroupValues(a as never, b as never))).toBe(expected);
  });
});

describe('mergeIntervals', () => {
  it.each<[Interval[], Interval[]]>([
    [[], []],
    [[[5, 6], [1, 2]], [[1, 2], [5, 6]]],
    [[[1, 3], [3, 4]], [[1, 4]]],
    [[[1, 5], [2, 3]], [[1, 5]]],
    [[[-Infinity, 2], [2, Infinity]], [[-Infinity, Infinity]]],
  ])('%j', (input, expected) => {
    expect(mergeIntervals(input)).toEqual(expected);
  });
});

describe('historyGroups', () => {
  // r1: project a until 100, b until 200, a since; r2: a always.
  const revisions = [
    { id: 'r1', project: 'a', revisionStart: 10, revisionEnd: 100 },
    { id: 'r1', project: 'b', revisionStart: 100, revisionEnd: 200 },
    { id: 'r1', project: 'a', revisionStart: 200, revisionEnd: null },
    { id: 'r2', project: 'a', revisionStart: 50, revisionEnd: null },
  ];
  const first = (r: { id: string; revisionStart: number }) => r.revisionStart === (r.id === 'r1' ? 10 : 50);
  const shape = (window: { start?: number; stop?: number }) =>
    historyGroups(revisions, (r) => [r.project], first, window).map((g) => [g.values[0], Object.fromEntries(g.intervals)]);

  it('puts each resource in the group of each time, first revision from the start of time', () => {
    expect(shape({})).toEqual([
      ['a', { r1: [[-Infinity, 100], [200, Infinity]], r2: [[-Infinity, Infinity]] }],
      ['b', { r1: [[100, 200]] }],
    ]);
  });

  it.each<[{ start?: number; stop?: number }, string[]]>([
    [{ start: 250 }, ['a']],
    [{ stop: 100 }, ['a']],
    [{ start: 100, stop: 101 }, ['a', 'b']],
    [{ start: 120, stop: 180 }, ['a', 'b']],
  ])('keeps the revisions that overlap %j', (window, groups) => {
    expect(shape(window).map((g) => g[0])).toEqual(groups);
  });
});

describe('keepIntervals', () => {
  const series = { timestamps: Float64Array.from([1, 2, 3, 4, 5, 6]), values: Float64Array.from([10, 20, 30, 40, 50, 60]) };
  it.each<[Interval[], number[]]>([
    [[[-Infinity, Infinity]], [10, 20, 30, 40, 50, 60]],
    [[[2, 4]], [20, 30]],
    [[[-Infinity, 2], [5, Infinity]], [10, 50, 60]],
    [[[3, 3]], []],
    [[], []],
  ])('%j', (intervals, values) => {
    expect([...keepIntervals(series, intervals).values]).toEqual(values);
  });
});
