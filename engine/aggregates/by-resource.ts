/**
 * Metrics selected through the resource index (`resource_type` + `search` of
 * `/v1/aggregates`, and the deprecated `/v1/aggregation/resource/...`):
 * metric names and wildcards resolved per resource, resources grouped by
 * attribute values and, with history, the time ranges in which each resource
 * belonged to each group. Pure: the caller reads the index.
 */
import type { ArchivePolicy } from '../archive-policy.js';
import { compileGlob } from '../glob.js';
import type { MetricRef } from '../../formats/operations-nodes.js';
import type { SeriesRef } from './task.js';

/** A resource and its named metrics (name -> metric id). */
export interface ResourceMetrics {
  id: string;
  metrics: ReadonlyMap<string, string>;
}

export interface ResolvedMetric {
  id: string;
  policy: ArchivePolicy;
}

/** A half-open time range `[from, to)` in microseconds; bounds may be infinite. */
export type Interval = readonly [from: number, to: number];

/**
 * Gnocchi's `_get_measures_by_name`: for each resource in order, for each
 * `(wildcard, aggregation)`, every metric of the resource whose name matches
 * (shell-style, compiled safely by `compileGlob`). The lookup key is the
 * wildcard as written, the reported name the metric's name. Empty when
 * nothing matches.
 */
export function referencesByName(
  resources: Iterable<ResourceMetrics>,
  wildcards: readonly MetricRef[],
  resolve: (metricId: string) => ResolvedMetric | undefined,
  intervalsOf?: (resourceId: string) => readonly Interval[] | undefined,
): SeriesRef[] {
  const match = nameMatcher(wildcards);
  const refs: SeriesRef[] = [];
  for (const r of resources) refs.push(...match(r, resolve, intervalsOf?.(r.id)));
  return refs;
}

/** The wildcards compiled once: the references of one resource, as {@link referencesByName} lists them. */
export function nameMatcher(
  wildcards: readonly MetricRef[],
): (resource: ResourceMetrics, resolve: (metricId: string) => ResolvedMetric | undefined, intervals?: readonly Interval[]) => SeriesRef[] {
  const patterns = wildcards.map((w) => ({ ...w, re: compileGlob(w.name) }));
  return (r, resolve, intervals) => {
    const refs: SeriesRef[] = [];
    for (const w of patterns) {
      for (const [name, metricId] of r.metrics) {
        if (!w.re.test(name)) continue;
        const metric = resolve(metricId);
        if (metric === undefined) continue;
        refs.push({
          metricId: metric.id,
          policy: metric.policy,
          aggregation: w.aggregation,
          key: [w.name, w.aggregation],
          name,
          resourceId: r.id,
          ...(intervals === undefined ? {} : { intervals }),
        });
      }
    }
    return refs;
  };
}

/** The sorted unique names of the wildcards: the detail of "Metrics not found". */
export function wildcardNames(wildcards: readonly MetricRef[]): string[] {
  return [...new Set(wildcards.map((w) => w.name))].sort();
}

export type GroupValue = string | number | boolean | null;

export interface Group<T> {
  /** One value per groupby attribute, in the attributes' order. */
  values: GroupValue[];
  members: T[];
}

const keyOf = (values: readonly GroupValue[]): string => JSON.stringify(values);

/** `itertools.groupby` over items already sorted by the group attributes: runs of equal values, as they complete. */
export function* consecutiveRuns<T>(items: Iterable<T>, valuesOf: (item: T) => GroupValue[]): Generator<Group<T>> {
  let current: Group<T> | undefined;
  let last: string | undefined;
  for (const item of items) {
    const values = valuesOf(item);
    const key = keyOf(values);
    if (current === undefined || key !== last) {
      if (current !== undefined) yield current;
      current = { values, members: [] };
      last = key;
    }
    current.members.push(item);
  }
  if (current !== undefined) yield current;
}

/** {@link consecutiveRuns} over items read a page at a time: a run may span pages. */
export async function* consecutivePageRuns<T>(pages: AsyncIterable<readonly T[]>, valuesOf: (item: T) => GroupValue[]): AsyncGenerator<Group<T>> {
  // A page's last run may go on in the next page: held until a run of other values starts.
  let pending: Group<T> | undefined;
  for await (const page of pages) {
    for (const run of consecutiveRuns(page, valuesOf)) {
      if (pending !== undefined && keyOf(pending.values) === keyOf(run.values)) {
        pending.members.push(...run.members);
        continue;
      }
      if (pending !== undefined) yield pending;
      pending = run;
    }
  }
  if (pending !== undefined) yield pending;
}

/** {@link consecutiveRuns}, all at once. */
export function groupConsecutive<T>(items: readonly T[], valuesOf: (item: T) => GroupValue[]): Group<T>[] {
  return [...consecutiveRuns(items, valuesOf)];
}

/** Ascending, nulls last: the order the search sorts group attributes in. */
export function compareGroupValues(a: readonly GroupValue[], b: readonly GroupValue[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? null;
    const y = b[i] ?? null;
    if (x === y) continue;
    if (x === null) return 1;
    if (y === null) return -1;
    return x < y ? -1 : 1;
  }
  return 0;
}

/** A revision of a resource as the history grouping needs it. */
export interface RevisionSpan {
  id: string;
  revisionStart: number;
  /** null for the current revision. */
  revisionEnd: number | null;
}

export interface HistoryGroup<T> {
  values: GroupValue[];
  /** The revisions that put a resource in this group, in input order. */
  revisions: T[];
  /** Per resource id: the merged time ranges it spent in this group. */
  intervals: Map<string, Interval[]>;
}

export interface Window {
  start?: number;
  stop?: number;
}

/** Sorts and merges overlapping or touching ranges. */
export function mergeIntervals(intervals: readonly Interval[]): Interval[] {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [from, to] of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && from <= last[1]) last[1] = Math.max(last[1], to);
    else out.push([from, to]);
  }
  return out;
}

/**
 * Grouping with `use_history`: each matching revision puts its resource in
 * the group of the revision's attribute values for `[revision_start,
 * revision_end)`, so that a measure counts in the group the resource was in
 * at the measure's time. The first revision of a resource also covers all
 * time before it (measures older than the resource), the current one all
 * time after. Revisions outside the window are left out; groups come in the
 * order of their values (ascending, nulls last).
 */
export function historyGroups<T extends RevisionSpan>(
  revisions: readonly T[],
  valuesOf: (revision: T) => GroupValue[],
  isFirst: (revision: T) => boolean,
  window: Window,
): HistoryGroup<T>[] {
  const byKey = new Map<string, HistoryGroup<T>>();
  for (const r of revisions) {
    const from = isFirst(r) ? -Infinity : r.revisionStart;
    const to = r.revisionEnd ?? Infinity;
    if (window.stop !== undefined && from >= window.stop) continue;
    if (window.start !== undefined && to <= window.start) continue;
    if (to <= from) continue;
    const values = valuesOf(r);
    const key = keyOf(values);
    let group = byKey.get(key);
    if (group === undefined) {
      group = { values, revisions: [], intervals: new Map() };
      byKey.set(key, group);
    }
    group.revisions.push(r);
    const list = group.intervals.get(r.id);
    if (list === undefined) group.intervals.set(r.id, [[from, to]]);
    else list.push([from, to]);
  }
  const groups = [...byKey.values()].sort((a, b) => compareGroupValues(a.values, b.values));
  for (const g of groups) for (const [id, list] of g.intervals) g.intervals.set(id, mergeIntervals(list));
  return groups;
}
