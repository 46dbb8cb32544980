/**
 * The pure half of processing one metric: merge newly received measures into
 * the raw back-window tail and recompute the aggregates of every period they
 * touch, as Gnocchi's `add_measures_to_metrics` does. No I/O here; the
 * caller loads the tail and stores what this returns.
 */
import type { ArchivePolicy } from './archive-policy.js';
import { aggregateMany, lowerBound, parseMethod, roundTimestamp, type AggregatedColumns, type AggregationMethod, type Series } from './aggregation.js';
import { freshFloat64, type Float64Alloc } from './scratch.js';
import { isFullMask, sliceSplit, splitKeyOf, type SplitColumns } from './split.js';

export interface GranularityUpdate {
  granularity: number;
  /** Recomputed rows, grouped by split key (ascending). */
  splits: { key: number; rows: SplitColumns }[];
  /** Splits with a key below this hold only expired points: delete them. */
  deleteBefore: number | null;
}

export interface MetricUpdate {
  tail: Series;
  /** The oldest raw point this update added or replaced: the tail is unchanged before it. */
  firstChanged: number;
  granularities: GranularityUpdate[];
  /** Measures that were aggregated (after dropping those too old). */
  accepted: number;
}

const methodCache = new Map<string, AggregationMethod[]>();

export function policyMethods(policy: ArchivePolicy): AggregationMethod[] {
  const cacheKey = policy.aggregationMethods.join(',');
  let methods = methodCache.get(cacheKey);
  if (methods === undefined) {
    methods = policy.aggregationMethods.map((name) => {
      const m = parseMethod(name);
      if (m === null) throw new Error(`Unknown aggregation method ${name}`);
      return m;
    });
    methodCache.set(cacheKey, methods);
  }
  return methods;
}

/** What an update needs of its policy, worked out once per policy object rather than per metric update. */
interface PolicyPlan {
  methods: AggregationMethod[];
  /** The largest granularity: the tail keeps whole blocks of it. */
  blockSize: number;
  backWindow: number;
  /** The definition, finest granularity first. */
  items: ArchivePolicy['definition'];
}

/** Policies are replaced, never changed in place (index updatePolicy), and a batch's jobs share theirs. */
const plans = new WeakMap<ArchivePolicy, PolicyPlan>();

function planOf(policy: ArchivePolicy): PolicyPlan {
  let plan = plans.get(policy);
  if (plan === undefined) {
    plan = {
      methods: policyMethods(policy),
      blockSize: Math.max(...policy.definition.map((d) => d.granularity)),
      backWindow: rawBackWindow(policy),
      items: [...policy.definition].sort((a, b) => a.granularity - b.granularity),
    };
    plans.set(policy, plan);
  }
  return plan;
}

/** A granularity update's splits when it has none (never added to). */
const NO_SPLITS: GranularityUpdate['splits'] = [];

/** Points sorted by insertion up to this many. */
const SMALL_SORT = 32;

function strictlyIncreasing(ts: Float64Array): boolean {
  for (let i = 1; i < ts.length; i++) if (!(ts[i]! > ts[i - 1]!)) return false;
  return true;
}

/**
 * Measures of one or more pushes back to back, in arrival order: push k
 * holds the points from `ends[k - 1]` (0 for the first) to `ends[k]`.
 */
export interface Received {
  points: Series;
  ends: ArrayLike<number>;
}

/** `batches` as one push each, in this order (for callers that hold them apart). */
export function receivedOf(batches: Series[], alloc: Float64Alloc = freshFloat64): Received {
  if (batches.length === 1) return { points: batches[0]!, ends: [batches[0]!.timestamps.length] };
  let n = 0;
  for (const b of batches) n += b.timestamps.length;
  const timestamps = alloc(n);
  const values = alloc(n);
  const ends: number[] = [];
  let o = 0;
  for (const b of batches) {
    timestamps.set(b.timestamps, o);
    values.set(b.values, o);
    o += b.timestamps.length;
    ends.push(o);
  }
  return { points: { timestamps, values }, ends };
}

/**
 * The received points sorted by timestamp, one per timestamp: of several,
 * the newest push's, and within one push the first (Gnocchi's rule: a later
 * push replaces a raw value, while one push keeps the first it gives).
 */
export function sortMeasures(received: Received, alloc: Float64Alloc = freshFloat64): Series {
  const { points, ends } = received;
  // Points already in order without repeats (the usual case) are taken as they are.
  if (strictlyIncreasing(points.timestamps)) return points;
  const runs = disjointRuns(points.timestamps, ends);
  if (runs >= 0) return concatRuns(points, ends, runs, alloc);
  const ts = points.timestamps;
  const vs = points.values;
  const n = ts.length;
  const push = new Uint32Array(n);
  for (let k = 0, i = 0; k < ends.length; k++) for (; i < ends[k]!; i++) push[i] = k;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  // The winner of each timestamp comes first: newest push, then earliest in it.
  const before = (x: number, y: number) => ts[x]! - ts[y]! || push[y]! - push[x]! || x - y;
  if (n > SMALL_SORT) order.sort(before);
  else {
    // A point per push of a few dozen pushes that overtook each other: TypedArray sort's per-call set-up outweighs it.
    for (let k = 1; k < n; k++) {
      const x = order[k]!;
      let j = k - 1;
      for (; j >= 0 && before(order[j]!, x) > 0; j--) order[j + 1] = order[j]!;
      order[j + 1] = x;
    }
  }
  const outT = alloc(n);
  const outV = alloc(n);
  let m = 0;
  for (let k = 0; k < n; k++) {
    const i = order[k]!;
    if (m > 0 && outT[m - 1] === ts[i]) continue;
    outT[m] = ts[i]!;
    outV[m] = vs[i]!;
    m++;
  }
  return { timestamps: outT.subarray(0, m), values: outV.subarray(0, m) };
}

/**
 * Where disjointRuns puts the pushes' order: one array for every update,
 * grown as needed (the backlog of a time-major metric sorts its few dozen
 * pushes on every update).
 */
let runs = new Uint32Array(64);

/**
 * When each push is strictly increasing and none overlaps another (a
 * collector's requests in flight overtaking each other: consecutive
 * stretches of a series, noted out of order), puts the pushes in timestamp
 * order into `runs` and answers how many; else -1. No timestamp then
 * repeats, so the order alone is the answer. Each push is named by its
 * index in `ends`; empty ones are left out.
 */
function disjointRuns(ts: Float64Array, ends: ArrayLike<number>): number {
  // A time-major batch holds a point per push of a few dozen pushes: no object per push, nor a splice.
  if (runs.length < ends.length) runs = new Uint32Array(Math.max(ends.length, 2 * runs.length));
  let n = 0;
  for (let k = 0, start = 0; k < ends.length; start = ends[k]!, k++) {
    const end = ends[k]!;
    if (end === start) continue;
    for (let i = start + 1; i < end; i++) if (!(ts[i]! > ts[i - 1]!)) return -1;
    // Insertion by first timestamp: a batch holds a few dozen pushes of a metric at most.
    let j = n++;
    for (; j > 0 && ts[runStart(ends, runs[j - 1]!)]! > ts[start]!; j--) runs[j] = runs[j - 1]!;
    runs[j] = k;
  }
  for (let r = 1; r < n; r++) if (!(ts[runStart(ends, runs[r]!)]! > ts[ends[runs[r - 1]!]! - 1]!)) return -1;
  return n;
}

/**
 * Runs longer than this are copied as blocks; shorter ones (time-major
 * pushes: a point or a few) element by element, where two subarray views
 * per run cost several times the copy.
 */
const LONG_RUN = 32;

function runStart(ends: ArrayLike<number>, k: number): number {
  return k === 0 ? 0 : ends[k - 1]!;
}

/** The points of the first `count` pushes of `runs`, in that order. */
function concatRuns(points: Series, ends: ArrayLike<number>, count: number, alloc: Float64Alloc): Series {
  const n = points.timestamps.length;
  const timestamps = alloc(n);
  const values = alloc(n);
  const { timestamps: ts, values: vs } = points;
  let at = 0;
  for (let r = 0; r < count; r++) {
    const k = runs[r]!;
    const start = runStart(ends, k);
    const end = ends[k]!;
    if (end - start > LONG_RUN) {
      timestamps.set(ts.subarray(start, end), at);
      values.set(vs.subarray(start, end), at);
      at += end - start;
      continue;
    }
    for (let i = start; i < end; i++, at++) {
      timestamps[at] = ts[i]!;
      values[at] = vs[i]!;
    }
  }
  return { timestamps, values };
}

/** Merges two sorted series; on equal timestamps the `first` one wins. */
function mergeKeepFirst(first: Series, second: Series, alloc: Float64Alloc): Series {
  const a = first.timestamps;
  const b = second.timestamps;
  if (a.length === 0) return second;
  if (b.length === 0) return first;
  const ts = alloc(a.length + b.length);
  const vs = alloc(a.length + b.length);
  let i = 0;
  let j = 0;
  let m = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]! <= b[j]!)) {
      if (j < b.length && a[i] === b[j]) j++;
      ts[m] = a[i]!;
      vs[m++] = first.values[i++]!;
    } else {
      ts[m] = b[j]!;
      vs[m++] = second.values[j++]!;
    }
  }
  // Without a timestamp in both (the usual case), no views of the merge are needed.
  if (m === ts.length) return { timestamps: ts, values: vs };
  return { timestamps: ts.subarray(0, m), values: vs.subarray(0, m) };
}

/**
 * The rows with a null mask for each column whose rows all hold a value, as
 * SplitColumns has it: the raw split's in-place append (mergeIntoRawSplit)
 * takes only updates without masks, and every encoder then skips the mask.
 */
function presenceOrNull(agg: AggregatedColumns): SplitColumns {
  // In place: `agg` is the update's own, and two objects per granularity of every update are saved.
  const present: (Uint8Array | null)[] = agg.present;
  let previous: Uint8Array | null = null;
  for (let c = 0; c < present.length; c++) {
    const mask = present[c]!;
    // Columns with a value in every row share their mask: checked once.
    if (mask === previous) present[c] = present[c - 1]!;
    else present[c] = isFullMask(mask) ? null : mask;
    previous = mask;
  }
  return agg;
}

/**
 * The points of `s` from `from` on, copied into arrays from `alloc`: the
 * new tail is cut from the merge on most updates, and processing's scratch
 * hands out its views again where two views per update were made.
 */
function copyFrom(s: Series, from: number, alloc: Float64Alloc): Series {
  if (from === 0) return s;
  const n = s.timestamps.length - from;
  const timestamps = alloc(n);
  const values = alloc(n);
  for (let i = 0; i < n; i++) {
    timestamps[i] = s.timestamps[from + i]!;
    values[i] = s.values[from + i]!;
  }
  return { timestamps, values };
}

function sliceSeries(s: Series, from: number): Series {
  if (from === 0) return s;
  return { timestamps: s.timestamps.subarray(from), values: s.values.subarray(from) };
}

/** Gnocchi keeps one more block of raw points when a rate method needs the previous point. */
export function rawBackWindow(policy: ArchivePolicy): number {
  return policy.backWindow + (policy.aggregationMethods.some((m) => m.startsWith('rate:')) ? 1 : 0);
}

function firstBlockTimestamp(last: number, blockSize: number, backWindow: number): number {
  return roundTimestamp(last, blockSize) - blockSize * backWindow;
}

/**
 * The update `received` makes to a metric whose raw tail is `tail`: a
 * received point replaces the tail's point of the same timestamp. Its
 * series (the new tail included) may be taken from `alloc`.
 */
export function computeUpdate(policy: ArchivePolicy, tail: Series | null, received: Received, alloc: Float64Alloc = freshFloat64): MetricUpdate | null {
  let measures = sortMeasures(received, alloc);
  if (measures.timestamps.length === 0) return null;
  const firstReceived = measures.timestamps[0]!;
  const { methods, blockSize, backWindow, items } = planOf(policy);
  if (tail !== null && tail.timestamps.length > 0) {
    const limit = firstBlockTimestamp(tail.timestamps[tail.timestamps.length - 1]!, blockSize, backWindow);
    measures = sliceSeries(measures, lowerBound(measures.timestamps, limit));
    if (measures.timestamps.length === 0) return null;
  }
  const merged = tail === null ? measures : mergeKeepFirst(measures, tail, alloc);
  const first = Math.max(merged.timestamps[0]!, firstReceived);

  const granularities: GranularityUpdate[] = new Array(items.length);
  for (let k = 0; k < items.length; k++) {
    const item = items[k]!;
    const g = item.granularity;
    const agg = presenceOrNull(aggregateMany(merged, g, methods, roundTimestamp(first, g), alloc));
    let from = 0;
    let deleteBefore: number | null = null;
    if (item.timespan !== null && agg.timestamps.length > 0) {
      const oldest = agg.timestamps[agg.timestamps.length - 1]! - item.timespan;
      // Keep points strictly after `oldest`, as carbonara's truncate does.
      from = lowerBound(agg.timestamps, oldest);
      while (from < agg.timestamps.length && agg.timestamps[from]! <= oldest) from++;
      deleteBefore = splitKeyOf(oldest, g);
    }
    let splits: GranularityUpdate['splits'] = NO_SPLITS;
    let start = from;
    while (start < agg.timestamps.length) {
      const key = splitKeyOf(agg.timestamps[start]!, g);
      let end = start + 1;
      while (end < agg.timestamps.length && splitKeyOf(agg.timestamps[end]!, g) === key) end++;
      // Usually the rows fall in one split: no views needed (subarray is
      // costly at one call per column per metric update), and an array of
      // one (a push onto an empty array reserves room for 17).
      const whole = start === 0 && end === agg.timestamps.length;
      if (whole) splits = [{ key, rows: agg }];
      else (splits === NO_SPLITS ? (splits = []) : splits).push({ key, rows: sliceSplit(agg, start, end) });
      start = end;
    }
    granularities[k] = { granularity: g, splits, deleteBefore };
  }

  const last = merged.timestamps[merged.timestamps.length - 1]!;
  const newTail = copyFrom(merged, lowerBound(merged.timestamps, firstBlockTimestamp(last, blockSize, backWindow)), alloc);
  return { tail: newTail, firstChanged: measures.timestamps[0]!, granularities, accepted: measures.timestamps.length };
}
