/**
 * What a listing or search shows a caller the policy does not let see
 * everything: Gnocchi's keystone auth helper asks the policy whether the rule
 * holds for any object, else for objects of the caller's project, else for
 * objects created by the caller's project, and narrows the query to the
 * cases that hold (403 "Insufficient privileges" when none does). Basic and
 * remoteuser callers are not narrowed, as in Gnocchi.
 */
import type { Engine } from '../engine/engine.js';
import type { ListMetricsOptions, MetricRecord } from '../engine/index.js';
import { compileQuery, likeToRegExp, type ResourceRecord, type Revision } from '../engine/resource-search.js';
import type { QueryNode } from '../formats/resource-query.js';
import type { Identity } from './auth.js';
import { HttpError } from './errors.js';
import { allowed, type PolicyTarget, type RuleName } from './policy.js';

const insufficient = () => new HttpError(403, 'Insufficient privileges');

const eq = (field: string, value: string | null): QueryNode => ({ kind: 'compare', op: 'eq', field, value });
const like = (field: string, value: string): QueryNode => ({ kind: 'compare', op: 'like', field, value });

/**
 * The resource filter `rule` imposes on the caller, or undefined for none.
 * `prefix` names the resource inside the policy target (`resource` when the
 * rule is about metrics, as `resource.project_id`).
 */
export function resourcePolicyFilter(
  who: Identity,
  rule: RuleName,
  resourceType: string | null,
  prefix?: string,
): QueryNode | undefined {
  if (!who.narrowsListings) return undefined;
  const key = (name: string) => (prefix === undefined ? name : `${prefix}.${name}`);
  const target = (extra: PolicyTarget): PolicyTarget => ({ [key('resource_type')]: resourceType, ...extra });
  if (allowed(rule, who, target({}))) return undefined;
  const project = who.projectId;
  const alternatives: QueryNode[] = [];
  if (allowed(rule, who, target({ [key('project_id')]: project }))) alternatives.push(eq('project_id', project));
  if (allowed(rule, who, target({ [key('created_by_project_id')]: project }))) {
    alternatives.push(project ? like('creator', `%:${project}`) : eq('creator', null));
  }
  if (alternatives.length === 0) throw insufficient();
  return { kind: 'or', children: alternatives };
}

/** `filter` narrowed by the policy filter, if any. */
export function narrowed(policy: QueryNode | undefined, filter: QueryNode): QueryNode;
export function narrowed(policy: QueryNode | undefined, filter: QueryNode | undefined): QueryNode | undefined;
export function narrowed(policy: QueryNode | undefined, filter: QueryNode | undefined): QueryNode | undefined {
  if (policy === undefined) return filter;
  return filter === undefined ? policy : { kind: 'and', children: [policy, filter] };
}

/**
 * The metrics a metric listing under `rule` may show the caller, or
 * undefined for all: those created by the caller's project, or attached to
 * a resource the resource filter (prefix `resource`) lets through. (Gnocchi's
 * SQL joins the resource table for the second case and so also drops the
 * caller's own metrics that have no resource; this keeps them.)
 */
export async function metricPolicyPredicate(engine: Engine, who: Identity, rule: RuleName): Promise<MetricsFilter | undefined> {
  if (!who.narrowsListings || allowed(rule, who, {})) return undefined;
  const project = who.projectId;
  if (!allowed(rule, who, { created_by_project_id: project })) throw insufficient();
  const byCreator = likeToRegExp(`%:${project ?? 'None'}`);
  const resourceFilter = resourcePolicyFilter(who, rule, null, 'resource');
  if (resourceFilter === undefined) return undefined;
  const generic = await engine.index.getType('generic');
  const resourceAllowed = compileQuery(resourceFilter, generic);
  return async (metrics) => {
    const ids = metrics.flatMap((m) => (m.resourceId === null || byCreator.test(m.creator) ? [] : [m.resourceId]));
    const resources = ids.length === 0 ? new Map<string, ResourceRecord>() : await engine.index.getResources(ids);
    return metrics.filter((m) => {
      if (byCreator.test(m.creator)) return true;
      if (m.resourceId === null) return false;
      const r = resources.get(m.resourceId);
      return r !== undefined && resourceAllowed({ ...r, revision: -1, revisionEnd: null } as Revision) === true;
    });
  };
}

/** The metrics of a page a caller may see, in their order. */
export type MetricsFilter = (metrics: readonly MetricRecord[]) => Promise<MetricRecord[]>;

/**
 * A page of metrics that pass `where`: the index pages by its sort order,
 * so pages are read one after another until `limit` metrics pass.
 */
export async function listMetricsWhere(engine: Engine, options: ListMetricsOptions, where: MetricsFilter): Promise<MetricRecord[]> {
  const page: MetricRecord[] = [];
  let marker = options.marker;
  for (;;) {
    const batch = await engine.index.listMetrics({ ...options, ...(marker === undefined ? {} : { marker }) });
    for (const m of await where(batch)) {
      page.push(m);
      if (page.length === options.limit) return page;
    }
    if (batch.length < options.limit) return page;
    marker = batch[batch.length - 1]!.id;
  }
}
