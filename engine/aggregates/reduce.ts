/**
 * numpy's NaN-ignoring reductions (nanmean, nanmedian, nanstd, nanvar,
 * nanmin, nanmax, nansum, count of non-NaN) as Gnocchi's aggregates
 * operations use them, over a strided view of a Float64Array. Summation
 * order follows numpy: across series (an F-ordered grid) sums run
 * sequentially; along a contiguous window numpy uses its pairwise sum.
 */
import type { SeriesMethod } from '../../formats/operations-nodes.js';

/** A view of `n` values: data[offset + i * stride]. */
export interface View {
  data: Float64Array;
  offset: number;
  stride: number;
  n: number;
}

/** numpy's pairwise_sum (blocks of 8 accumulators up to 128, then halving). */
export function pairwise(data: Float64Array, offset: number, n: number, stride: number): number {
  if (n < 8) {
    let res = 0;
    for (let i = 0; i < n; i++) res += data[offset + i * stride]!;
    return res;
  }
  if (n <= 128) {
    // Eight accumulators in locals: no allocation per call (this runs once per rolling window).
    let r0 = data[offset]!;
    let r1 = data[offset + stride]!;
    let r2 = data[offset + 2 * stride]!;
    let r3 = data[offset + 3 * stride]!;
    let r4 = data[offset + 4 * stride]!;
    let r5 = data[offset + 5 * stride]!;
    let r6 = data[offset + 6 * stride]!;
    let r7 = data[offset + 7 * stride]!;
    let i = 8;
    for (; i < n - (n % 8); i += 8) {
      const o = offset + i * stride;
      r0 += data[o]!;
      r1 += data[o + stride]!;
      r2 += data[o + 2 * stride]!;
      r3 += data[o + 3 * stride]!;
      r4 += data[o + 4 * stride]!;
      r5 += data[o + 5 * stride]!;
      r6 += data[o + 6 * stride]!;
      r7 += data[o + 7 * stride]!;
    }
    let res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
    for (; i < n; i++) res += data[offset + i * stride]!;
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwise(data, offset, n2, stride) + pairwise(data, offset + n2 * stride, n - n2, stride);
}

/** Sum with NaN read as 0: the first value, then the rest added sequentially or pairwise. */
function nansum(v: View, pairwiseOrder: boolean): number {
  const { data, offset, stride, n } = v;
  if (n === 0) return 0;
  const at = (i: number): number => {
    const x = data[offset + i * stride]!;
    return x === x ? x : 0;
  };
  if (!pairwiseOrder || n < 9) {
    let acc = at(0);
    for (let i = 1; i < n; i++) acc += at(i);
    return acc;
  }
  let clean = true;
  for (let i = 0; i < n; i++) {
    const x = data[offset + i * stride]!;
    if (x !== x) {
      clean = false;
      break;
    }
  }
  // Without NaN the values are summed in place; otherwise on a copy with NaN read as 0.
  if (clean) return data[offset]! + pairwise(data, offset + stride, n - 1, stride);
  const tmp = new Float64Array(n - 1);
  for (let i = 1; i < n; i++) tmp[i - 1] = at(i);
  return at(0) + pairwise(tmp, 0, n - 1, 1);
}

function count(v: View): number {
  let c = 0;
  for (let i = 0; i < v.n; i++) {
    const x = v.data[v.offset + i * v.stride]!;
    if (x === x) c++;
  }
  return c;
}

function variance(v: View, pairwiseOrder: boolean): number {
  const cnt = count(v);
  const avg = nansum(v, pairwiseOrder) / cnt;
  const { data, offset, stride, n } = v;
  const sq = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const x = data[offset + i * stride]!;
    const d = x === x ? x - avg : 0;
    sq[i] = d * d;
  }
  return nansum({ data: sq, offset: 0, stride: 1, n }, pairwiseOrder) / cnt;
}

function median(v: View): number {
  const vals: number[] = [];
  for (let i = 0; i < v.n; i++) {
    const x = v.data[v.offset + i * v.stride]!;
    if (x === x) vals.push(x);
  }
  const n = vals.length;
  if (n === 0) return NaN;
  const sorted = Float64Array.from(vals).sort();
  const mid = n >> 1;
  return n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function extreme(v: View, max: boolean): number {
  let best = NaN;
  for (let i = 0; i < v.n; i++) {
    const x = v.data[v.offset + i * v.stride]!;
    if (x !== x) continue;
    if (best !== best || (max ? x > best : x < best)) best = x;
  }
  return best;
}

/** One NaN-ignoring reduction of a view. */
export function reduce(method: SeriesMethod, v: View, pairwiseOrder: boolean): number {
  switch (method) {
    case 'mean':
      return nansum(v, pairwiseOrder) / count(v);
    case 'sum':
      return nansum(v, pairwiseOrder);
    case 'count':
      return count(v);
    case 'min':
      return extreme(v, false);
    case 'max':
      return extreme(v, true);
    case 'median':
      return median(v);
    case 'var':
      return variance(v, pairwiseOrder);
    case 'std':
      return Math.sqrt(variance(v, pairwiseOrder));
  }
}

/** `rate:` methods: the reduction, then numpy.diff of consecutive results. */
export function diffInPlace(values: Float64Array): Float64Array {
  const out = new Float64Array(Math.max(values.length - 1, 0));
  for (let i = 0; i < out.length; i++) out[i] = values[i + 1]! - values[i]!;
  return out;
}
