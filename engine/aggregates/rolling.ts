/**
 * Gnocchi's `rolling`: numpy's nan-reduction of every window of `window`
 * consecutive values (an `as_strided` view, reduced along its contiguous
 * axis), bit-identical to {@link reduce} applied window by window, but with
 * the per-window work cut to what the numpy order needs:
 *
 * - NaN counts come from a prefix count, so `count` is O(1) per window and
 *   sums read a column copy with NaN already replaced by 0 (as nansum does);
 * - sums keep numpy's order (first value, then the pairwise sum of the rest:
 *   8 strided accumulators up to 128 values), which no running sum
 *   reproduces, in a tight loop without copies or closures;
 * - min/max use a monotonic deque (the earliest of equal extremes wins, as
 *   the linear scan's strict comparison does);
 * - median keeps the window's non-NaN values sorted (typed-array order, -0
 *   before +0) with one insertion and one removal per step;
 * - var/std sum the squared deviations in that same order as they are computed.
 */
import type { SeriesMethod } from '../../formats/operations-nodes.js';
import { pairwise } from './reduce.js';

/** nanCount[i] = NaNs among column[0..i). */
function nanPrefix(column: Float64Array): Int32Array {
  const out = new Int32Array(column.length + 1);
  let c = 0;
  for (let i = 0; i < column.length; i++) {
    const x = column[i]!;
    if (x !== x) c++;
    out[i + 1] = c;
  }
  return out;
}

/** The column with NaN read as 0, or the column itself when it has none. */
function zeroed(column: Float64Array, nans: Int32Array): Float64Array {
  if (nans[column.length] === 0) return column;
  const out = new Float64Array(column.length);
  for (let i = 0; i < column.length; i++) {
    const x = column[i]!;
    out[i] = x === x ? x : 0;
  }
  return out;
}

/** nansum of data[from, from + n) with no NaN in it, in numpy's order (pairwise when `n >= 9`). */
function orderedSum(data: Float64Array, from: number, n: number): number {
  if (n === 0) return 0;
  if (n < 9) {
    let acc = data[from]!;
    for (let i = from + 1; i < from + n; i++) acc += data[i]!;
    return acc;
  }
  return data[from]! + (n <= 129 ? blockSum(data, from + 1, n - 1) : pairwise(data, from + 1, n - 1, 1));
}

/** numpy's pairwise sum of 8 to 128 contiguous values: 8 accumulators, then the tail in order. */
function blockSum(data: Float64Array, from: number, n: number): number {
  let r0 = data[from]!;
  let r1 = data[from + 1]!;
  let r2 = data[from + 2]!;
  let r3 = data[from + 3]!;
  let r4 = data[from + 4]!;
  let r5 = data[from + 5]!;
  let r6 = data[from + 6]!;
  let r7 = data[from + 7]!;
  const blocks = from + n - (n % 8);
  let i = from + 8;
  for (; i < blocks; i += 8) {
    r0 += data[i]!;
    r1 += data[i + 1]!;
    r2 += data[i + 2]!;
    r3 += data[i + 3]!;
    r4 += data[i + 4]!;
    r5 += data[i + 5]!;
    r6 += data[i + 6]!;
    r7 += data[i + 7]!;
  }
  let res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
  for (; i < from + n; i++) res += data[i]!;
  return res;
}

/** Below 9 values mean/sum/count add the non-NaN values in order from 0 (the short-window loop). */
function shortSums(column: Float64Array, window: number, base: 'mean' | 'sum' | 'count', out: Float64Array): void {
  for (let r = 0; r < out.length; r++) {
    let sum = 0;
    let cnt = 0;
    for (let i = r; i < r + window; i++) {
      const x = column[i]!;
      if (x === x) {
        sum += x;
        cnt++;
      }
    }
    out[r] = base === 'sum' ? sum : base === 'count' ? cnt : sum / cnt;
  }
}

function sums(column: Float64Array, window: number, base: 'mean' | 'sum' | 'count', out: Float64Array): void {
  const nans = nanPrefix(column);
  if (base === 'count') {
    for (let r = 0; r < out.length; r++) out[r] = window - (nans[r + window]! - nans[r]!);
    return;
  }
  const data = zeroed(column, nans);
  for (let r = 0; r < out.length; r++) {
    const sum = orderedSum(data, r, window);
    out[r] = base === 'sum' ? sum : sum / (window - (nans[r + window]! - nans[r]!));
  }
}

function extremes(column: Float64Array, window: number, max: boolean, out: Float64Array): void {
  // Indices of non-NaN values, their values strictly improving from the back.
  const deque = new Int32Array(column.length);
  let head = 0;
  let tail = 0;
  for (let i = 0; i < column.length; i++) {
    const x = column[i]!;
    if (x === x) {
      while (tail > head && (max ? column[deque[tail - 1]!]! < x : column[deque[tail - 1]!]! > x)) tail--;
      deque[tail++] = i;
    }
    const r = i - window + 1;
    if (r < 0) continue;
    while (tail > head && deque[head]! < r) head++;
    out[r] = tail > head ? column[deque[head]!]! : NaN;
  }
}

/** Typed-array sort order: ascending, -0 before +0. */
function before(a: number, b: number): boolean {
  return a < b || (a === 0 && b === 0 && 1 / a < 1 / b);
}

/** Index of the first element of sorted[0, n) not before `x`. */
function lowerIndex(sorted: Float64Array, n: number, x: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (before(sorted[mid]!, x)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function medians(column: Float64Array, window: number, out: Float64Array): void {
  const sorted = new Float64Array(window);
  let n = 0;
  for (let i = 0; i < column.length; i++) {
    const x = column[i]!;
    if (x === x) {
      const at = lowerIndex(sorted, n, x);
      sorted.copyWithin(at + 1, at, n);
      sorted[at] = x;
      n++;
    }
    const r = i - window + 1;
    if (r < 0) continue;
    if (n === 0) out[r] = NaN;
    else {
      const mid = n >> 1;
      out[r] = n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
    }
    const leaving = column[r]!;
    if (leaving === leaving) {
      // Equal values (same sign of zero) are interchangeable: remove any one.
      const at = lowerIndex(sorted, n, leaving);
      sorted.copyWithin(at, at + 1, n);
      n--;
    }
  }
}

/** (x - avg)², NaN read as 0 both before (a NaN value) and after (e.g. inf - inf), as variance() does. */
function deviation(x: number, avg: number): number {
  const d = x === x ? x - avg : 0;
  const s = d * d;
  return s === s ? s : 0;
}

/** orderedSum of the squared deviations of column[from, from + n), without storing them. */
function deviationSum(column: Float64Array, from: number, n: number, avg: number): number {
  if (n < 9 || n > 129) {
    let acc = deviation(column[from]!, avg);
    if (n < 9) {
      for (let i = from + 1; i < from + n; i++) acc += deviation(column[i]!, avg);
      return acc;
    }
    const sq = new Float64Array(n - 1);
    for (let i = 1; i < n; i++) sq[i - 1] = deviation(column[from + i]!, avg);
    return acc + pairwise(sq, 0, n - 1, 1);
  }
  const start = from + 1;
  const m = n - 1;
  let r0 = deviation(column[start]!, avg);
  let r1 = deviation(column[start + 1]!, avg);
  let r2 = deviation(column[start + 2]!, avg);
  let r3 = deviation(column[start + 3]!, avg);
  let r4 = deviation(column[start + 4]!, avg);
  let r5 = deviation(column[start + 5]!, avg);
  let r6 = deviation(column[start + 6]!, avg);
  let r7 = deviation(column[start + 7]!, avg);
  const blocks = start + m - (m % 8);
  let i = start + 8;
  for (; i < blocks; i += 8) {
    r0 += deviation(column[i]!, avg);
    r1 += deviation(column[i + 1]!, avg);
    r2 += deviation(column[i + 2]!, avg);
    r3 += deviation(column[i + 3]!, avg);
    r4 += deviation(column[i + 4]!, avg);
    r5 += deviation(column[i + 5]!, avg);
    r6 += deviation(column[i + 6]!, avg);
    r7 += deviation(column[i + 7]!, avg);
  }
  let res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
  for (; i < start + m; i++) res += deviation(column[i]!, avg);
  return deviation(column[from]!, avg) + res;
}

function variances(column: Float64Array, window: number, std: boolean, out: Float64Array): void {
  const nans = nanPrefix(column);
  const data = zeroed(column, nans);
  for (let r = 0; r < out.length; r++) {
    const cnt = window - (nans[r + window]! - nans[r]!);
    const v = deviationSum(column, r, window, orderedSum(data, r, window) / cnt) / cnt;
    out[r] = std ? Math.sqrt(v) : v;
  }
}

/** The `method` reduction of every window of `window` values (window <= column.length). */
export function rollingReduce(column: Float64Array, window: number, method: SeriesMethod): Float64Array {
  const out = new Float64Array(Math.max(column.length - window + 1, 0));
  if (out.length === 0) return out;
  switch (method) {
    case 'mean':
    case 'sum':
    case 'count':
      if (window < 9) shortSums(column, window, method, out);
      else sums(column, window, method, out);
      break;
    case 'min':
    case 'max':
      extremes(column, window, method === 'max', out);
      break;
    case 'median':
      medians(column, window, out);
      break;
    case 'var':
    case 'std':
      variances(column, window, method === 'std', out);
      break;
  }
  return out;
}
