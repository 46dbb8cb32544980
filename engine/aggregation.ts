// Aggregation maths of the engine, reproducing Gnocchi 4.4's carbonara.py
// (GroupedTimeSeries, AggregatedTimeSerie) and calendar.py bit for bit.
// Timestamps and durations are integer microseconds since the Unix epoch.

import { freshFloat64, type Float64Alloc } from './scratch.js';

/** Sorted ascending, unique timestamps; values[i] belongs to timestamps[i]. */
export interface Series {
  timestamps: Float64Array;
  values: Float64Array;
}

export type CalendarGroup = 'Y' | 'H' | 'Q' | 'M' | 'W';

/** A fixed granularity in microseconds, or a calendar grouping. */
export type Grouping = number | CalendarGroup;

export type BaseMethod =
  | 'mean' | 'sum' | 'last' | 'max' | 'min' | 'std' | 'median' | 'first' | 'count' | 'quantile';

export interface AggregationMethod {
  /** As given, e.g. `rate:95pct`. */
  readonly name: string;
  readonly base: BaseMethod;
  /** Percentile (1..99) when base is `quantile`. */
  readonly q?: number;
  readonly rate: boolean;
}

/**
 * One row per group key; `columns[m][row]` holds method m's value where
 * `present[m][row]` is 1 (absent cells are NaN).
 */
export interface AggregatedColumns {
  timestamps: Float64Array;
  columns: Float64Array[];
  present: Uint8Array[];
}

const DAY = 86_400_000_000;
const CALENDAR_GROUPS: ReadonlySet<string> = new Set<CalendarGroup>(['Y', 'H', 'Q', 'M', 'W']);
const NAMED_METHODS: ReadonlySet<string> = new Set<BaseMethod>([
  'mean', 'sum', 'last', 'max', 'min', 'std', 'median', 'first', 'count',
]);
const PERCENTILE = /^([1-9][0-9]?)pct$/;
const MONTHS_PER_GROUP: Readonly<Record<Exclude<CalendarGroup, 'W'>, number>> = { Y: 12, H: 6, Q: 3, M: 1 };

export function isCalendarGroup(s: string): s is CalendarGroup {
  return CALENDAR_GROUPS.has(s);
}

/**
 * Accepts exactly Gnocchi's archive-policy method names (the nine named
 * methods, 1pct..99pct, each optionally prefixed by `rate:`).
 */
export function parseMethod(name: string): AggregationMethod | null {
  const rate = name.startsWith('rate:');
  const bare = rate ? name.slice(5) : name;
  const pct = PERCENTILE.exec(bare);
  if (pct) return { name, base: 'quantile', q: Number(pct[1]), rate };
  if (NAMED_METHODS.has(bare)) return { name, base: bare as BaseMethod, rate };
  return null;
}

/**
 * Floors `ts` to a multiple of `granularity`. Gnocchi divides nanosecond
 * counts as float64, so at sub-second granularities a point lying exactly on
 * a boundary can land in the previous bucket; the same double division is
 * done here so bucket assignment stays identical.
 */
export function roundTimestamp(ts: number, granularity: number): number {
  return Math.floor((ts * 1000) / (granularity * 1000)) * granularity;
}

function floorTo(value: number, unit: number): number {
  return value - (((value % unit) + unit) % unit);
}

// Date.UTC maps years 0..99 to 1900..1999; setUTCFullYear does not.
function utcMonthStart(year: number, month: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month, 1);
  return d.getTime() * 1000;
}

/** The timestamp a calendar group is keyed on, as calendar.GROUPINGS computes it. */
export function calendarGroupStart(ts: number, group: CalendarGroup): number {
  const midnight = floorTo(ts, DAY);
  if (group === 'W') {
    // numpy weeks are Thursday-aligned (1970-01-01 was a Thursday); calendar.py
    // shifts by 4 days around the cast so weeks start on Sunday.
    return floorTo(midnight + 4 * DAY, 7 * DAY) - 4 * DAY;
  }
  const date = new Date(midnight / 1000);
  const month = date.getUTCMonth();
  return utcMonthStart(date.getUTCFullYear(), month - (month % MONTHS_PER_GROUP[group]));
}

function calendarGroupEnd(groupStart: number, group: CalendarGroup): number {
  if (group === 'W') return groupStart + 7 * DAY;
  const date = new Date(groupStart / 1000);
  return utcMonthStart(date.getUTCFullYear(), date.getUTCMonth() + MONTHS_PER_GROUP[group]);
}

type KeyOf = (ts: number) => number;

const MAX_FIXED_KEYS = 64;

/** A fixed granularity's key function, made once: aggregateMany asks for one per granularity of every metric update. */
const fixedKeys = new Map<number, KeyOf>();

function keyFunction(grouping: Grouping): KeyOf {
  if (typeof grouping === 'number') {
    let keyOf = fixedKeys.get(grouping);
    if (keyOf !== undefined) return keyOf;
    if (!(grouping > 0) || !Number.isFinite(grouping)) {
      throw new RangeError(`Invalid granularity: ${grouping}`);
    }
    keyOf = (ts) => roundTimestamp(ts, grouping);
    // Queries may ask for any granularity: a bounded few kept.
    if (fixedKeys.size < MAX_FIXED_KEYS) fixedKeys.set(grouping, keyOf);
    return keyOf;
  }
  if (!isCalendarGroup(grouping)) throw new RangeError(`Invalid calendar grouping: ${String(grouping)}`);
  // Input is sorted, so caching the current group's span makes the date
  // arithmetic run once per group instead of once per point.
  let lo = Infinity;
  let hi = -Infinity;
  return (ts) => {
    if (ts < lo || ts >= hi) {
      lo = calendarGroupStart(ts, grouping);
      hi = calendarGroupEnd(lo, grouping);
    }
    return lo;
  };
}

/** Contiguous groups: group g (of keys.length) spans values[bounds[g], bounds[g + 1]). */
interface Groups {
  keys: Float64Array;
  /** Past keys.length + 1, what follows is unused (no view cut to size: groups are made per granularity of every metric update). */
  bounds: Uint32Array;
  values: Float64Array;
  sorted?: Float64Array;
}

/** How many groups sorted `timestamps` make. */
function groupCount(timestamps: Float64Array, keyOf: KeyOf): number {
  let count = 0;
  let previous = NaN;
  for (let i = 0; i < timestamps.length; i++) {
    const key = keyOf(timestamps[i]!);
    if (key !== previous) {
      count++;
      previous = key;
    }
  }
  return count;
}

/**
 * Bounds arrays for the plain and the derived groups of one aggregateMany
 * call, reused by the next: a Uint32Array per granularity of every metric
 * update was a fifth of what aggregating one allocated.
 */
class Bounds {
  private array = new Uint32Array(64);

  /** An array of at least `n` (the previous one's contents lost). */
  readonly take = (n: number): Uint32Array => {
    if (this.array.length < n) this.array = new Uint32Array(Math.max(n, 2 * this.array.length));
    return this.array;
  };
}

const plainBounds = new Bounds();
const derivedBounds = new Bounds();

/**
 * Sorted timestamps' groups, counted first so that their keys take
 * exactly their number from `alloc` (no view cut to size afterwards);
 * their bounds from `bounds`.
 */
function group(timestamps: Float64Array, values: Float64Array, keyOf: KeyOf, alloc: Float64Alloc, bounds: Bounds): Groups {
  const n = timestamps.length;
  const count = groupCount(timestamps, keyOf);
  const keys = alloc(count);
  const starts = bounds.take(count + 1);
  let g = 0;
  let previous = NaN;
  for (let i = 0; i < n; i++) {
    const key = keyOf(timestamps[i]!);
    if (key !== previous) {
      keys[g] = key;
      starts[g] = i;
      g++;
      previous = key;
    }
  }
  starts[count] = n;
  return { keys, bounds: starts, values };
}

// Values sorted within each group (NaN last, like numpy.lexsort), shared by
// median and every percentile of the same grouping.
function sortedWithinGroups(groups: Groups): Float64Array {
  if (groups.sorted) return groups.sorted;
  const sorted = groups.values.slice();
  const { keys, bounds } = groups;
  for (let g = 0; g < keys.length; g++) {
    const lo = bounds[g]!;
    const hi = bounds[g + 1]!;
    if (hi - lo === 2) {
      const a = sorted[lo]!;
      const b = sorted[lo + 1]!;
      if (a > b || (a !== a && b === b)) {
        sorted[lo] = b;
        sorted[lo + 1] = a;
      }
    } else if (hi - lo > 2) {
      sorted.subarray(lo, hi).sort();
    }
  }
  groups.sorted = sorted;
  return sorted;
}

function groupSum(v: Float64Array, lo: number, hi: number): number {
  // numpy.bincount accumulates sequentially from 0.0, so must we.
  let sum = 0;
  for (let i = lo; i < hi; i++) sum += v[i]!;
  return sum;
}

function maxOf(v: Float64Array, lo: number, hi: number): number {
  // Gnocchi takes the last element of an argsort, where NaN sorts last.
  let max = v[lo]!;
  for (let i = lo + 1; i < hi; i++) {
    const x = v[i]!;
    if (x > max || x !== x) max = x;
  }
  return max;
}

function minOf(v: Float64Array, lo: number, hi: number): number {
  // The first element of the same argsort: NaN only if the group is all NaN.
  let min = v[lo]!;
  for (let i = lo + 1; i < hi; i++) {
    const x = v[i]!;
    if (x < min || min !== min) min = x;
  }
  return min;
}

function stdOf(v: Float64Array, lo: number, hi: number): number {
  const n = hi - lo;
  const mean = groupSum(v, lo, hi) / n;
  let squares = 0;
  for (let i = lo; i < hi; i++) {
    const d = v[i]! - mean;
    squares += d * d;
  }
  return Math.sqrt(squares / (n - 1));
}

/**
 * Fills `column` (and `mask`) with `method`'s value of each group that has
 * at least `minCount` points; group g's row is `rowOf[g]`, or g without it;
 * how many rows got a value. In one loop, without a function value per
 * method or per group: a double returned through a closure call is boxed,
 * and an update makes a group per row per method (time-major: six methods
 * of a few rows, per metric and batch). The helpers called are small
 * enough for V8 to inline.
 */
function fillColumn(method: AggregationMethod, groups: Groups, rowOf: Uint32Array | null, minCount: number, column: Float64Array, mask: Uint8Array): number {
  const { keys, bounds, values: v } = groups;
  const base = method.base;
  if (base === 'quantile' && method.q === undefined) throw new RangeError(`Quantile method without q: ${method.name}`);
  const fraction = (method.q ?? 0) / 100;
  const sorted = base === 'median' || base === 'quantile' ? sortedWithinGroups(groups) : v;
  let filled = 0;
  for (let g = 0; g < keys.length; g++) {
    const lo = bounds[g]!;
    const hi = bounds[g + 1]!;
    const n = hi - lo;
    if (n < minCount) continue;
    let x: number;
    switch (base) {
      case 'sum':
        x = groupSum(v, lo, hi);
        break;
      case 'mean':
        x = groupSum(v, lo, hi) / n;
        break;
      case 'first':
        x = v[lo]!;
        break;
      case 'last':
        x = v[hi - 1]!;
        break;
      case 'count':
        x = n;
        break;
      case 'max':
        x = maxOf(v, lo, hi);
        break;
      case 'min':
        x = minOf(v, lo, hi);
        break;
      case 'std':
        x = stdOf(v, lo, hi);
        break;
      case 'median': {
        // Averaged even for odd counts, as Gnocchi does: (x + x) / 2 overflows
        // to Infinity for |x| > MAX_VALUE / 2.
        const floor = hi - 1 - Math.floor(n / 2);
        x = (sorted[floor]! + sorted[floor + (n % 2 === 0 ? 1 : 0)]!) / 2;
        break;
      }
      case 'quantile': {
        // Positions are offsets into the whole grouped array, not the group:
        // Gnocchi adds the group's start index before flooring, which changes
        // the interpolation weights' rounding.
        const position = lo + (n - 1) * fraction;
        const floor = Math.floor(position);
        const ceil = Math.ceil(position);
        x = floor === ceil ? sorted[floor]! : sorted[floor]! * (ceil - position) + sorted[ceil]! * (position - floor);
        break;
      }
    }
    const row = rowOf === null ? g : rowOf[g]!;
    column[row] = x;
    mask[row] = 1;
    filled++;
  }
  return filled;
}

/** Where each of `keys` sits in `rowKeys` (a superset, both ascending). */
function rowsOf(keys: Float64Array, rowKeys: Float64Array): Uint32Array {
  const rows = new Uint32Array(keys.length);
  for (let g = 0, row = 0; g < keys.length; g++, row++) {
    while (rowKeys[row] !== keys[g]) row++;
    rows[g] = row;
  }
  return rows;
}

/** Index of the first element >= target in an ascending array (numpy's searchsorted, side left). */
export function lowerBound(sorted: Float64Array, target: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Gnocchi's `derived()`: diffs of consecutive raw points, stamped at the later
 * point. The previous point may predate `start` by up to one granularity,
 * so the first point at/after `start` gets a rate only if such a point exists.
 */
function derivedGroups(series: Series, granularity: number, firstIndex: number, keyOf: KeyOf, start?: number): Groups {
  const { timestamps, values } = series;
  const deriveFrom = start === undefined ? 0 : lowerBound(timestamps, start - granularity);
  const from = Math.max(deriveFrom + 1, firstIndex);
  const diffs = new Float64Array(Math.max(timestamps.length - from, 0));
  for (let i = 0; i < diffs.length; i++) diffs[i] = values[from + i]! - values[from + i - 1]!;
  return group(timestamps.subarray(from), diffs, keyOf, freshFloat64, derivedBounds);
}

/**
 * Groups `series` once (points with timestamp >= `start` when given) and
 * applies every method, as Gnocchi's GroupedTimeSeries followed by
 * AggregatedTimeSerie.from_grouped_serie for each method. Rows are the union
 * of all methods' group keys. The timestamps and columns may be taken from
 * `alloc` (processing's scratch: views into memory already off the heap,
 * which the raw split encoders copy as bytes without moving each small
 * array out of the heap first).
 */
export function aggregateMany(
  series: Series,
  grouping: Grouping,
  methods: readonly AggregationMethod[],
  start?: number,
  alloc: Float64Alloc = freshFloat64,
): AggregatedColumns {
  const keyOf = keyFunction(grouping);
  // Loops, not some(): this runs per granularity of every metric update.
  let wantsRate = false;
  let wantsPlain = false;
  for (const m of methods) {
    if (m.rate) wantsRate = true;
    else wantsPlain = true;
  }
  if (wantsRate && typeof grouping !== 'number') {
    throw new TypeError('Cannot derive aggregates on calendar granularities.');
  }
  const { timestamps, values } = series;
  const firstIndex = start === undefined ? 0 : lowerBound(timestamps, start);
  const fromFirst = firstIndex === 0 ? timestamps : timestamps.subarray(firstIndex);
  const plain = wantsPlain
    ? group(fromFirst, firstIndex === 0 ? values : values.subarray(firstIndex), keyOf, alloc, plainBounds)
    : undefined;
  const derived = wantsRate
    ? derivedGroups(series, grouping as number, firstIndex, keyOf, start)
    : undefined;
  // Every derived point is stamped at a raw point >= start, so derived keys
  // are a subset of the plain keys and the plain keys are already the union.
  const rowKeys = (plain ?? derived)?.keys ?? new Float64Array(0);
  const rows = rowKeys.length;

  const derivedRows = derived === undefined || derived === plain || plain === undefined ? null : rowsOf(derived.keys, rowKeys);
  const columns: Float64Array[] = new Array(methods.length);
  const present: Uint8Array[] = new Array(methods.length);
  // The columns with a value in every row share one mask (not to be written to): most do.
  let full: Uint8Array | undefined;
  let mask: Uint8Array | undefined;
  for (let m = 0; m < methods.length; m++) {
    const method = methods[m]!;
    const groups = (method.rate ? derived : plain)!;
    const column = alloc(rows).fill(NaN);
    mask ??= new Uint8Array(rows);
    if (fillColumn(method, groups, method.rate ? derivedRows : null, method.base === 'std' ? 2 : 1, column, mask) === rows) {
      present[m] = full ??= mask;
      // Filled in full like the shared one: cleared for the next method.
      if (full === mask) mask = undefined;
      else mask.fill(0);
    } else {
      present[m] = mask;
      mask = undefined;
    }
    columns[m] = column;
  }
  const result = { timestamps: rowKeys, columns, present };
  return full === undefined ? dropEmptyRows(result, alloc) : result;
}

// A group can end up with no value at all, e.g. a single point under `std` only.
function dropEmptyRows(result: AggregatedColumns, alloc: Float64Alloc): AggregatedColumns {
  const { timestamps, columns, present } = result;
  const rows = timestamps.length;
  const keep = new Uint8Array(rows);
  for (const mask of present) {
    for (let row = 0; row < rows; row++) keep[row] |= mask[row]!;
  }
  let kept = 0;
  for (let row = 0; row < rows; row++) kept += keep[row]!;
  if (kept === rows) return result;
  const pick = <T extends Float64Array | Uint8Array>(source: T, target: T): T => {
    for (let row = 0, i = 0; row < rows; row++) {
      if (keep[row]) target[i++] = source[row]!;
    }
    return target;
  };
  return {
    timestamps: pick(timestamps, alloc(kept)),
    columns: columns.map((c) => pick(c, alloc(kept))),
    present: present.map((p) => pick(p, new Uint8Array(kept))),
  };
}

/** One method over `series`, keeping only groups that have a value. */
export function aggregate(series: Series, grouping: Grouping, method: AggregationMethod, start?: number): Series {
  const { timestamps, columns } = aggregateMany(series, grouping, [method], start);
  return { timestamps, values: columns[0]! };
}

/**
 * Re-aggregates an aggregated series to a coarser grouping, as
 * AggregatedTimeSerie.resample does: the stored method is applied again, so
 * a `rate:` method derives the already-derived values a second time.
 */
export function resample(series: Series, grouping: Grouping, method: AggregationMethod): Series {
  return aggregate(series, grouping, method);
}
