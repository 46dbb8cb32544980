/**
 * The index on LMDB: engine/index.ts (policies, rules, metrics) and
 * engine/resources.ts (resource types, resources, history), in the same
 * environment as the series. Their reads are synchronous: each answer here
 * is ready at once.
 */
import type { ArchivePolicy } from '../../archive-policy.js';
import type { QueryNode } from '../../../formats/resource-query.js';
import { Index, type ArchivePolicyRule, type ListMetricsOptions, type MetricRecord } from '../../index.js';
import { entryCount } from '../../db-stats.js';
import type { Progress } from '../../progress.js';
import { ResourceIndex, type ListResourcesOptions, type MetricSpec, type NewResource, type ResourceChanges, type ResourceRecord, type Revision } from '../../resources.js';
import type { AttributeDef, AttributeValue, ResourceTypeRecord } from '../../resource-type.js';
import type { Storage } from '../../storage.js';
import type { IndexStore } from '../index-store.js';

export interface LmdbIndexHooks {
  /** After a write transaction that may have changed policies (committed or not). */
  onPoliciesChanged?: () => void;
  /** After a commit that deleted metrics (alone: awaited; with their resources: not). */
  onMetricsDeleted?: (ids: string[]) => void | Promise<void>;
  /** Told the advance of index builds at opening. */
  progress?: Progress;
}

export class LmdbIndexStore implements IndexStore {
  /** The LMDB classes themselves, for tests and benchmarks that load or inspect the index synchronously. */
  readonly metrics: Index;
  readonly resources: ResourceIndex;

  constructor(
    private readonly storage: Storage,
    private readonly hooks: LmdbIndexHooks = {},
  ) {
    this.metrics = new Index(storage, hooks.onPoliciesChanged);
    this.resources = new ResourceIndex(storage, this.metrics, hooks.onMetricsDeleted, hooks.progress);
  }

  async getPolicy(name: string): Promise<ArchivePolicy | undefined> {
    return this.metrics.getPolicy(name);
  }

  /** One process: a committed write is read at once. */
  async sync(): Promise<void> {}

  async policiesChanging(): Promise<boolean> {
    return this.metrics.policiesChanging();
  }

  async listPolicies(): Promise<ArchivePolicy[]> {
    return this.metrics.listPolicies();
  }

  createPolicy(policy: ArchivePolicy): Promise<ArchivePolicy> {
    return this.metrics.createPolicy(policy);
  }

  ensurePolicies(policies: ArchivePolicy[], rules: ArchivePolicyRule[]): Promise<void> {
    return this.metrics.ensurePolicies(policies, rules);
  }

  updatePolicy(name: string, update: (current: ArchivePolicy) => ArchivePolicy): Promise<ArchivePolicy> {
    return this.metrics.updatePolicy(name, update);
  }

  deletePolicy(name: string): Promise<void> {
    return this.metrics.deletePolicy(name);
  }

  async getRule(name: string): Promise<ArchivePolicyRule | undefined> {
    return this.metrics.getRule(name);
  }

  async listRules(): Promise<ArchivePolicyRule[]> {
    return this.metrics.listRules();
  }

  createRule(rule: ArchivePolicyRule): Promise<ArchivePolicyRule> {
    return this.metrics.createRule(rule);
  }

  renameRule(name: string, newName: string): Promise<ArchivePolicyRule> {
    return this.metrics.renameRule(name, newName);
  }

  deleteRule(name: string): Promise<void> {
    return this.metrics.deleteRule(name);
  }

  async policyNameForMetric(metricName: string | null): Promise<string> {
    return this.metrics.policyNameForMetric(metricName);
  }

  async getMetric(id: string): Promise<MetricRecord | undefined> {
    return this.metrics.getMetric(id);
  }

  metricRecordsVersion(): number | undefined {
    return this.metrics.metricRecordsVersion();
  }

  async getMetrics(ids: readonly string[]): Promise<(MetricRecord | undefined)[]> {
    const out: (MetricRecord | undefined)[] = [];
    for (const id of ids) out.push(this.metrics.getMetric(id));
    return out;
  }

  createMetric(metric: MetricRecord): Promise<MetricRecord> {
    return this.metrics.createMetric(metric);
  }

  async deleteMetric(id: string): Promise<void> {
    await this.metrics.deleteMetric(id);
    await this.hooks.onMetricsDeleted?.([id]);
  }

  async listMetrics(options: ListMetricsOptions): Promise<MetricRecord[]> {
    return this.metrics.listMetrics(options);
  }

  async countMetrics(): Promise<number> {
    return entryCount(this.storage.metrics);
  }

  async findType(name: string): Promise<ResourceTypeRecord | undefined> {
    return this.resources.findType(name);
  }

  async getType(name: string): Promise<ResourceTypeRecord> {
    return this.resources.getType(name);
  }

  async listTypes(): Promise<ResourceTypeRecord[]> {
    return this.resources.listTypes();
  }

  createType(rt: ResourceTypeRecord): Promise<ResourceTypeRecord> {
    return this.resources.createType(rt);
  }

  deleteType(name: string): Promise<void> {
    return this.resources.deleteType(name);
  }

  updateTypeAttributes(name: string, add: { def: AttributeDef; fill: AttributeValue }[], remove: string[]): Promise<ResourceTypeRecord> {
    return this.resources.updateTypeAttributes(name, add, remove);
  }

  async get(type: string, id: string): Promise<ResourceRecord | undefined> {
    return this.resources.get(type, id);
  }

  async getResources(ids: readonly string[]): Promise<Map<string, ResourceRecord>> {
    const out = new Map<string, ResourceRecord>();
    for (const id of ids) {
      const r = this.resources.get('generic', id);
      if (r !== undefined) out.set(id, r);
    }
    return out;
  }

  async metricsOf(id: string): Promise<Map<string, string>> {
    return this.resources.metricsOf(id);
  }

  async metricsOfResources(ids: readonly string[]): Promise<Map<string, Map<string, string>>> {
    return new Map(ids.map((id) => [id, this.resources.metricsOf(id)]));
  }

  async metricByName(resourceId: string, name: string): Promise<MetricRecord | undefined> {
    return this.resources.metricByName(resourceId, name);
  }

  create(type: string, input: NewResource): Promise<ResourceRecord> {
    return this.resources.create(type, input);
  }

  createAndExtend(type: string, created: readonly NewResource[], extended: readonly { id: string; metrics: Map<string, MetricSpec> }[]): Promise<void> {
    return this.resources.createAndExtend(type, created, extended);
  }

  update(type: string, id: string, changes: ResourceChanges, appendMetrics = false): Promise<ResourceRecord> {
    return this.resources.update(type, id, changes, appendMetrics);
  }

  delete(type: string, id: string): Promise<void> {
    return this.resources.delete(type, id);
  }

  deleteMatching(type: string, filter: QueryNode): Promise<number> {
    return this.resources.deleteMatching(type, filter);
  }

  async firstRevisionStart(id: string): Promise<number | undefined> {
    return this.resources.firstRevisionStart(id);
  }

  async list(type: string, options: ListResourcesOptions): Promise<Revision[]> {
    return this.resources.list(type, options);
  }
}
