/**
 * Cross-metric reads over metrics selected through resources: `POST
 * /v1/aggregates` with `resource_type` + `search` (metric names and
 * wildcards, `groupby`, `use_history`). The routes file calls in here; the
 * resolution and grouping rules live in `engine/aggregates/by-resource.ts`.
 */
import type { FastifyRequest } from 'fastify';
import {
  consecutivePageRuns,
  historyGroups,
  nameMatcher,
  wildcardNames,
  type GroupValue,
  type Interval,
  type ResolvedMetric,
} from '../../engine/aggregates/by-resource.js';
import { planGranularities, type AggregatesTask, type SeriesRef } from '../../engine/aggregates/task.js';
import { metricsById } from '../../engine/drivers/index-store.js';
import type { Engine } from '../../engine/engine.js';
import { BadRequest, InvalidInput } from '../../engine/errors.js';
import { resourceUuid } from '../../engine/resource-id.js';
import { fieldKind, fieldOf } from '../../engine/resource-search.js';
import type { ResourceTypeRecord } from '../../engine/resource-type.js';
import { DEFAULT_RESOURCE_SORT, parseResourceSorts, type Revision, type SortSpec } from '../../engine/resources.js';
import { isPlainObject } from '../../engine/validate.js';
import { pyJson, pySet } from '../../formats/json.js';
import type { MetricRef } from '../../formats/operations-nodes.js';
import { QueryInputError, validateResourceQuery, type QueryNode } from '../../formats/resource-query.js';
import { parseResourceQueryString } from '../../formats/resource-query-string.js';
import { formatTimestamp } from '../../formats/timestamp.js';
import type { Identity } from '../auth.js';
import { boolParam, many, queryOf } from '../http.js';
import type { Grouping } from '../../engine/aggregation.js';
import { resourcesToJson } from '../json-shapes.js';
import type { AggregatesService, CommonArgs } from './aggregates.js';
import { measuresJson, refreshMetrics } from './aggregates.js';

/** The resource selection of a request body, validated. */
export interface ResourceSelection {
  type: ResourceTypeRecord;
  filter: QueryNode | undefined;
}

async function resourceTypeOf(engine: Engine, raw: unknown): Promise<ResourceTypeRecord> {
  const name = typeof raw === 'string' ? raw : String(raw);
  const rt = typeof raw === 'string' ? await engine.index.findType(name) : undefined;
  if (rt === undefined) throw new BadRequest({ cause: 'Resource type does not exist', detail: name });
  return rt;
}

/** Re-roots a voluptuous message of the search at `data['search']`. */
function searchError(err: QueryInputError): InvalidInput {
  const at = " @ data['search']";
  const reason = err.reason.includes(' @ data')
    ? err.reason.replace(' @ data', at)
    : `${err.reason} for dictionary value${at}`;
  return new InvalidInput(reason, ['search', ...err.path]);
}

/** `resource_type` and `search` (a JSON query, or the STRING form) of the body. */
export async function resourceSelection(engine: Engine, who: Identity, body: Record<string, unknown>): Promise<ResourceSelection> {
  const type = await resourceTypeOf(engine, body.resource_type);
  let json = body.search;
  if (typeof json === 'string') json = parseResourceQueryString(json);
  else if (!isPlainObject(json)) throw new InvalidInput("expected a dictionary for dictionary value @ data['search']", ['search']);
  try {
    const filter = validateResourceQuery(json, { resourceId: (v) => resourceUuid(v, who.creator) });
    return { type, filter };
  } catch (err) {
    if (err instanceof QueryInputError) throw searchError(err);
    throw err;
  }
}

/** The value of a group attribute as Gnocchi renders it (datetimes in ISO 8601). */
export function groupValue(type: ResourceTypeRecord, r: Revision, attribute: string): GroupValue {
  const v = fieldOf(r, attribute);
  return fieldKind(type, attribute) === 'datetime' && typeof v === 'number' ? formatTimestamp(v) : v;
}

function groupJson(attributes: readonly string[], values: readonly GroupValue[]): string {
  return pyJson(Object.fromEntries(attributes.map((a, i) => [a, values[i] ?? null])));
}

export interface ByResourceRequest {
  engine: Engine;
  service: AggregatesService;
  request: FastifyRequest;
  selection: ResourceSelection;
  wildcards: readonly MetricRef[];
  operations: AggregatesTask['operations'];
  args: CommonArgs;
  resample: Grouping | undefined;
  details: boolean;
  /** Resources read from the index at a time. */
  pageSize: number;
}

/** The named metrics of a page of resources, and those metrics with their policies, in one round of lookups. */
async function metricsOfPage(engine: Engine, page: readonly Revision[]) {
  const named = await engine.index.metricsOfResources([...new Set(page.map((r) => r.id))]);
  const metrics = await metricsById(engine.index, [...named.values()].flatMap((byName) => [...byName.values()]));
  const policies = await engine.policiesOf(metrics.values());
  const resolved = new Map<string, ResolvedMetric>();
  for (const m of metrics.values()) resolved.set(m.id, { id: m.id, policy: policies.get(m.archivePolicyName)! });
  return { named, resolved };
}

/**
 * `{"measures": ..., "references"?: [...]}`, or null when no metric matched.
 * Reads the resources once, keeping only their references (and, for
 * `details`, the revisions that had some).
 */
async function measuresOf(
  ctx: ByResourceRequest,
  pages: AsyncIterable<readonly Revision[]> | Iterable<readonly Revision[]>,
  intervalsOf?: (id: string) => readonly Interval[] | undefined,
): Promise<string | null> {
  const { engine, args, selection } = ctx;
  const match = nameMatcher(ctx.wildcards);
  const refs: SeriesRef[] = [];
  const used: Revision[] = [];
  for await (const page of pages) {
    const { named, resolved } = await metricsOfPage(engine, page);
    for (const r of page) {
      const found = match({ id: r.id, metrics: named.get(r.id)! }, (id) => resolved.get(id), intervalsOf?.(r.id));
      if (found.length === 0) continue;
      refs.push(...found);
      if (ctx.details) used.push(r);
    }
  }
  if (refs.length === 0) return null;
  const granularities = planGranularities(refs, args.granularity);
  if (boolParam(queryOf(ctx.request), 'refresh')) await refreshMetrics(engine, [...new Set(refs.map((r) => r.metricId))]);
  const task: AggregatesTask = {
    refs,
    granularities,
    operations: ctx.operations,
    neededOverlap: args.neededOverlap ?? 100,
    ...(args.start === undefined ? {} : { start: args.start }),
    ...(args.stop === undefined ? {} : { stop: args.stop }),
    ...(args.fill === undefined ? {} : { fill: args.fill }),
    ...(ctx.resample === undefined ? {} : { resample: ctx.resample }),
  };
  const result = await ctx.service.run(task);
  let text = `{"measures": ${measuresJson(result, refs, args.fill)}`;
  if (ctx.details) {
    const shown = selection.type.name === 'generic' ? undefined : selection.type;
    const seen = new Set<string>();
    const listed = used
      .filter((r) => !seen.has(`${r.id}@${r.revision}`) && seen.add(`${r.id}@${r.revision}`))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : a.revision - b.revision));
    text += `, "references": ${pyJson(await resourcesToJson(engine, listed, () => shown))}`;
  }
  return `${text}}`;
}

function metricsNotFound(wildcards: readonly MetricRef[]): BadRequest {
  // Gnocchi's detail is a Python set of the names.
  return new BadRequest({ cause: 'Metrics not found', detail: pySet(wildcardNames(wildcards)) });
}

/**
 * The selected revisions in listing order, read from the index `pageSize` at
 * a time: the selection is never materialised whole.
 */
async function* listed(ctx: ByResourceRequest, history: boolean, sorts: SortSpec[]): AsyncGenerator<Revision[]> {
  const { engine, selection, pageSize } = ctx;
  let marker: string | undefined;
  for (;;) {
    const page = await engine.index.list(selection.type.name, { filter: selection.filter, history, sorts, limit: pageSize, marker });
    yield page;
    if (page.length < pageSize) return;
    const last = page[page.length - 1]!;
    marker = history ? `${last.id}@${last.revision}` : last.id;
  }
}

/**
 * Evaluates groups as the listing yields them, up to `width` at a time (the
 * aggregates workers), answering in group order; the first failing group in
 * that order fails the request, as a sequential loop would.
 */
async function inOrder(groups: AsyncIterable<() => Promise<string | null>>, width: number): Promise<string[]> {
  const parts: string[] = [];
  const running: Promise<string | null>[] = [];
  const settle = async () => {
    const text = await running.shift()!;
    if (text !== null) parts.push(text);
  };
  for await (const start of groups) {
    const p = start();
    // Awaited in order below; this only keeps a later failure from being unhandled meanwhile.
    p.catch(() => undefined);
    running.push(p);
    if (running.length >= width) await settle();
  }
  while (running.length > 0) await settle();
  return parts;
}

/**
 * The answer of `/v1/aggregates` for a resource selection: measures of the
 * matching resources' metrics, or with `groupby` one entry per group (the
 * current attribute values, or with `use_history` the values at each time).
 * The listing is sorted by the group attributes, so a group is complete, and
 * evaluated, as soon as the next one starts.
 */
export async function aggregatesByResource(ctx: ByResourceRequest): Promise<string> {
  const { engine, selection } = ctx;
  const query = queryOf(ctx.request);
  const groupby = [...new Set(many(query, 'groupby'))].sort();
  const useHistory = boolParam(query, 'use_history');
  const type = selection.type;
  const history = useHistory && groupby.length > 0;
  const sorts = parseResourceSorts(groupby.length > 0 ? groupby : DEFAULT_RESOURCE_SORT, type, history);
  const resources = listed(ctx, history, sorts);

  if (groupby.length === 0) {
    const text = await measuresOf(ctx, resources);
    if (text === null) throw metricsNotFound(ctx.wildcards);
    return text;
  }

  const valuesOf = (r: Revision) => groupby.map((a) => groupValue(type, r, a));
  const entry = (values: readonly GroupValue[], text: string | null) =>
    text === null ? null : `{"group": ${groupJson(groupby, values)}, "measures": ${text}}`;
  async function* evaluations(): AsyncGenerator<() => Promise<string | null>> {
    for await (const run of consecutivePageRuns(resources, valuesOf)) {
      if (!history) {
        yield async () => entry(run.values, await measuresOf(ctx, [run.members]));
        continue;
      }
      const ids = [...new Set(run.members.map((r) => r.id))];
      const starts = await Promise.all(ids.map((id) => engine.index.firstRevisionStart(id)));
      const firsts = new Map(ids.map((id, i) => [id, starts[i]]));
      const isFirst = (r: Revision) => firsts.get(r.id) === r.revisionStart;
      // One run holds every revision with these values: at most one group.
      for (const g of historyGroups(run.members, valuesOf, isFirst, ctx.args)) {
        yield async () => entry(g.values, await measuresOf(ctx, [uniqueResources(g.revisions)], (id) => g.intervals.get(id)));
      }
    }
  }
  const parts = await inOrder(evaluations(), Math.max(1, engine.options.workers));
  if (parts.length === 0) throw metricsNotFound(ctx.wildcards);
  return `[${parts.join(', ')}]`;
}

/** One revision per resource (the first seen), keeping the order. */
function uniqueResources(revisions: readonly Revision[]): Revision[] {
  const seen = new Set<string>();
  return revisions.filter((r) => !seen.has(r.id) && seen.add(r.id) !== undefined);
}
