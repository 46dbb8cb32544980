/**
 * Metrics and resources as Gnocchi's `jsonify` renders them, keys in its
 * order: clients that print what they get (`gnocchi ... -f json`) show it.
 */
import { policyToJson, type ArchivePolicy } from '../engine/archive-policy.js';
import type { Engine } from '../engine/engine.js';
import type { MetricRecord } from '../engine/index.js';
import type { ResourceTypeRecord } from '../engine/resource-type.js';
import type { ResourceRecord, Revision } from '../engine/resources.js';
import { formatTimestamp } from '../formats/timestamp.js';
import { creatorParts } from './auth.js';

const ts = (v: number | null) => (v === null ? null : formatTimestamp(v));

function createdBy(creator: string) {
  const { userId, projectId } = creatorParts(creator);
  return { created_by_user_id: userId, created_by_project_id: projectId };
}

function genericFields(r: Revision) {
  return {
    creator: r.creator,
    started_at: ts(r.startedAt),
    revision_start: ts(r.revisionStart),
    ended_at: ts(r.endedAt),
    user_id: r.userId,
    project_id: r.projectId,
    original_resource_id: r.originalResourceId,
    id: r.id,
    type: r.type,
    revision_end: ts(r.revisionEnd),
  };
}

export const asRevision = (r: ResourceRecord): Revision => ({ ...r, revision: -1, revisionEnd: null });

/**
 * A revision as Gnocchi renders it. `type` gives the attributes to show
 * (undefined: generic attributes only); metrics are the resource's current ones.
 * Gnocchi's key order: a resource's type attributes come between `type` and
 * `revision_end`; in a history listing (`history`) `revision_end` comes
 * before `type`, for every revision listed.
 */
export async function resourceToJson(engine: Engine, r: Revision, type: ResourceTypeRecord | undefined, attrs?: string[], history = false) {
  return (await resourcesToJson(engine, [r], () => type, attrs, history))[0]!;
}

/** resourceToJson of each revision, `typeOf` giving its type, with one lookup of their metrics. */
export async function resourcesToJson(
  engine: Engine,
  revisions: readonly Revision[],
  typeOf: (r: Revision) => ResourceTypeRecord | undefined,
  attrs?: string[],
  history = false,
) {
  const metrics = await engine.index.metricsOfResources([...new Set(revisions.map((r) => r.id))]);
  return revisions.map((r) => renderResource(r, typeOf(r), metrics.get(r.id) ?? new Map<string, string>(), attrs, history));
}

function renderResource(r: Revision, type: ResourceTypeRecord | undefined, metrics: ReadonlyMap<string, string>, attrs: string[] | undefined, history: boolean) {
  const { revision_end: revisionEnd, type: typeName, ...head } = genericFields(r);
  const d: Record<string, unknown> = history ? { ...head, revision_end: revisionEnd, type: typeName } : { ...head, type: typeName };
  for (const a of type?.attributes ?? []) {
    const v = r.attrs[a.name] ?? null;
    d[a.name] = a.type === 'datetime' && typeof v === 'number' ? formatTimestamp(v) : v;
  }
  if (!history) d.revision_end = revisionEnd;
  d.metrics = Object.fromEntries(metrics);
  Object.assign(d, createdBy(r.creator));
  if (attrs !== undefined && attrs.length > 0) {
    for (const k of Object.keys(d)) if (!attrs.includes(k)) delete d[k];
  }
  return d;
}

/**
 * How a metric refers to its resource: its id (listings), or the generic
 * resource itself, without its metrics, as Gnocchi loads it for a single
 * metric's read.
 */
export type ResourceRef = 'resource_id' | 'resource';

const metricHead = (m: MetricRecord) => ({ id: m.id, creator: m.creator, name: m.name, unit: m.unit });

export async function metricToJson(engine: Engine, m: MetricRecord, ref: ResourceRef) {
  return (await metricsToJson(engine, [m], ref))[0]!;
}

/** metricToJson of each metric, with one round of lookups of their policies and resources. */
export async function metricsToJson(engine: Engine, metrics: readonly MetricRecord[], ref: ResourceRef) {
  const policies = await engine.policiesOf(metrics);
  const ids = ref === 'resource' ? metrics.flatMap((m) => (m.resourceId === null ? [] : [m.resourceId])) : [];
  const resources = ids.length === 0 ? new Map<string, ResourceRecord>() : await engine.index.getResources(ids);
  return metrics.map((m) => renderMetric(m, policies.get(m.archivePolicyName)!, ref, m.resourceId === null ? undefined : resources.get(m.resourceId)));
}

function renderMetric(m: MetricRecord, policy: ArchivePolicy, ref: ResourceRef, r: ResourceRecord | undefined) {
  return {
    ...metricHead(m),
    ...(ref === 'resource_id'
      ? { resource_id: m.resourceId }
      : { resource: r === undefined ? null : { ...genericFields(asRevision(r)), ...createdBy(r.creator) } }),
    archive_policy: policyToJson(policy),
    ...createdBy(m.creator),
  };
}

/** The answer to a metric's creation: the policy by name only. */
export function createdMetricToJson(m: MetricRecord) {
  return {
    ...metricHead(m),
    resource_id: m.resourceId,
    archive_policy_name: m.archivePolicyName,
    ...createdBy(m.creator),
  };
}
