/**
 * The index on PostgreSQL (cluster mode): the IndexStore of every node, the
 * same answers and typed errors as the LMDB index (engine/index.ts,
 * engine/resources.ts) for the same calls. Schema in schema.ts, searches
 * compiled by search-sql.ts, point reads cached by cache.ts.
 *
 * Each write is one READ COMMITTED transaction whose read-modify-writes lock
 * what they read (`FOR UPDATE`, or `FOR KEY SHARE` on what must not vanish
 * meanwhile: the type of a resource being created, the policy of a metric),
 * and which notifies the cache keys it changed (a resource's row or history
 * also its type's searches, see searchesChanged). Revisions are numbered by
 * one sequence; a revision starts at this node's microsecond clock, and
 * always after the revision it closes, so that each revision of a resource
 * has its own ETag (sha1 of id and revision_start) whatever the node.
 * A lost connection is EngineUnavailable (connection.ts).
 */
import type { ArchivePolicy } from '../../archive-policy.js';
import {
  ArchivePolicyAlreadyExists,
  ArchivePolicyInUse,
  ArchivePolicyRuleAlreadyExists,
  BadRequest,
  InvalidPagination,
  NamedMetricAlreadyExists,
  NoArchivePolicyRuleMatch,
  NoSuchArchivePolicy,
  NoSuchArchivePolicyRule,
  NoSuchMetric,
  NoSuchResource,
  NoSuchResourceType,
  ResourceAlreadyExists,
  ResourceTypeAlreadyExists,
  ResourceTypeInUse,
  UnexpectedResourceTypeState,
} from '../../errors.js';
import { compileGlob } from '../../glob.js';
import { failpoint, FAILPOINTS_ARMED } from '../../failpoints.js';
import { newMetricId } from '../../metric-id.js';
import type { ArchivePolicyRule, ListMetricsOptions, MetricFilter, MetricRecord, MetricSortKey } from '../../index.js';
import type { QueryNode } from '../../../formats/resource-query.js';
import { compileQuery, fieldKind } from '../../resource-search.js';
import { parseTimestamp } from '../../../formats/timestamp.js';
import { applyChanges, newResourceRecord, nowMicros, type ListResourcesOptions, type MetricSpec, type NewResource, type ResourceChanges, type ResourceRecord, type Revision } from '../../resources.js';
import { GENERIC, type AttributeDef, type AttributeValue, type ResourceTypeRecord } from '../../resource-type.js';
import type { IndexStore } from '../index-store.js';
import { CHANNEL, IndexCache } from './cache.js';
import { Connection, type Queryable } from './connection.js';
import { createAttributeIndexes, dropAttributeIndexes, ensureSchema, insertPolicies, type Seed } from './schema.js';
import { keysetAfterSql, listSql, matchingIdsSql, Params } from './search-sql.js';

export interface PostgresIndexStoreOptions {
  /** Connections in the pool. */
  poolSize?: number;
  /**
   * Awaited after a commit that deleted metrics (their series live in
   * another store), and again for those it failed for, every
   * DROP_RETRY_MS, until it succeeds once: it must be idempotent.
   */
  onMetricsDeleted?: (ids: string[]) => void | Promise<void>;
  /** What a new index starts with (the default policies and rule). */
  seed?: Seed;
}

/** A write in progress: its connection and the cache keys it changes ('*': all). */
interface Tx {
  client: Queryable;
  changed(...keys: string[]): void;
}

type Row = Record<string, unknown>;

const REVISION_COLUMNS = 'id, type, original_resource_id, creator, user_id, project_id, started_at, ended_at, revision_start, attrs';

function resourceOf(row: Row): ResourceRecord {
  return {
    id: row.id as string,
    type: row.type as string,
    originalResourceId: row.original_resource_id as string,
    creator: row.creator as string,
    userId: row.user_id as string | null,
    projectId: row.project_id as string | null,
    startedAt: row.started_at as number,
    endedAt: row.ended_at as number | null,
    revisionStart: row.revision_start as number,
    attrs: row.attrs as ResourceRecord['attrs'],
  };
}

const revisionOf = (row: Row): Revision => ({ ...resourceOf(row), revision: row.revision as number, revisionEnd: row.revision_end as number | null });

function metricOf(row: Row): MetricRecord {
  return {
    id: row.id as string,
    name: row.name as string | null,
    unit: row.unit as string | null,
    archivePolicyName: row.archive_policy_name as string,
    creator: row.creator as string,
    resourceId: row.resource_id as string | null,
  };
}

function typeOf(row: Row): ResourceTypeRecord {
  return { name: row.name as string, state: row.state as ResourceTypeRecord['state'], attributes: row.attributes as AttributeDef[] };
}

/** Values of a revision row, in REVISION_COLUMNS order. */
/** SQL types of REVISION_COLUMNS, for unnest. */
const REVISION_TYPES = ['text', 'text', 'text', 'text', 'text', 'text', 'bigint', 'bigint', 'bigint', 'jsonb'];
const revisionValues = (r: ResourceRecord): unknown[] => [
  r.id, r.type, r.originalResourceId, r.creator, r.userId, r.projectId, r.startedAt, r.endedAt, r.revisionStart, JSON.stringify(r.attrs),
];

const METRIC_COLUMNS: Record<MetricSortKey, string> = {
  id: 'id', name: 'name', unit: 'unit', archive_policy_name: 'archive_policy_name', creator: 'creator', resource_id: 'resource_id',
};

const metricKey = (id: string) => `m:${id}`;
const policyKey = (name: string) => `p:${name}`;
const typeKey = (name: string) => `t:${name}`;
const resourceKey = (id: string) => `r:${id}`;
const namedKey = (id: string) => `mo:${id}`;
const RULES_KEY = 'rules';
/** The cache group of a type's search answers. */
const searchesKey = (type: string) => `s:${type}`;

/**
 * The keys a change to a row (or the history) of a resource of `type`
 * notifies: its type's searches, and generic's, which span every type.
 */
const searchesChanged = (type: string): string[] =>
  type === GENERIC.name ? [searchesKey(type)] : [searchesKey(type), searchesKey(GENERIC.name)];

/**
 * A search's cache key: its options as JSON, with the numbers JSON cannot
 * tell apart spelt out (a query value of -0 is not 0 to `like`, NaN or
 * Infinity not null).
 */
function answerKey(options: ListResourcesOptions): string {
  return JSON.stringify(options, (_, v: unknown) =>
    typeof v === 'number' && (!Number.isFinite(v) || Object.is(v, -0)) ? { number: Object.is(v, -0) ? '-0' : String(v) } : v);
}

/**
 * Whether a filter reads the clock: a datetime compared with a time
 * relative to now ("now", "today", "-2 days") names a new instant at each
 * search, so its answer cannot be kept. `like` compares text.
 */
function readsClock(node: QueryNode, type: ResourceTypeRecord): boolean {
  switch (node.kind) {
    case 'empty':
      return false;
    case 'not':
      return readsClock(node.child, type);
    case 'and':
    case 'or':
      return node.children.some((c) => readsClock(c, type));
    case 'compare': {
      if (node.op === 'like' || fieldKind(type, node.field) !== 'datetime') return false;
      const values = Array.isArray(node.value) ? node.value : [node.value];
      return values.some((v) => {
        const reading = { relative: false };
        try {
          parseTimestamp(v, 0, reading);
        } catch {
          // Refused by compileQuery before any search runs.
        }
        return reading.relative;
      });
    }
  }
}

const isUniqueViolation = (err: unknown, constraint: string) =>
  (err as { code?: string }).code === '23505' && (err as { constraint?: string }).constraint === constraint;

/** How long after its delete a metric's series drop is tried again, and how often. */
const DROP_RETRY_MS = 60_000;

export class PostgresIndexStore implements IndexStore {
  private pendingPolicyWrites = 0;
  private readonly dropTimer: NodeJS.Timeout;

  private constructor(
    private readonly db: Connection,
    private readonly cache: IndexCache,
    private readonly onMetricsDeleted: (ids: string[]) => void | Promise<void>,
  ) {
    this.dropTimer = setInterval(() => void this.retryDrops().catch(() => {}), DROP_RETRY_MS).unref();
  }

  /** Connects, creates the schema if the database has none, and starts listening for other nodes' changes. */
  static async open(url: string, options: PostgresIndexStoreOptions = {}): Promise<PostgresIndexStore> {
    const db = new Connection(url, options.poolSize);
    const cache = new IndexCache(url);
    try {
      await db.transaction((client) => ensureSchema(client, options.seed));
      await cache.start();
    } catch (err) {
      await cache.close();
      await db.end();
      throw err;
    }
    return new PostgresIndexStore(db, cache, options.onMetricsDeleted ?? (() => {}));
  }

  async close(): Promise<void> {
    clearInterval(this.dropTimer);
    await this.cache.close();
    await this.db.end();
  }

  /** Notes in the deleting transaction that these metrics' series are to be dropped. */
  private async toDrop(tx: Tx, ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await tx.client.query('INSERT INTO metrics_to_drop (id, deleted_at) SELECT unnest($1::text[]), $2 ON CONFLICT DO NOTHING', [ids, Date.now()]);
  }

  /**
   * After the deleting commit: drops the series, then forgets them. A
   * failure leaves them to retryDrops and the delete stands: it committed.
   */
  private async drop(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    try {
      await this.onMetricsDeleted(ids);
      await this.db.query('DELETE FROM metrics_to_drop WHERE id = ANY($1::text[])', [ids]);
    } catch {
      // retryDrops tries again.
    }
  }

  /**
   * Drops the series of metrics deleted at least `olderThanMs` ago whose
   * drop failed (the series store was down, or the node died before it):
   * any node may do it, twice is harmless.
   */
  async retryDrops(olderThanMs = DROP_RETRY_MS): Promise<void> {
    const { rows } = await this.db.query('SELECT id FROM metrics_to_drop WHERE deleted_at <= $1 ORDER BY deleted_at LIMIT 1000', [Date.now() - olderThanMs]);
    await this.drop(rows.map((r) => r.id as string));
  }

  /**
   * Returns once this node's cache reflects every index write committed,
   * on any node, before the call: for reads that must see them (`refresh`).
   */
  sync(): Promise<void> {
    return this.cache.sync();
  }

  /**
   * One write transaction. Its changed keys are notified inside it (so every
   * node hears of them if and only if it commits), dropped here after it
   * ends, and the write returns once its own notification came back.
   */
  private async write<T>(f: (tx: Tx) => Promise<T>): Promise<T> {
    const keys: string[] = [];
    let seq: number | undefined;
    let own: Promise<void> | undefined;
    try {
      const result = await this.db.transaction(async (client) => {
        const value = await f({ client, changed: (...k) => keys.push(...k) });
        if (keys.length > 0) {
          // '*' as such: a list holding '*' would drop only a key named so on the other nodes.
          const notice = this.cache.notice(keys.includes('*') ? '*' : [...new Set(keys)]);
          seq = notice.seq;
          own = this.cache.expect(seq);
          await client.query('SELECT pg_notify($1, $2)', [CHANNEL, notice.payload]);
        }
        return value;
      });
      this.cache.drop(keys.includes('*') ? '*' : keys);
      if (FAILPOINTS_ARMED) await failpoint('index.committed');
      await own;
      return result;
    } catch (err) {
      this.cache.drop(keys.includes('*') ? '*' : keys);
      if (seq !== undefined) this.cache.forget(seq);
      throw err;
    }
  }

  private async policyWrite<T>(f: (tx: Tx) => Promise<T>): Promise<T> {
    this.pendingPolicyWrites++;
    try {
      return await this.write(f);
    } finally {
      this.pendingPolicyWrites--;
    }
  }

  // --- archive policies and rules -------------------------------------

  getPolicy(name: string): Promise<ArchivePolicy | undefined> {
    return this.cache.get(policyKey(name), async () => {
      const { rows } = await this.db.query('SELECT policy FROM archive_policies WHERE name = $1', [name]);
      return rows[0]?.policy as ArchivePolicy | undefined;
    });
  }

  async policiesChanging(): Promise<boolean> {
    return this.pendingPolicyWrites > 0;
  }

  async listPolicies(): Promise<ArchivePolicy[]> {
    const { rows } = await this.db.query('SELECT policy FROM archive_policies ORDER BY name');
    return rows.map((r) => r.policy as ArchivePolicy);
  }

  createPolicy(policy: ArchivePolicy): Promise<ArchivePolicy> {
    return this.policyWrite(async (tx) => {
      const { rowCount } = await tx.client.query(
        'INSERT INTO archive_policies (name, policy) VALUES ($1, $2) ON CONFLICT DO NOTHING',
        [policy.name, JSON.stringify(policy)],
      );
      if (rowCount === 0) throw new ArchivePolicyAlreadyExists(policy.name);
      tx.changed(policyKey(policy.name));
      return policy;
    });
  }

  ensurePolicies(policies: ArchivePolicy[], rules: ArchivePolicyRule[]): Promise<void> {
    return this.policyWrite(async (tx) => {
      await insertPolicies(tx.client, { policies, rules });
      tx.changed(...policies.map((p) => policyKey(p.name)), RULES_KEY);
    });
  }

  updatePolicy(name: string, update: (current: ArchivePolicy) => ArchivePolicy): Promise<ArchivePolicy> {
    return this.policyWrite(async (tx) => {
      const { rows } = await tx.client.query('SELECT policy FROM archive_policies WHERE name = $1 FOR UPDATE', [name]);
      if (rows.length === 0) throw new NoSuchArchivePolicy(name);
      const next = update(rows[0]!.policy as ArchivePolicy);
      await tx.client.query('UPDATE archive_policies SET policy = $2 WHERE name = $1', [name, JSON.stringify(next)]);
      tx.changed(policyKey(name));
      return next;
    });
  }

  deletePolicy(name: string): Promise<void> {
    return this.policyWrite(async (tx) => {
      const { rowCount } = await tx.client.query('SELECT 1 FROM archive_policies WHERE name = $1 FOR UPDATE', [name]);
      if (rowCount === 0) throw new NoSuchArchivePolicy(name);
      const { rows } = await tx.client.query(
        `SELECT EXISTS (SELECT 1 FROM archive_policy_rules WHERE archive_policy_name = $1)
             OR EXISTS (SELECT 1 FROM metrics WHERE archive_policy_name = $1) AS used`,
        [name],
      );
      if (rows[0]!.used === true) throw new ArchivePolicyInUse(name);
      await tx.client.query('DELETE FROM archive_policies WHERE name = $1', [name]);
      tx.changed(policyKey(name));
    });
  }

  async getRule(name: string): Promise<ArchivePolicyRule | undefined> {
    const { rows } = await this.db.query('SELECT name, metric_pattern, archive_policy_name FROM archive_policy_rules WHERE name = $1', [name]);
    return rows.length === 0 ? undefined : ruleOf(rows[0]!);
  }

  async listRules(): Promise<ArchivePolicyRule[]> {
    const rules = await this.cache.get(RULES_KEY, async () => {
      const { rows } = await this.db.query('SELECT name, metric_pattern, archive_policy_name FROM archive_policy_rules ORDER BY name');
      return rows.map(ruleOf);
    });
    return [...rules!].sort((a, b) => (a.metricPattern < b.metricPattern ? 1 : a.metricPattern > b.metricPattern ? -1 : 0));
  }

  createRule(rule: ArchivePolicyRule): Promise<ArchivePolicyRule> {
    return this.write(async (tx) => {
      const policy = await tx.client.query('SELECT 1 FROM archive_policies WHERE name = $1 FOR KEY SHARE', [rule.archivePolicyName]);
      if (policy.rowCount === 0) throw new BadRequest({ cause: 'Archive policy does not exist', detail: rule.archivePolicyName });
      const { rowCount } = await tx.client.query(
        'INSERT INTO archive_policy_rules (name, metric_pattern, archive_policy_name) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
        [rule.name, rule.metricPattern, rule.archivePolicyName],
      );
      if (rowCount === 0) throw new ArchivePolicyRuleAlreadyExists(rule.name);
      tx.changed(RULES_KEY);
      return rule;
    });
  }

  renameRule(name: string, newName: string): Promise<ArchivePolicyRule> {
    return this.write(async (tx) => {
      const { rows } = await tx.client.query('SELECT name, metric_pattern, archive_policy_name FROM archive_policy_rules WHERE name = $1 FOR UPDATE', [name]);
      if (rows.length === 0) throw new NoSuchArchivePolicyRule(name);
      if (newName !== name) {
        const taken = await tx.client.query('SELECT 1 FROM archive_policy_rules WHERE name = $1', [newName]);
        if (taken.rowCount !== 0) {
          throw new BadRequest(`Archive policy rule ${name} does not support change: Archive policy rule ${newName} already exists.`);
        }
        await tx.client.query('UPDATE archive_policy_rules SET name = $2 WHERE name = $1', [name, newName]);
      }
      tx.changed(RULES_KEY);
      return { ...ruleOf(rows[0]!), name: newName };
    });
  }

  deleteRule(name: string): Promise<void> {
    return this.write(async (tx) => {
      const { rowCount } = await tx.client.query('DELETE FROM archive_policy_rules WHERE name = $1', [name]);
      if (rowCount === 0) throw new NoSuchArchivePolicyRule(name);
      tx.changed(RULES_KEY);
    });
  }

  async policyNameForMetric(metricName: string | null): Promise<string> {
    const name = metricName ?? '';
    const rules = (await this.listRules()).sort((a, b) => b.metricPattern.length - a.metricPattern.length);
    for (const rule of rules) {
      if (compileGlob(rule.metricPattern).test(name)) return rule.archivePolicyName;
    }
    throw new NoArchivePolicyRuleMatch(metricName);
  }

  // --- metrics -----------------------------------------------------------

  getMetric(id: string): Promise<MetricRecord | undefined> {
    return this.cache.get(metricKey(id), async () => {
      const { rows } = await this.db.query('SELECT * FROM metrics WHERE id = $1', [id]);
      return rows.length === 0 ? undefined : metricOf(rows[0]!);
    });
  }

  async getMetrics(ids: readonly string[]): Promise<(MetricRecord | undefined)[]> {
    const byKey = await this.cache.getMany(ids.map(metricKey), async (missing) => {
      const { rows } = await this.db.query('SELECT * FROM metrics WHERE id = ANY($1::text[])', [missing.map((k) => k.slice(2))]);
      return new Map(rows.map((r) => [metricKey(r.id as string), metricOf(r)]));
    });
    return ids.map((id) => byKey.get(metricKey(id)));
  }

  /** Only new series ask (the collectors' cap), so an exact count is affordable. */
  async countMetrics(): Promise<number> {
    const { rows } = await this.db.query('SELECT count(*)::bigint AS n FROM metrics');
    return Number(rows[0]!.n);
  }

  createMetric(metric: MetricRecord): Promise<MetricRecord> {
    return this.write(async (tx) => {
      const policy = await tx.client.query('SELECT 1 FROM archive_policies WHERE name = $1 FOR KEY SHARE', [metric.archivePolicyName]);
      if (policy.rowCount === 0) throw new BadRequest(`Archive policy ${metric.archivePolicyName} does not exist`);
      if (metric.resourceId !== null && metric.name !== null) {
        const r = await tx.client.query('SELECT 1 FROM resources WHERE id = $1 FOR KEY SHARE', [metric.resourceId]);
        if (r.rowCount === 0) throw new NoSuchResource(metric.resourceId);
        const owner = await tx.client.query('SELECT 1 FROM metrics WHERE resource_id = $1 AND name = $2', [metric.resourceId, metric.name]);
        if (owner.rowCount !== 0) throw new NamedMetricAlreadyExists(metric.name);
        tx.changed(namedKey(metric.resourceId));
      }
      await this.insertMetric(tx, metric);
      return metric;
    });
  }

  private async insertMetric(tx: Tx, m: MetricRecord): Promise<void> {
    try {
      await tx.client.query(
        'INSERT INTO metrics (id, name, unit, archive_policy_name, creator, resource_id) VALUES ($1, $2, $3, $4, $5, $6)',
        [m.id, m.name, m.unit, m.archivePolicyName, m.creator, m.resourceId],
      );
    } catch (err) {
      // Another node named a metric the same meanwhile.
      if (isUniqueViolation(err, 'metrics_resource_name')) throw new NamedMetricAlreadyExists(m.name!);
      throw err;
    }
    tx.changed(metricKey(m.id));
  }

  async deleteMetric(id: string): Promise<void> {
    await this.write(async (tx) => {
      const { rows } = await tx.client.query('DELETE FROM metrics WHERE id = $1 RETURNING resource_id', [id]);
      if (rows.length === 0) throw new NoSuchMetric(id);
      await this.toDrop(tx, [id]);
      tx.changed(metricKey(id));
      if (rows[0]!.resource_id !== null) tx.changed(namedKey(rows[0]!.resource_id as string));
    });
    await this.drop([id]);
  }

  async listMetrics(options: ListMetricsOptions): Promise<MetricRecord[]> {
    const params = new Params();
    const where: string[] = [];
    for (const [key, value] of Object.entries(options.filter) as [keyof MetricFilter, string][]) {
      where.push(`${METRIC_COLUMNS[key]} = ${params.add(value, 'text')}`);
    }
    const sorts = options.sorts.some((s) => s.key === 'id') ? options.sorts : [...options.sorts, { key: 'id' as const, direction: 'asc' as const }];
    if (options.marker !== undefined) {
      const after = await this.getMetric(options.marker);
      if (after === undefined) throw new InvalidPagination(`Invalid marker: \`${options.marker}'`);
      const values: Record<MetricSortKey, string | null> = {
        id: after.id, name: after.name, unit: after.unit, archive_policy_name: after.archivePolicyName, creator: after.creator, resource_id: after.resourceId,
      };
      // metricComparator: NULLs compare greater, so last ascending and first descending.
      where.push(keysetAfterSql(sorts.map((s) => ({
        sql: METRIC_COLUMNS[s.key], type: 'text' as const, value: values[s.key], direction: s.direction, nulls: s.direction === 'asc' ? 'last' as const : 'first' as const,
      })), params));
    }
    const order = sorts.map((s) => `${METRIC_COLUMNS[s.key]} ${s.direction === 'asc' ? 'ASC NULLS LAST' : 'DESC NULLS FIRST'}`).join(', ');
    const { rows } = await this.db.query(
      `SELECT * FROM metrics${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order} LIMIT ${Math.max(0, Math.floor(options.limit))}`,
      params.values,
    );
    return rows.map(metricOf);
  }

  // --- resource types ------------------------------------------------------

  async findType(name: string): Promise<ResourceTypeRecord | undefined> {
    if (name === 'generic') return GENERIC;
    return this.cache.get(typeKey(name), async () => {
      const { rows } = await this.db.query('SELECT name, state, attributes FROM resource_types WHERE name = $1', [name]);
      return rows.length === 0 ? undefined : typeOf(rows[0]!);
    });
  }

  async getType(name: string): Promise<ResourceTypeRecord> {
    const rt = await this.findType(name);
    if (rt === undefined) throw new NoSuchResourceType(name);
    return rt;
  }

  async listTypes(): Promise<ResourceTypeRecord[]> {
    const { rows } = await this.db.query('SELECT name, state, attributes FROM resource_types');
    const types = [GENERIC, ...rows.map(typeOf)];
    return types.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  createType(rt: ResourceTypeRecord): Promise<ResourceTypeRecord> {
    return this.write(async (tx) => {
      if (rt.name === 'generic') throw new ResourceTypeAlreadyExists(rt.name);
      // Indexes are built in the same transaction: the type is ready when it shows.
      const active: ResourceTypeRecord = { ...rt, state: 'active' };
      const { rows } = await tx.client.query(
        'INSERT INTO resource_types (name, state, attributes) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING tid',
        [rt.name, active.state, JSON.stringify(rt.attributes)],
      );
      if (rows.length === 0) throw new ResourceTypeAlreadyExists(rt.name);
      for (const def of rt.attributes) await createAttributeIndexes(tx.client, rt.name, rows[0]!.tid as number, def);
      tx.changed(typeKey(rt.name), searchesKey(rt.name));
      return active;
    });
  }

  /** The type's row, locked for a change of the type itself. */
  private async lockType(tx: Tx, name: string): Promise<{ rt: ResourceTypeRecord; tid: number }> {
    const { rows } = await tx.client.query('SELECT name, tid, state, attributes FROM resource_types WHERE name = $1 FOR UPDATE', [name]);
    if (rows.length === 0) throw new NoSuchResourceType(name);
    return { rt: typeOf(rows[0]!), tid: rows[0]!.tid as number };
  }

  /** A type resources can be written to: active, and kept from changing until the write ends. */
  private async activeType(tx: Tx, name: string): Promise<ResourceTypeRecord> {
    if (name === 'generic') return GENERIC;
    const { rows } = await tx.client.query('SELECT name, state, attributes FROM resource_types WHERE name = $1 FOR SHARE', [name]);
    if (rows.length === 0) throw new NoSuchResourceType(name);
    const rt = typeOf(rows[0]!);
    if (rt.state !== 'active') throw new UnexpectedResourceTypeState(name, 'active', rt.state);
    return rt;
  }

  deleteType(name: string): Promise<void> {
    return this.write(async (tx) => {
      if (name === 'generic') throw new ResourceTypeInUse(name);
      const { rt, tid } = await this.lockType(tx, name);
      if (!['active', 'deletion_error', 'creation_error', 'updating_error'].includes(rt.state)) {
        throw new UnexpectedResourceTypeState(name, 'active/deletion_error/creation_error/updating_error', rt.state);
      }
      const used = await tx.client.query('SELECT 1 FROM resources WHERE type = $1 LIMIT 1', [name]);
      if (used.rowCount !== 0) throw new ResourceTypeInUse(name);
      for (const a of rt.attributes) await dropAttributeIndexes(tx.client, tid, a.name);
      await tx.client.query('DELETE FROM resource_types WHERE name = $1', [name]);
      tx.changed(typeKey(name), searchesKey(name));
    });
  }

  updateTypeAttributes(name: string, add: { def: AttributeDef; fill: AttributeValue }[], remove: string[]): Promise<ResourceTypeRecord> {
    return this.write(async (tx) => {
      const { rt, tid } = await this.lockType(tx, name);
      if (rt.state !== 'active') throw new UnexpectedResourceTypeState(name, 'active', rt.state);
      const attributes = rt.attributes.filter((a) => !remove.includes(a.name)).concat(add.map((a) => a.def));
      const next: ResourceTypeRecord = { ...rt, attributes };
      const filled = JSON.stringify(Object.fromEntries(add.map((a) => [a.def.name, a.fill])));
      for (const table of ['resources', 'resource_history']) {
        await tx.client.query(`UPDATE ${table} SET attrs = (attrs - $2::text[]) || $3::jsonb WHERE type = $1`, [name, remove, filled]);
      }
      for (const n of remove) await dropAttributeIndexes(tx.client, tid, n);
      for (const a of add) await createAttributeIndexes(tx.client, name, tid, a.def);
      await tx.client.query('UPDATE resource_types SET attributes = $2 WHERE name = $1', [name, JSON.stringify(attributes)]);
      // Every resource of the type changed, and its searches (a filter's or sort's attribute may be gone).
      tx.changed('*');
      return next;
    });
  }

  // --- resources -----------------------------------------------------------

  private current(id: string): Promise<ResourceRecord | undefined> {
    return this.cache.get(resourceKey(id), async () => {
      const { rows } = await this.db.query(`SELECT ${REVISION_COLUMNS} FROM resources WHERE id = $1`, [id]);
      return rows.length === 0 ? undefined : resourceOf(rows[0]!);
    });
  }

  async get(type: string, id: string): Promise<ResourceRecord | undefined> {
    const r = await this.current(id);
    return r === undefined || (type !== 'generic' && r.type !== type) ? undefined : r;
  }

  async getResources(ids: readonly string[]): Promise<Map<string, ResourceRecord>> {
    const byKey = await this.cache.getMany(ids.map(resourceKey), async (missing) => {
      const { rows } = await this.db.query(`SELECT ${REVISION_COLUMNS} FROM resources WHERE id = ANY($1::text[])`, [missing.map((k) => k.slice(2))]);
      return new Map(rows.map((r) => [resourceKey(r.id as string), resourceOf(r)]));
    });
    return new Map([...byKey.values()].map((r) => [r.id, r]));
  }

  async metricsOf(id: string): Promise<Map<string, string>> {
    return (await this.metricsOfResources([id])).get(id)!;
  }

  async metricsOfResources(ids: readonly string[]): Promise<Map<string, Map<string, string>>> {
    const byKey = await this.cache.getMany(ids.map(namedKey), async (missing) => {
      const out = new Map(missing.map((k) => [k, new Map<string, string>()]));
      const { rows } = await this.db.query(
        'SELECT resource_id, name, id FROM metrics WHERE resource_id = ANY($1::text[]) AND name IS NOT NULL ORDER BY resource_id, name',
        [missing.map((k) => k.slice(3))],
      );
      for (const r of rows) out.get(namedKey(r.resource_id as string))!.set(r.name as string, r.id as string);
      return out;
    });
    return new Map(ids.map((id) => [id, byKey.get(namedKey(id)) ?? new Map()]));
  }

  async metricByName(resourceId: string, name: string): Promise<MetricRecord | undefined> {
    const id = (await this.metricsOf(resourceId)).get(name);
    return id === undefined ? undefined : this.getMetric(id);
  }

  create(type: string, input: NewResource): Promise<ResourceRecord> {
    return this.write((tx) => this.insert(tx, type, input));
  }

  /**
   * The collectors' bulk path: new resources in one INSERT, and their new
   * metrics in another (a statement per resource cost ~0.65 ms each).
   */
  createAndExtend(type: string, created: readonly NewResource[], extended: readonly { id: string; metrics: Map<string, MetricSpec> }[]): Promise<void> {
    return this.write(async (tx) => {
      const records = await this.insertMany(tx, type, created);
      const fresh: MetricRecord[] = [];
      for (const [i, r] of records.entries()) {
        const metrics = created[i]!.metrics ?? new Map<string, MetricSpec>();
        // A new resource has no named metric yet: only a policy can be missing.
        if ([...metrics.values()].every((spec) => spec.kind === 'new')) {
          for (const [name, spec] of metrics) {
            if (spec.kind === 'new') fresh.push({ id: spec.id ?? newMetricId(), name, unit: spec.unit, archivePolicyName: spec.archivePolicyName, creator: r.creator, resourceId: r.id });
          }
        } else {
          await this.setMetrics(tx, r, metrics);
        }
      }
      await this.insertMetrics(tx, fresh);
      for (const { id, metrics } of extended) await this.change(tx, type, id, { metrics }, true);
    });
  }

  private async insert(tx: Tx, type: string, input: NewResource): Promise<ResourceRecord> {
    const [r] = await this.insertMany(tx, type, [input]);
    if (input.metrics !== undefined) await this.setMetrics(tx, r!, input.metrics);
    return r!;
  }

  /** New resources, without their metrics: all inserted, or ResourceAlreadyExists of the first taken id. */
  private async insertMany(tx: Tx, type: string, inputs: readonly NewResource[]): Promise<ResourceRecord[]> {
    if (inputs.length === 0) return [];
    await this.activeType(tx, type);
    const records = inputs.map((input) => newResourceRecord(type, input));
    const columns = REVISION_TYPES.map((_, c) => records.map((r) => revisionValues(r)[c]));
    const { rows } = await tx.client.query(
      `INSERT INTO resources (${REVISION_COLUMNS}) SELECT * FROM unnest(${REVISION_TYPES.map((t, c) => `$${c + 1}::${t}[]`).join(', ')})
       ON CONFLICT DO NOTHING RETURNING id`,
      columns,
    );
    if (rows.length < records.length) {
      // Taken before, or twice in this batch (the second is not inserted).
      const inserted = new Set(rows.map((row) => row.id as string));
      throw new ResourceAlreadyExists(records.find((r) => !inserted.delete(r.id))!.id);
    }
    for (const r of records) tx.changed(resourceKey(r.id), namedKey(r.id));
    tx.changed(...searchesChanged(type));
    return records;
  }

  /** New named metrics of new resources, in one statement, once their policies are known to exist. */
  private async insertMetrics(tx: Tx, metrics: readonly MetricRecord[]): Promise<void> {
    if (metrics.length === 0) return;
    const policies = [...new Set(metrics.map((m) => m.archivePolicyName))];
    const { rows } = await tx.client.query('SELECT name FROM archive_policies WHERE name = ANY($1::text[]) FOR KEY SHARE', [policies]);
    const known = new Set(rows.map((row) => row.name as string));
    const missing = policies.find((name) => !known.has(name));
    if (missing !== undefined) throw new BadRequest(new NoSuchArchivePolicy(missing).message);
    const fields = ['id', 'name', 'unit', 'archivePolicyName', 'creator', 'resourceId'] as const;
    try {
      await tx.client.query(
        'INSERT INTO metrics (id, name, unit, archive_policy_name, creator, resource_id) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])',
        fields.map((f) => metrics.map((m) => m[f])),
      );
    } catch (err) {
      // Another node named a metric of one of these resources meanwhile.
      if (isUniqueViolation(err, 'metrics_resource_name')) throw new NamedMetricAlreadyExists(metrics.find((m) => m.name !== null)!.name!);
      throw err;
    }
    for (const m of metrics) tx.changed(metricKey(m.id));
  }

  private async setMetrics(tx: Tx, r: ResourceRecord, metrics: Map<string, MetricSpec>): Promise<void> {
    for (const [name, spec] of metrics) {
      const owner = async () => {
        const { rows } = await tx.client.query('SELECT id FROM metrics WHERE resource_id = $1 AND name = $2', [r.id, name]);
        return rows[0]?.id as string | undefined;
      };
      if (spec.kind === 'existing') {
        const { rows } = await tx.client.query('SELECT * FROM metrics WHERE id = $1 FOR UPDATE', [spec.id]);
        const m = rows.length === 0 ? undefined : metricOf(rows[0]!);
        if (m === undefined || m.creator !== r.creator) throw new BadRequest(new NoSuchMetric(spec.id).message);
        const taken = await owner();
        if (taken !== undefined && taken !== m.id) throw new NamedMetricAlreadyExists(name);
        try {
          await tx.client.query('UPDATE metrics SET resource_id = $2, name = $3 WHERE id = $1', [m.id, r.id, name]);
        } catch (err) {
          if (isUniqueViolation(err, 'metrics_resource_name')) throw new NamedMetricAlreadyExists(name);
          throw err;
        }
        tx.changed(metricKey(m.id), namedKey(r.id));
        if (m.resourceId !== null) tx.changed(namedKey(m.resourceId));
      } else {
        const policy = await tx.client.query('SELECT 1 FROM archive_policies WHERE name = $1 FOR KEY SHARE', [spec.archivePolicyName]);
        if (policy.rowCount === 0) throw new BadRequest(new NoSuchArchivePolicy(spec.archivePolicyName).message);
        if ((await owner()) !== undefined) throw new NamedMetricAlreadyExists(name);
        await this.insertMetric(tx, {
          id: spec.id ?? newMetricId(),
          name,
          unit: spec.unit,
          archivePolicyName: spec.archivePolicyName,
          creator: r.creator,
          resourceId: r.id,
        });
        tx.changed(namedKey(r.id));
      }
    }
  }

  update(type: string, id: string, changes: ResourceChanges, appendMetrics = false): Promise<ResourceRecord> {
    return this.write((tx) => this.change(tx, type, id, changes, appendMetrics));
  }

  private async change(tx: Tx, type: string, id: string, changes: ResourceChanges, appendMetrics: boolean): Promise<ResourceRecord> {
    await this.activeType(tx, type);
    const { rows } = await tx.client.query(`SELECT ${REVISION_COLUMNS} FROM resources WHERE id = $1 FOR UPDATE`, [id]);
    const r = rows.length === 0 ? undefined : resourceOf(rows[0]!);
    if (r === undefined || (type !== 'generic' && r.type !== type)) throw new NoSuchResource(id);
    const { next, changed } = applyChanges(type, r, changes);
    if (changed) {
      // After the revision it closes even if another node's clock is behind: its own ETag.
      const now = Math.max(nowMicros(), r.revisionStart + 1);
      await tx.client.query(
        `INSERT INTO resource_history (revision, ${REVISION_COLUMNS}, revision_end)
         SELECT nextval('resource_revision'), ${REVISION_COLUMNS}, $2 FROM resources WHERE id = $1`,
        [id, now],
      );
      next.revisionStart = now;
      await tx.client.query(
        `UPDATE resources SET user_id = $2, project_id = $3, started_at = $4, ended_at = $5, revision_start = $6, attrs = $7 WHERE id = $1`,
        [id, next.userId, next.projectId, next.startedAt, next.endedAt, now, JSON.stringify(next.attrs)],
      );
      tx.changed(resourceKey(id), ...searchesChanged(r.type));
    }
    if (changes.metrics !== undefined) {
      if (!appendMetrics) {
        const detached = await tx.client.query(
          'UPDATE metrics SET resource_id = NULL WHERE resource_id = $1 AND name IS NOT NULL RETURNING id',
          [id],
        );
        for (const m of detached.rows) tx.changed(metricKey(m.id as string));
        tx.changed(namedKey(id));
      }
      await this.setMetrics(tx, next, changes.metrics);
    }
    return changed ? next : r;
  }

  /** Deletes resources (locked first) with their history and named metrics; answers how many, and the metrics. */
  private async deleteIds(tx: Tx, ids: string[]): Promise<{ count: number; metrics: string[] }> {
    if (ids.length === 0) return { count: 0, metrics: [] };
    const locked = await tx.client.query('SELECT id, type FROM resources WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE', [ids]);
    const present = locked.rows.map((r) => r.id as string);
    if (present.length === 0) return { count: 0, metrics: [] };
    const metrics = await tx.client.query(
      'DELETE FROM metrics WHERE resource_id = ANY($1::text[]) AND name IS NOT NULL RETURNING id',
      [present],
    );
    await tx.client.query('DELETE FROM resource_history WHERE id = ANY($1::text[])', [present]);
    await tx.client.query('DELETE FROM resources WHERE id = ANY($1::text[])', [present]);
    const dropped = metrics.rows.map((m) => m.id as string);
    await this.toDrop(tx, dropped);
    for (const id of present) tx.changed(resourceKey(id), namedKey(id));
    for (const type of new Set(locked.rows.map((r) => r.type as string))) tx.changed(...searchesChanged(type));
    for (const id of dropped) tx.changed(metricKey(id));
    return { count: present.length, metrics: dropped };
  }

  async delete(type: string, id: string): Promise<void> {
    const { metrics } = await this.write(async (tx) => {
      const { rows } = await tx.client.query('SELECT type FROM resources WHERE id = $1 FOR UPDATE', [id]);
      if (rows.length === 0 || (type !== 'generic' && rows[0]!.type !== type)) throw new NoSuchResource(id);
      return this.deleteIds(tx, [id]);
    });
    await this.drop(metrics);
  }

  async deleteMatching(type: string, filter: QueryNode): Promise<number> {
    const rt = await this.getType(type);
    const query = matchingIdsSql(rt, filter);
    const { count, metrics } = await this.write(async (tx) => {
      const { rows } = await tx.client.query(query.text, query.values);
      return this.deleteIds(tx, rows.map((r) => r.id as string));
    });
    await this.drop(metrics);
    return count;
  }

  async firstRevisionStart(id: string): Promise<number | undefined> {
    const { rows } = await this.db.query(
      `SELECT revision_start FROM (
         (SELECT revision_start, 0 AS o FROM resource_history WHERE id = $1 ORDER BY revision LIMIT 1)
         UNION ALL SELECT revision_start, 1 FROM resources WHERE id = $1) t ORDER BY o LIMIT 1`,
      [id],
    );
    return rows[0]?.revision_start as number | undefined;
  }

  /** The revision a marker names (an id, or `id@revision` in history listings), of any type. */
  private async markerRevision(marker: string, history: boolean): Promise<Revision | undefined> {
    let id = marker;
    let revision = -1;
    if (history) {
      const at = marker.lastIndexOf('@');
      if (at === -1) return undefined;
      const rev = marker.slice(at + 1);
      if (!/^\s*[-+]?\d+\s*$/.test(rev)) return undefined;
      id = marker.slice(0, at);
      revision = Number.parseInt(rev, 10);
    }
    const { rows } = revision === -1
      ? await this.db.query(`SELECT ${REVISION_COLUMNS}, (-1)::bigint AS revision, NULL::bigint AS revision_end FROM resources WHERE id = $1`, [id])
      : await this.db.query(`SELECT ${REVISION_COLUMNS}, revision, revision_end FROM resource_history WHERE id = $1 AND revision = $2`, [id, revision]);
    return rows.length === 0 ? undefined : revisionOf(rows[0]!);
  }

  /**
   * A page of a search, from the cache when it holds the same search of the
   * same type. Everything it reads (the type, the marker, the rows) is read
   * inside the cache's load, so that a change to any of them invalidates the
   * fill. Not kept: a filter reading the clock, and a page after a marker of
   * another type (whose writes do not drop this type's searches).
   */
  async list(type: string, options: ListResourcesOptions): Promise<Revision[]> {
    const page = await this.cache.answer(searchesKey(type), answerKey(options), async () => {
      const rt = await this.getType(type);
      if (options.filter !== undefined) compileQuery(options.filter, rt);
      let after: Revision | undefined;
      if (options.marker !== undefined) {
        after = await this.markerRevision(options.marker, options.history);
        if (after === undefined) throw new InvalidPagination(`Invalid marker: \`${options.marker}'`);
      }
      const query = listSql(rt, { filter: options.filter, history: options.history, sorts: options.sorts, limit: options.limit, after });
      const { rows } = await this.db.query(query.text, query.values);
      const value = rows.map(revisionOf);
      const keep = (options.filter === undefined || !readsClock(options.filter, rt)) && (after === undefined || type === GENERIC.name || after.type === type);
      return { value, rows: keep ? value.length : undefined };
    });
    // The caller's array; the revisions are shared, as the cached records are.
    return page.slice();
  }
}

function ruleOf(row: Row): ArchivePolicyRule {
  return { name: row.name as string, metricPattern: row.metric_pattern as string, archivePolicyName: row.archive_policy_name as string };
}
