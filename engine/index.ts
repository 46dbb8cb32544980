/**
 * The index of archive policies, archive policy rules and metrics, stored in
 * LMDB. Each write runs inside one LMDB write transaction: checks and writes
 * see the same state.
 */
import type { ArchivePolicy } from './archive-policy.js';
import {
  ArchivePolicyAlreadyExists,
  ArchivePolicyInUse,
  ArchivePolicyRuleAlreadyExists,
  BadRequest,
  NoArchivePolicyRuleMatch,
  NoSuchArchivePolicy,
  NoSuchArchivePolicyRule,
  NamedMetricAlreadyExists,
  NoSuchMetric,
  InvalidPagination,
  NoSuchResource,
} from './errors.js';
import { compileGlob } from './glob.js';
import { dropSeries } from './drivers/lmdb/series.js';
import type { StoredMetric } from './metric-records.js';
import type { Storage } from './storage.js';

/**
 * Removes a metric's record and stored data; call inside a write
 * transaction. The series records are in the same environment: they go in
 * the same transaction.
 */
export function dropMetric(storage: Storage, metric: MetricRecord): void {
  const { id } = metric;
  void storage.metrics.remove(id);
  if (metric.resourceId !== null && metric.name !== null) storage.resources.unnameMetric(metric.resourceId, metric.name, id);
  dropSeries(storage, id);
}

export interface ArchivePolicyRule {
  name: string;
  metricPattern: string;
  archivePolicyName: string;
}

export interface MetricRecord {
  id: string;
  name: string | null;
  unit: string | null;
  archivePolicyName: string;
  creator: string;
  resourceId: string | null;
}

export type MetricSortKey = 'id' | 'name' | 'unit' | 'archive_policy_name' | 'creator' | 'resource_id';
export const METRIC_SORT_KEYS: readonly MetricSortKey[] = ['id', 'name', 'unit', 'archive_policy_name', 'creator', 'resource_id'];

export interface SortSpec<K extends string> {
  key: K;
  direction: 'asc' | 'desc';
}

export interface MetricFilter {
  id?: string;
  name?: string;
  unit?: string;
  archive_policy_name?: string;
  creator?: string;
  resource_id?: string;
}

export interface ListMetricsOptions {
  filter: MetricFilter;
  sorts: SortSpec<MetricSortKey>[];
  limit: number;
  marker?: string;
}

/** A listed metric's field: one its record leaves to its resource must have been read (see listMetrics). */
function metricField(m: StoredMetric, key: MetricSortKey): string | null {
  const value = storedField(m, key);
  if (value === true) throw new Error(`metric ${m.id}: its ${key} was not read from its resource`);
  return value;
}

function storedField(m: StoredMetric, key: MetricSortKey): string | null | true {
  switch (key) {
    case 'id': return m.id;
    case 'name': return m.name;
    case 'unit': return m.unit;
    case 'archive_policy_name': return m.archivePolicyName;
    case 'creator': return m.creator;
    case 'resource_id': return m.resourceId;
  }
}

/** SQL ordering as PostgreSQL does it: NULLs sort last ascending, first descending. */
function compareNullable(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

export function metricComparator(sorts: SortSpec<MetricSortKey>[]): (a: StoredMetric, b: StoredMetric) => number {
  const keys = sorts.some((s) => s.key === 'id') ? sorts : [...sorts, { key: 'id' as const, direction: 'asc' as const }];
  return (a, b) => {
    for (const { key, direction } of keys) {
      const c = compareNullable(metricField(a, key), metricField(b, key));
      if (c !== 0) return direction === 'asc' ? c : -c;
    }
    return 0;
  };
}

/** Records cached at most: ~400 bytes each, so ~80 MB. */
const CACHE_SIZE = 200_000;
/** Misses of a full cache after which it starts over. */
const CACHE_RENEWAL_MISSES = 10 * CACHE_SIZE;

/**
 * Decoded index records (metrics by id, archive policies by name). Every
 * pushed metric is looked up, and again when its measures are processed,
 * and every read looks up its metric's policy; from LMDB that costs ~2-5 µs
 * (key encoding, msgpack decoding) and garbage. Exact: a record is dropped
 * as a write transaction changes it, and the cache is not filled while such
 * a transaction is pending (until it commits or rolls back), so a read
 * meanwhile gets what LMDB gives and keeps nothing. Only this thread writes
 * index records (workers only test that metrics exist). Cached records are
 * shared: callers never modify them.
 *
 * Once full it takes no more records: for metrics pushed in turn, more than
 * it holds, a fixed subset serves as many hits as any eviction would, and
 * evicting was measured to cost more than the cache saved (records promoted
 * to the old generation, then collected there). It starts over after many
 * misses, to follow a set of metrics that changed.
 */
class RecordCache<T> {
  private readonly byKey = new Map<string, T>();
  private pendingWrites = 0;
  private missesWhenFull = 0;

  /** `keyOf` gives a record's own key: the caller's may be a slice that keeps a whole request body alive. */
  constructor(private readonly keyOf: (record: T) => string) {}

  get(key: string): T | undefined {
    return this.byKey.get(key);
  }

  /** A record just read from LMDB, missing here. */
  fill(record: T): void {
    if (this.pendingWrites > 0) return;
    if (this.byKey.size < CACHE_SIZE) {
      this.byKey.set(this.keyOf(record), record);
    } else if (++this.missesWhenFull === CACHE_RENEWAL_MISSES) {
      this.byKey.clear();
      this.missesWhenFull = 0;
    }
  }

  drop(key: string): void {
    this.byKey.delete(key);
  }

  /** A record stored (undefined: removed) by the write transaction under way. */
  wrote(key: string, record: T | undefined): void {
    this.byKey.delete(key);
    this.written?.set(key, record);
  }

  /** What the synchronous transaction under way (changingSync) stored last under each key. */
  private written: Map<string, T | undefined> | undefined;

  /**
   * Runs `write`, a synchronous write transaction committed when it
   * returns, then keeps the records it stored (the record codec reads them
   * back as they are): a collector reads back the thousands of metrics it
   * just created, a read and a decode each otherwise. Kept only when no other
   * transaction is pending, as fill; in the same turn as the commit, so
   * that nothing changes them in between.
   */
  changingSync<R>(write: () => R): R {
    const outer = this.written;
    const written = (this.written = new Map<string, T | undefined>());
    this.pendingWrites++;
    let result: R;
    try {
      result = write();
    } finally {
      this.pendingWrites--;
      this.finished++;
      this.written = outer;
    }
    if (outer !== undefined) for (const [key, record] of written) outer.set(key, record);
    else for (const record of written.values()) if (record !== undefined) this.fill(record);
    return result;
  }

  /** True while a write transaction that may change records is pending. */
  get writing(): boolean {
    return this.pendingWrites > 0;
  }

  async changing<R>(write: () => R | Promise<R>): Promise<R> {
    this.pendingWrites++;
    try {
      return await write();
    } finally {
      this.pendingWrites--;
      this.finished++;
    }
  }

  /** Write transactions that may have changed records, finished (committed or rolled back). */
  private finished = 0;

  /**
   * A number that moves on whenever a transaction that may have changed
   * records finishes; undefined while one is pending. A record found
   * current at one version is current while the version stays.
   */
  get version(): number | undefined {
    return this.pendingWrites > 0 ? undefined : this.finished;
  }
}

export class Index {
  private readonly records = new RecordCache<MetricRecord>((m) => m.id);
  private readonly policies = new RecordCache<ArchivePolicy>((p) => p.name);

  constructor(
    private readonly storage: Storage,
    /** Called after a write transaction that may have changed policies (committed or not). */
    private readonly onPoliciesChanged: () => void = () => {},
  ) {}

  /**
   * Runs `f` in a write transaction of its own that an error thrown by `f`
   * rolls back whole: lmdb-js' `transaction()` would commit the writes `f`
   * made before it threw (a check after a write: a name too long to be
   * stored, StorageKeyTooLong, on a later put). A child transaction of the
   * next batched commit, so that it costs no commit of its own; lmdb-js
   * offers it without `cache` and `useWritemap` (engine/storage.ts).
   */
  private write<T>(f: () => T): Promise<T> {
    return this.storage.root.childTransaction(f);
  }

  getPolicy(name: string): ArchivePolicy | undefined {
    const cached = this.policies.get(name);
    if (cached !== undefined) return cached;
    const policy = this.storage.policies.get(name) as ArchivePolicy | undefined;
    if (policy !== undefined) this.policies.fill(policy);
    return policy;
  }

  /**
   * A write transaction that may change policies: `names`' cached records
   * are dropped first. onPoliciesChanged runs while the write still counts
   * as pending, so that policiesChanging() holds until it has run.
   */
  private changingPolicies<T>(names: string[], write: () => T): Promise<T> {
    return this.policies.changing(async () => {
      for (const name of names) this.policies.drop(name);
      try {
        return await this.write(write);
      } finally {
        this.onPoliciesChanged();
      }
    });
  }

  /** True while a write that may change policies is pending: what is read meanwhile may rest on either version. */
  policiesChanging(): boolean {
    return this.policies.writing;
  }

  listPolicies(): ArchivePolicy[] {
    return [...this.storage.policies.getRange()].map((e) => e.value as ArchivePolicy);
  }

  createPolicy(policy: ArchivePolicy): Promise<ArchivePolicy> {
    return this.changingPolicies([policy.name], () => {
      if (this.storage.policies.get(policy.name) !== undefined) throw new ArchivePolicyAlreadyExists(policy.name);
      void this.storage.policies.put(policy.name, policy);
      return policy;
    });
  }

  /** Creates the policies that are missing; used to seed a new data directory. */
  ensurePolicies(policies: ArchivePolicy[], rules: ArchivePolicyRule[]): Promise<void> {
    return this.changingPolicies(policies.map((p) => p.name), () => {
      for (const p of policies) {
        if (this.storage.policies.get(p.name) === undefined) void this.storage.policies.put(p.name, p);
      }
      for (const r of rules) {
        if (this.storage.rules.get(r.name) === undefined) void this.storage.rules.put(r.name, r);
      }
    });
  }

  updatePolicy(name: string, update: (current: ArchivePolicy) => ArchivePolicy): Promise<ArchivePolicy> {
    return this.changingPolicies([name], () => {
      const current = this.getPolicy(name);
      if (current === undefined) throw new NoSuchArchivePolicy(name);
      const next = update(current);
      void this.storage.policies.put(name, next);
      return next;
    });
  }

  deletePolicy(name: string): Promise<void> {
    return this.changingPolicies([name], () => {
      if (this.getPolicy(name) === undefined) throw new NoSuchArchivePolicy(name);
      const usedByRule = this.listRules().some((r) => r.archivePolicyName === name);
      if (usedByRule || this.someMetric((m) => m.archivePolicyName === name)) throw new ArchivePolicyInUse(name);
      void this.storage.policies.remove(name);
    });
  }

  getRule(name: string): ArchivePolicyRule | undefined {
    return this.storage.rules.get(name) as ArchivePolicyRule | undefined;
  }

  /** Ordered by pattern, reverse alphabetical, as Gnocchi lists them. */
  listRules(): ArchivePolicyRule[] {
    const rules = [...this.storage.rules.getRange()].map((e) => e.value as ArchivePolicyRule);
    return rules.sort((a, b) => (a.metricPattern < b.metricPattern ? 1 : a.metricPattern > b.metricPattern ? -1 : 0));
  }

  createRule(rule: ArchivePolicyRule): Promise<ArchivePolicyRule> {
    return this.write(() => {
      if (this.getPolicy(rule.archivePolicyName) === undefined) {
        throw new BadRequest({ cause: 'Archive policy does not exist', detail: rule.archivePolicyName });
      }
      if (this.getRule(rule.name) !== undefined) throw new ArchivePolicyRuleAlreadyExists(rule.name);
      void this.storage.rules.put(rule.name, rule);
      return rule;
    });
  }

  renameRule(name: string, newName: string): Promise<ArchivePolicyRule> {
    return this.write(() => {
      const rule = this.getRule(name);
      if (rule === undefined) throw new NoSuchArchivePolicyRule(name);
      if (newName !== name && this.getRule(newName) !== undefined) {
        throw new BadRequest(
          `Archive policy rule ${name} does not support change: Archive policy rule ${newName} already exists.`,
        );
      }
      const renamed = { ...rule, name: newName };
      void this.storage.rules.put(newName, renamed);
      if (newName !== name) void this.storage.rules.remove(name);
      return renamed;
    });
  }

  deleteRule(name: string): Promise<void> {
    return this.write(() => {
      if (this.getRule(name) === undefined) throw new NoSuchArchivePolicyRule(name);
      void this.storage.rules.remove(name);
    });
  }

  /** The policy of the longest rule pattern matching a metric name. */
  policyNameForMetric(metricName: string | null): string {
    const name = metricName ?? '';
    const rules = this.listRules().sort((a, b) => b.metricPattern.length - a.metricPattern.length);
    for (const rule of rules) {
      if (compileGlob(rule.metricPattern).test(name)) return rule.archivePolicyName;
    }
    throw new NoArchivePolicyRuleMatch(metricName);
  }

  getMetric(id: string): MetricRecord | undefined {
    return this.records.get(id) ?? this.readMetric(id);
  }

  private readMetric(id: string): MetricRecord | undefined {
    const metric = this.storage.metrics.get(id);
    if (metric !== undefined) this.records.fill(metric);
    return metric;
  }

  /**
   * Runs `write`, a write transaction that may change metric records: for
   * the cache to stay exact, every such transaction runs through here and
   * makes its changes with putMetric and removeMetric.
   */
  changingMetrics<T>(write: () => T | Promise<T>): Promise<T> {
    return this.records.changing(write);
  }

  /**
   * Runs `write`, a synchronous write transaction (committed when it
   * returns) that may change metric records, as changingMetrics does; the
   * records it stored are cached once it committed.
   */
  changingMetricsSync<T>(write: () => T): T {
    return this.records.changingSync(write);
  }

  /** See IndexStore.metricRecordsVersion. */
  metricRecordsVersion(): number | undefined {
    return this.records.version;
  }

  /**
   * Stores a metric record; inside changingMetrics or changingMetricsSync
   * only. `ownerCreator`: the creator of the resource that names it, if any
   * (engine/metric-records.ts).
   */
  putMetric(metric: MetricRecord, ownerCreator?: string): void {
    void this.storage.metrics.put(metric.id, metric, ownerCreator);
    this.records.wrote(metric.id, metric);
  }

  /** Removes a metric with everything stored for it; inside changingMetrics or changingMetricsSync only. */
  removeMetric(metric: MetricRecord): void {
    dropMetric(this.storage, metric);
    this.records.wrote(metric.id, undefined);
  }

  /** An asynchronous write transaction that may change metric records. */
  private metricTransaction<T>(f: () => T): Promise<T> {
    return this.changingMetrics(() => this.write(f));
  }

  createMetric(metric: MetricRecord): Promise<MetricRecord> {
    return this.metricTransaction(() => {
      if (this.getPolicy(metric.archivePolicyName) === undefined) {
        throw new BadRequest(`Archive policy ${metric.archivePolicyName} does not exist`);
      }
      let ownerCreator: string | undefined;
      if (metric.resourceId !== null && metric.name !== null) {
        const { resources } = this.storage;
        const owner = resources.namedAndCreator(metric.resourceId);
        if (owner === undefined) throw new NoSuchResource(metric.resourceId);
        if (owner.metrics.has(metric.name)) throw new NamedMetricAlreadyExists(metric.name);
        resources.setMetrics(metric.resourceId, owner.metrics.set(metric.name, metric.id));
        ownerCreator = owner.creator;
      }
      this.putMetric(metric, ownerCreator);
      return metric;
    });
  }

  /** Removes the metric with everything stored for it. */
  deleteMetric(id: string): Promise<void> {
    return this.metricTransaction(() => {
      const metric = this.getMetric(id);
      if (metric === undefined) throw new NoSuchMetric(id);
      this.removeMetric(metric);
    });
  }

  private someMetric(predicate: (m: StoredMetric) => boolean): boolean {
    for (const { value } of this.storage.metrics.getStoredRange()) {
      if (predicate(value)) return true;
    }
    return false;
  }

  /**
   * One page of metrics. Memory stays bounded by `limit` whatever the number
   * of metrics: matches are kept in a sorted window of at most `limit`.
   */
  listMetrics(options: ListMetricsOptions): MetricRecord[] {
    const compare = metricComparator(options.sorts);
    let after: MetricRecord | undefined;
    if (options.marker !== undefined) {
      after = this.getMetric(options.marker);
      if (after === undefined) throw new InvalidPagination(`Invalid marker: \`${options.marker}'`);
    }
    const filters = Object.entries(options.filter) as [keyof MetricFilter, string][];
    const { metrics } = this.storage;
    // What a record leaves to its resource (metric-records.ts) is read for the page's records only, unless a filter or an order needs it.
    const keys = [...filters.map(([key]) => key), ...options.sorts.map(({ key }) => key)];
    const records = keys.includes('name') || keys.includes('creator') ? metrics.getRange() : metrics.getStoredRange();
    const page: StoredMetric[] = [];
    for (const { value: m } of records) {
      if (!filters.every(([k, v]) => metricField(m, k) === v)) continue;
      if (after !== undefined && compare(m, after) <= 0) continue;
      if (page.length === options.limit && compare(m, page[page.length - 1]!) >= 0) continue;
      let i = page.length;
      while (i > 0 && compare(page[i - 1]!, m) > 0) i--;
      page.splice(i, 0, m);
      if (page.length > options.limit) page.pop();
    }
    return page.map((m) => metrics.resolve(m));
  }
}
