/**
 * The index: archive policies and their rules, metrics, resource types,
 * resources and their history. The engine and the server reach it only
 * through this interface, every answer a promise so that a driver may go
 * over a network (PostgreSQL); the embedded mode implements it on LMDB
 * (drivers/lmdb/index-store.ts, over engine/index.ts and
 * engine/resources.ts), where answers are ready at once.
 *
 * Every write is atomic: its checks and its changes see one state, and a
 * failed check leaves nothing written. Errors are the typed engine errors
 * of engine/errors.ts, the same whatever the driver. Records answered are
 * shared with other callers: never modify them.
 *
 * Batch reads (getMetrics, getResources, metricsOfResources) exist so that
 * a request resolving many items makes one call, not one per item.
 */
import type { ArchivePolicy } from '../archive-policy.js';
import type { QueryNode } from '../../formats/resource-query.js';
import type { ArchivePolicyRule, ListMetricsOptions, MetricRecord } from '../index.js';
import type { ListResourcesOptions, MetricSpec, NewResource, ResourceChanges, ResourceRecord, Revision } from '../resources.js';
import type { AttributeDef, AttributeValue, ResourceTypeRecord } from '../resource-type.js';

/** IndexStore.getMetrics by id, the metrics that exist only: for callers that look records up by id. */
export async function metricsById(index: Pick<IndexStore, 'getMetrics'>, ids: readonly string[]): Promise<Map<string, MetricRecord>> {
  const records = await index.getMetrics(ids);
  const out = new Map<string, MetricRecord>();
  records.forEach((m, i) => {
    if (m !== undefined) out.set(ids[i]!, m);
  });
  return out;
}

export interface IndexStore {
  /**
   * Returns once this node's reads reflect every index write committed, on
   * any node, before the call: for reads that must see them (`refresh`).
   */
  sync(): Promise<void>;

  // --- archive policies and rules -------------------------------------

  getPolicy(name: string): Promise<ArchivePolicy | undefined>;
  /**
   * True while a write that may change policies is pending in this process:
   * what is read meanwhile may rest on either version (the read cache then
   * neither answers nor keeps).
   */
  policiesChanging(): Promise<boolean>;
  listPolicies(): Promise<ArchivePolicy[]>;
  /** ArchivePolicyAlreadyExists when the name is taken. */
  createPolicy(policy: ArchivePolicy): Promise<ArchivePolicy>;
  /** Creates the policies and rules that are missing, leaving existing ones as they are (seeding a new index). */
  ensurePolicies(policies: ArchivePolicy[], rules: ArchivePolicyRule[]): Promise<void>;
  /** `update` runs on the current policy inside the write: read, update and write are one atomic step. */
  updatePolicy(name: string, update: (current: ArchivePolicy) => ArchivePolicy): Promise<ArchivePolicy>;
  /** ArchivePolicyInUse while a rule or a metric uses it. */
  deletePolicy(name: string): Promise<void>;
  getRule(name: string): Promise<ArchivePolicyRule | undefined>;
  /** Ordered by pattern, reverse alphabetical, as Gnocchi lists them. */
  listRules(): Promise<ArchivePolicyRule[]>;
  createRule(rule: ArchivePolicyRule): Promise<ArchivePolicyRule>;
  renameRule(name: string, newName: string): Promise<ArchivePolicyRule>;
  deleteRule(name: string): Promise<void>;
  /** The policy of the longest rule pattern matching the name; NoArchivePolicyRuleMatch when none does. */
  policyNameForMetric(metricName: string | null): Promise<string>;

  // --- metrics -----------------------------------------------------------

  /**
   * A record answered twice while it did not change may be the same object
   * (the collector trusts a record found identical); a driver that cannot
   * tell answers a new object, and costs the caller a new lookup.
   */
  getMetric(id: string): Promise<MetricRecord | undefined>;
  /** The metric of each of `ids`, in their order (undefined where none): no map to build, a push names 10,000. */
  getMetrics(ids: readonly string[]): Promise<(MetricRecord | undefined)[]>;
  /**
   * A number that moves on whenever a metric record may have changed, and
   * undefined while a write that may change one is pending: a record found
   * current (getMetrics) at one version is current while it stays. Absent
   * where the store cannot tell (other nodes write it); then a caller looks
   * records up again.
   */
  metricRecordsVersion?(): number | undefined;
  /** Also names it on its resource; NoSuchResource, NamedMetricAlreadyExists. */
  createMetric(metric: MetricRecord): Promise<MetricRecord>;
  /** Removes the metric, then calls its store's onMetricsDeleted hook (LMDB drops its series in the same commit). */
  deleteMetric(id: string): Promise<void>;
  /** One page, in `sorts` order, after the `marker` metric. */
  listMetrics(options: ListMetricsOptions): Promise<MetricRecord[]>;
  /** How many metrics exist (the collectors' --max-series bound); may lag a concurrent write. */
  countMetrics(): Promise<number>;

  // --- resource types ------------------------------------------------------

  /** `generic` always exists. */
  findType(name: string): Promise<ResourceTypeRecord | undefined>;
  /** NoSuchResourceType when missing. */
  getType(name: string): Promise<ResourceTypeRecord>;
  /** Ordered by name. */
  listTypes(): Promise<ResourceTypeRecord[]>;
  /** Answers the type as stored, in state `active` once ready. */
  createType(rt: ResourceTypeRecord): Promise<ResourceTypeRecord>;
  /** ResourceTypeInUse while a resource has it. */
  deleteType(name: string): Promise<void>;
  /** Adds and removes attributes; an added one is filled with its `fill` on every revision, history included. */
  updateTypeAttributes(name: string, add: { def: AttributeDef; fill: AttributeValue }[], remove: string[]): Promise<ResourceTypeRecord>;

  // --- resources -----------------------------------------------------------

  /** The current revision of a resource, if it exists and is of `type` (any type for generic). */
  get(type: string, id: string): Promise<ResourceRecord | undefined>;
  /** The current revisions of the resources among `ids` that exist, whatever their type, by id. */
  getResources(ids: readonly string[]): Promise<Map<string, ResourceRecord>>;
  /** Named metrics of a resource: name -> metric id, ordered by name. */
  metricsOf(id: string): Promise<Map<string, string>>;
  /** metricsOf of each of `ids` (an empty map for a resource without metrics or missing). */
  metricsOfResources(ids: readonly string[]): Promise<Map<string, Map<string, string>>>;
  metricByName(resourceId: string, name: string): Promise<MetricRecord | undefined>;
  /** Creates the resource and its `metrics` (new or existing ones re-attached) in one write. */
  create(type: string, input: NewResource): Promise<ResourceRecord>;
  /**
   * Creates resources and adds named metrics to existing ones in one write,
   * as create() and update(type, id, { metrics }, true) would one by one:
   * all or nothing (a collector's write may name thousands).
   */
  createAndExtend(type: string, created: readonly NewResource[], extended: readonly { id: string; metrics: Map<string, MetricSpec> }[]): Promise<void>;
  /**
   * Applies changes. A change of an attribute closes the current revision
   * into the history under a new revision number (one counter for every
   * resource, increasing) and starts a new one at the time of the write;
   * `metrics` alone (the whole map, or added with `appendMetrics`) makes
   * no revision.
   */
  update(type: string, id: string, changes: ResourceChanges, appendMetrics?: boolean): Promise<ResourceRecord>;
  /** Deletes the resource, its history and its metrics with their series. */
  delete(type: string, id: string): Promise<void>;
  /** delete() of every current resource of `type` matching `filter`, in one write; answers how many. */
  deleteMatching(type: string, filter: QueryNode): Promise<number>;
  /** `revision_start` of a resource's oldest revision (history first, else the current one). */
  firstRevisionStart(id: string): Promise<number | undefined>;
  /**
   * One page of (current, or with `history` all) revisions of `type`
   * matching the filter, in `sorts` order (compareRevisions), after the
   * `marker` revision; the current revision is numbered -1.
   */
  list(type: string, options: ListResourcesOptions): Promise<Revision[]>;
}
