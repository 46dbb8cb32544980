// The fast rolling reductions (engine/aggregates/rolling.ts) give exactly the
// values of the straightforward evaluation, window by window, that mimics
// numpy (engine/aggregates/reduce.ts): same bits, same NaN, same signed zeros.
import { describe, expect, it } from 'vitest';
import { random } from '../../bench/split-codec.bench.js';
import { rollingReduce } from '../../engine/aggregates/rolling.js';
import { reduce } from '../../engine/aggregates/reduce.js';
import { SERIES_METHODS, type SeriesMethod } from '../../formats/operations-nodes.js';

/** Window by window: the short-window loop for mean/sum/count below 9, else reduce() in pairwise order. */
function reference(column: Float64Array, window: number, method: SeriesMethod): Float64Array {
  const out = new Float64Array(column.length - window + 1);
  for (let r = 0; r < out.length; r++) {
    if ((method === 'mean' || method === 'sum' || method === 'count') && window < 9) {
      let sum = 0;
      let cnt = 0;
      for (let i = r; i < r + window; i++) {
        const x = column[i]!;
        if (x === x) {
          sum += x;
          cnt++;
        }
      }
      out[r] = method === 'sum' ? sum : method === 'count' ? cnt : sum / cnt;
    } else {
      out[r] = reduce(method, { data: column, offset: r, stride: 1, n: window }, true);
    }
  }
  return out;
}

function column(length: number, seed: number, pick: (r: () => number) => number): Float64Array {
  const r = random(seed);
  return Float64Array.from({ length }, () => pick(r));
}

const DATA: [string, Float64Array][] = [
  ['uniform', column(400, 1, (r) => r() * 1000 - 500)],
  ['wide magnitudes', column(400, 2, (r) => (r() - 0.5) * 10 ** Math.floor(r() * 30 - 15))],
  ['10% NaN', column(400, 3, (r) => (r() < 0.1 ? NaN : r() * 100))],
  ['NaN runs', column(400, 4, (r) => (Math.floor(r() * 400) % 40 < 15 ? NaN : r() * 7 - 3))],
  ['all NaN', new Float64Array(300).fill(NaN)],
  ['few distinct values, ties', column(400, 5, (r) => Math.floor(r() * 4) - 1.5)],
  ['signed zeros', column(300, 6, (r) => [0, -0, 1, -1, NaN][Math.floor(r() * 5)]!)],
  ['infinities', column(300, 7, (r) => (r() < 0.05 ? (r() < 0.5 ? Infinity : -Infinity) : r() * 10))],
  ['decimal steps', column(400, 8, (r) => Math.round(r() * 10_000) / 100)],
];

const WINDOWS = [1, 2, 5, 8, 9, 10, 16, 17, 60, 128, 129, 130, 137, 200, 257, 300];

function sameBits(actual: Float64Array, expected: Float64Array): string[] {
  const diffs: string[] = [];
  expected.forEach((want, i) => {
    if (!Object.is(actual[i], want)) diffs.push(`[${i}] ${actual[i]} != ${want}`);
  });
  return diffs;
}

describe('rolling fast path equals window-by-window evaluation', () => {
  const cases = SERIES_METHODS.flatMap((method) => DATA.map(([name, data]) => [method, name, data] as const));
  it.each(cases)('%s over %s, every window size', (method, _name, data) => {
    for (const window of WINDOWS) {
      if (window > data.length) continue;
      const actual = rollingReduce(data, window, method);
      expect(actual.length).toBe(data.length - window + 1);
      expect({ window, diffs: sameBits(actual, reference(data, window, method)).slice(0, 5) }).toEqual({ window, diffs: [] });
    }
  });

  it.each<[SeriesMethod, number[], number, number[]]>([
    ['max', [3, NaN, 5, 5, 1], 2, [3, 5, 5, 5]],
    ['min', [NaN, NaN, 2, -1], 2, [NaN, 2, -1]],
    ['count', [1, NaN, NaN, 4], 2, [1, 0, 1]],
    ['median', [4, 1, NaN, 3, 2], 3, [2.5, 2, 2.5]],
    ['sum', [1, 2, 3], 3, [6]],
  ])('%s of %j over %i values', (method, data, window, expected) => {
    expect([...rollingReduce(Float64Array.from(data), window, method)]).toEqual(expected);
  });
});
