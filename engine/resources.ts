/**
 * The resource index: resource types, resources (current revision), their
 * history and their named metrics, in LMDB.
 *
 * Key layout (named databases of `storage.ts`):
 *   resource_types       name                      -> ResourceTypeRecord
 *   resources            uuid                      -> ResourceRecord (current revision)
 *                        and its named metrics (resource-records.ts)
 *   resource_history     [uuid, revision]          -> Revision (closed revisions)
 *   resources_by_revision_start
 *                        [type, revision_start, uuid] -> RevisionMark bits: what resource_values
 *                        leaves to it (revision-start-index.ts)
 *   resource_values, resource_history_values
 *                        per-field values (resource-value-index.ts)
 * Revision numbers come from one counter (meta `resourceRevision`), as
 * Gnocchi's history table autoincrements; the current revision is -1.
 * Listing keeps at most `limit` matches in memory whatever the index size.
 *
 * Query plan of `list` and `deleteMatching`: search-plan.ts picks index
 * entries (by id or field value) holding every match; without such a plan
 * the type's resources are scanned. Candidates are always re-checked
 * against the whole filter. A listing of current revisions in the default
 * order (`revision_start` first) reads its candidates' `revision_start` from
 * the index entries, sorts them and reads resources in that order until the
 * page is full and the next one starts after the page's last. When there
 * are many candidates (SORT_CANDIDATES_MAX) it first walks
 * resources_by_revision_start for WALK_BUDGET resources, as matches may be
 * dense (for `generic`, the walks of every type merged; from the least
 * revision_start a plan of revision_start ranges allows), and intersects
 * the candidates with the other indexed conjuncts of an `and` before
 * reading any. Other orders and history searches read every
 * (so narrowed) candidate and keep the best `limit`. Without a plan, a
 * default-order listing walks resources_by_revision_start to the end of
 * the page.
 */
import type { QueryNode } from '../formats/resource-query.js';
import type { IndexStore } from './drivers/index-store.js';
import type { Index, MetricRecord } from './index.js';
import {
  BadRequest,
  InvalidPagination,
  NamedMetricAlreadyExists,
  NoSuchArchivePolicy,
  NoSuchMetric,
  NoSuchResource,
  NoSuchResourceType,
  ResourceAlreadyExists,
  ResourceTypeAlreadyExists,
  ResourceTypeInUse,
  UnexpectedResourceTypeState,
} from './errors.js';
import { entryCount } from './db-stats.js';
import { newMetricId } from './metric-id.js';
import { silentProgress, type Progress } from './progress.js';
import { compileQuery, fieldKind, fieldOf, type Predicate, type ResourceRecord, type Revision } from './resource-search.js';
import { ResourceValueIndex } from './resource-value-index.js';
import { BUILTIN_RESOURCE_TYPES, GENERIC, type AttributeDef, type AttributeValue, type ResourceTypeRecord } from './resource-type.js';
import { RevisionStartIndex } from './revision-start-index.js';
import type { NamedMetrics } from './resource-records.js';
import { planSearch, type Plan } from './search-plan.js';
import type { Storage } from './storage.js';

export type { ResourceRecord, Revision } from './resource-search.js';

/**
 * A named metric to attach: an existing one, or a new one, of the id its
 * caller chose (a collector's write, which then knows its new metrics
 * without reading them back) or else a new one (engine/metric-id.ts).
 */
export type MetricSpec = { kind: 'existing'; id: string } | { kind: 'new'; archivePolicyName: string; unit: string | null; id?: string };

export interface NewResource {
  id: string;
  originalResourceId: string;
  creator: string;
  userId: string | null;
  projectId: string | null;
  startedAt?: number;
  endedAt: number | null;
  attrs: Record<string, AttributeValue>;
  metrics?: Map<string, MetricSpec>;
}

export interface ResourceChanges {
  userId?: string | null;
  projectId?: string | null;
  startedAt?: number;
  endedAt?: number | null;
  attrs?: Record<string, AttributeValue>;
  metrics?: Map<string, MetricSpec>;
}

/** The record of a resource being created now (without its metrics). */
export function newResourceRecord(type: string, input: NewResource): ResourceRecord {
  // One clock read for both: a resource that starts at its revision_start is filed by it once (revision-start-index.ts).
  const now = nowMicros();
  const startedAt = input.startedAt ?? now;
  if (input.endedAt !== null && startedAt > input.endedAt) throw new BadRequest('Start timestamp cannot be after end timestamp');
  return {
    id: input.id,
    type,
    originalResourceId: input.originalResourceId,
    creator: input.creator,
    userId: input.userId,
    projectId: input.projectId,
    startedAt,
    endedAt: input.endedAt,
    revisionStart: now,
    attrs: input.attrs,
  };
}

/**
 * The resource `changes` make of `r` (the revision fields still r's), and
 * whether they make a new revision: only a changed field or attribute does.
 */
export function applyChanges(type: string, r: ResourceRecord, changes: ResourceChanges): { next: ResourceRecord; changed: boolean } {
  const next: ResourceRecord = { ...r, attrs: { ...r.attrs, ...changes.attrs } };
  if (changes.userId !== undefined) next.userId = changes.userId;
  if (changes.projectId !== undefined) next.projectId = changes.projectId;
  if (changes.startedAt !== undefined) next.startedAt = changes.startedAt;
  if (changes.endedAt !== undefined) next.endedAt = changes.endedAt;
  if (next.endedAt !== null && next.startedAt > next.endedAt) {
    throw new BadRequest(`Value ${next.endedAt} for attribute ended_at on resource type ${type} is invalid`);
  }
  const changed =
    next.userId !== r.userId ||
    next.projectId !== r.projectId ||
    next.startedAt !== r.startedAt ||
    next.endedAt !== r.endedAt ||
    Object.keys(changes.attrs ?? {}).some((k) => next.attrs[k] !== r.attrs[k]);
  return { next, changed };
}

export interface SortSpec {
  key: string;
  direction: 'asc' | 'desc';
  nulls: 'first' | 'last';
}

export interface ListResourcesOptions {
  filter?: QueryNode | undefined;
  history: boolean;
  sorts: SortSpec[];
  limit: number;
  marker?: string | undefined;
}

export const DEFAULT_RESOURCE_SORT = ['revision_start:asc', 'started_at:asc'];

const DIRECTIONS: Record<string, [SortSpec['direction'], SortSpec['nulls']]> = {
  asc: ['asc', 'last'],
  desc: ['desc', 'first'],
  'asc-nullsfirst': ['asc', 'first'],
  'asc-nullslast': ['asc', 'last'],
  'desc-nullsfirst': ['desc', 'first'],
  'desc-nullslast': ['desc', 'last'],
};

/** `key:direction` strings as oslo.db reads them; unique keys appended. */
export function parseResourceSorts(raw: string[], type: ResourceTypeRecord, history: boolean): SortSpec[] {
  const sorts = raw.map((s) => {
    const colon = s.indexOf(':');
    const key = (colon === -1 ? s : s.slice(0, colon)).trim();
    const dir = colon === -1 ? 'asc' : s.slice(colon + 1) || 'asc';
    if (fieldKind(type, key) === undefined) throw new InvalidPagination(`Sort key supplied is invalid: ${key}`);
    const d = DIRECTIONS[dir];
    if (d === undefined) {
      throw new InvalidPagination(
        'Unknown sort direction, must be one of: asc-nullsfirst, asc-nullslast, desc-nullsfirst, desc-nullslast',
      );
    }
    return { key, direction: d[0], nulls: d[1] };
  });
  for (const key of history ? ['id', 'revision'] : ['id']) {
    if (!sorts.some((s) => s.key === key)) sorts.push({ key, direction: 'asc', nulls: 'last' });
  }
  return sorts;
}

/** The order of a listing under `sorts`. */
export function compareRevisions(sorts: SortSpec[]): (a: Revision, b: Revision) => number {
  return (a, b) => {
    for (const { key, direction, nulls } of sorts) {
      const x = fieldOf(a, key);
      const y = fieldOf(b, key);
      if (x === y) continue;
      if (x === null) return nulls === 'first' ? -1 : 1;
      if (y === null) return nulls === 'first' ? 1 : -1;
      const c = x < y ? -1 : 1;
      return direction === 'asc' ? c : -c;
    }
    return 0;
  };
}

const REVISION_INDEX_META = 'resourcesByRevisionStart';
/** 3: each resource under its own type only; 4: whether it started at its revision_start as the value; 5: its RevisionMark bits as the value. */
const REVISION_INDEX_VERSION = 5;
/**
 * Above this many candidates, a default-order listing first tries walking
 * every resource in revision_start order (matches may be dense), then
 * narrows the candidates with the other indexed conjuncts of an `and`.
 */
const SORT_CANDIDATES_MAX = 5_000;
/** Resources a default-order walk of every resource reads before turning to the plan's candidates. */
const WALK_BUDGET = 1_000;

/**
 * The least `revision_start` of the candidates of a plan made of
 * `revision_start` ranges (they hold every match): where a default-order
 * walk may start.
 */
function revisionStartFloor(plan: Plan | undefined): number | undefined {
  if (plan === undefined || plan.accesses.length === 0) return undefined;
  let floor = Number.POSITIVE_INFINITY;
  for (const a of plan.accesses) {
    if (a.kind !== 'range' || a.range.field !== 'revision_start' || a.range.nulls || typeof a.range.lo !== 'number') return undefined;
    floor = Math.min(floor, a.range.lo);
  }
  return floor;
}

/** A revision as one string: the id for the current one, else `id@revision`. */
const targetKey = (id: string, revision: number): string => (revision === -1 ? id : `${id}@${revision}`);

function splitTarget(at: string): [id: string, revision: number] {
  const i = at.lastIndexOf('@');
  return i === -1 ? [at, -1] : [at.slice(0, i), Number(at.slice(i + 1))];
}

const current = (r: ResourceRecord): Revision => ({ ...r, revision: -1, revisionEnd: null });

/** Read once: a getter into node's internals, called twice for each resource created. */
const TIME_ORIGIN = performance.timeOrigin;

/** Microseconds now; strictly increasing so each revision gets its own ETag. */
let lastNow = 0;
export function nowMicros(): number {
  const t = Math.round((TIME_ORIGIN + performance.now()) * 1000);
  lastNow = Math.max(t, lastNow + 1);
  return lastNow;
}

/**
 * Creates the named built-in resource types (BUILTIN_RESOURCE_TYPES) that
 * do not exist yet; an existing type of that name is left as it is.
 * Answers the names created.
 */
export async function ensureBuiltinResourceTypes(resources: Pick<IndexStore, 'findType' | 'createType'>, names: readonly string[]): Promise<string[]> {
  const created: string[] = [];
  for (const name of names) {
    const attributes = BUILTIN_RESOURCE_TYPES[name];
    if (attributes === undefined) throw new Error(`unknown built-in resource type ${name}`);
    if ((await resources.findType(name)) !== undefined) continue;
    try {
      await resources.createType({ name, state: 'creating', attributes: attributes.map((a) => ({ ...a })) });
      created.push(name);
    } catch (err) {
      if (!(err instanceof ResourceTypeAlreadyExists)) throw err;
    }
  }
  return created;
}

export class ResourceIndex {
  constructor(
    private readonly storage: Storage,
    private readonly index: Index,
    /** Called after a commit that deleted metrics (to drop processing state). */
    private readonly onMetricsDeleted: (ids: string[]) => void = () => {},
    /** Told the advance of index builds. */
    progress: Progress = silentProgress,
  ) {
    this.starts = new RevisionStartIndex(storage);
    this.values = new ResourceValueIndex(storage, this.starts);
    const rebuiltValues = this.values.ensureBuilt((type) => this.attributeNames(type), progress);
    // A data directory from before the index, or of its older layout, or whose value index (and so common creator) was just rebuilt: build it once.
    if (rebuiltValues || storage.meta.get(REVISION_INDEX_META) !== REVISION_INDEX_VERSION) {
      const task = progress.task('building resources_by_revision_start', entryCount(storage.resources));
      try {
        storage.root.transactionSync(() => {
          this.starts.rebuild(this.values.commonCreator(), () => task.advance());
          void storage.meta.put(REVISION_INDEX_META, REVISION_INDEX_VERSION);
        });
      } finally {
        task.finish();
      }
    }
  }

  private readonly starts: RevisionStartIndex;
  private readonly values: ResourceValueIndex;

  private attributeNames(type: string): string[] {
    return this.findType(type)?.attributes.map((a) => a.name) ?? [];
  }

  /** Adds (or removes) every index entry of a current resource (`attributes`: its type's, when the caller has them). */
  private indexCurrent(r: ResourceRecord, add: boolean, attributes: readonly string[] = this.attributeNames(r.type)): void {
    const common = this.values.claimCreator(r.creator);
    this.starts.write(r, add, common);
    this.values.indexCurrent(r, attributes, add, common);
  }

  /**
   * Runs `f` in one synchronous write transaction: unlike lmdb's async
   * `transaction()`, an error thrown by `f` rolls back the writes it made.
   * Resource writes may attach, detach or delete metrics (through the index,
   * whose cache of metric records must know).
   */
  private async write<T>(f: () => T): Promise<T> {
    return this.index.changingMetricsSync(() => this.storage.nameCodes.writing(() => this.storage.root.transactionSync(f)));
  }

  // --- resource types ---------------------------------------------------

  findType(name: string): ResourceTypeRecord | undefined {
    if (name === 'generic') return GENERIC;
    return this.storage.resourceTypes.get(name) as ResourceTypeRecord | undefined;
  }

  getType(name: string): ResourceTypeRecord {
    const rt = this.findType(name);
    if (rt === undefined) throw new NoSuchResourceType(name);
    return rt;
  }

  /** A type resources can be written to: it must be active. */
  private activeType(name: string): ResourceTypeRecord {
    const rt = this.getType(name);
    if (rt.state !== 'active') throw new UnexpectedResourceTypeState(name, 'active', rt.state);
    return rt;
  }

  listTypes(): ResourceTypeRecord[] {
    const types = [GENERIC, ...[...this.storage.resourceTypes.getRange()].map((e) => e.value as ResourceTypeRecord)];
    return types.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  createType(rt: ResourceTypeRecord): Promise<ResourceTypeRecord> {
    return this.write(() => {
      if (this.findType(rt.name) !== undefined) throw new ResourceTypeAlreadyExists(rt.name);
      // Nothing to prepare in LMDB: the type goes straight from creating to active.
      const active: ResourceTypeRecord = { ...rt, state: 'active' };
      void this.storage.resourceTypes.put(rt.name, active);
      return active;
    });
  }

  deleteType(name: string): Promise<void> {
    return this.write(() => {
      const rt = this.getType(name);
      if (name === 'generic') throw new ResourceTypeInUse(name);
      if (!['active', 'deletion_error', 'creation_error', 'updating_error'].includes(rt.state)) {
        throw new UnexpectedResourceTypeState(name, 'active/deletion_error/creation_error/updating_error', rt.state);
      }
      if (this.starts.has(name)) throw new ResourceTypeInUse(name);
      this.values.dropType(name);
      void this.storage.resourceTypes.remove(name);
    });
  }

  /** Adds and removes attributes; added ones are filled on every revision. */
  updateTypeAttributes(name: string, add: { def: AttributeDef; fill: AttributeValue }[], remove: string[]): Promise<ResourceTypeRecord> {
    const { storage } = this;
    return this.write(() => {
      const rt = this.activeType(name);
      const attributes = rt.attributes.filter((a) => !remove.includes(a.name)).concat(add.map((a) => a.def));
      const next: ResourceTypeRecord = { ...rt, attributes };
      const patch = (r: ResourceRecord): ResourceRecord => {
        const attrs = { ...r.attrs };
        for (const n of remove) delete attrs[n];
        for (const a of add) attrs[a.def.name] = a.fill;
        return { ...r, attrs };
      };
      const reindex = (r: Revision) => {
        for (const n of remove) this.values.indexAttribute(r, n, r.attrs[n] ?? null, false);
        for (const a of add) this.values.indexAttribute(r, a.def.name, a.fill, true);
      };
      for (const id of [...this.starts.ids(name)]) {
        const r = storage.resources.get(id) as ResourceRecord;
        void storage.resources.put(id, patch(r));
        reindex(current(r));
        for (const { key: hk, value } of storage.resourceHistory.getRange({ start: [id, 0], end: [id, Number.MAX_SAFE_INTEGER] })) {
          void storage.resourceHistory.put(hk, patch(value as Revision));
          reindex(value as Revision);
        }
      }
      void storage.resourceTypes.put(name, next);
      return next;
    });
  }

  // --- resources ----------------------------------------------------------

  /** The current revision of a resource, if it exists and is of `type` (any type for generic). */
  get(type: string, id: string): ResourceRecord | undefined {
    const r = this.storage.resources.get(id);
    if (r === undefined || (type !== 'generic' && r.type !== type)) return undefined;
    return r;
  }

  /** Named metrics of a resource, ordered by name. */
  metricsOf(id: string): NamedMetrics {
    return this.storage.resources.metricsOf(id);
  }

  metricByName(resourceId: string, name: string): MetricRecord | undefined {
    const id = this.storage.resources.metricsOf(resourceId).get(name);
    return id === undefined ? undefined : this.index.getMetric(id);
  }

  /**
   * `named` (the named metrics `r` has) with `metrics` set: new metrics
   * created, existing ones taken from where they were named. A name `r`
   * has already is refused, unless given to the metric it names.
   */
  private nameMetrics(r: ResourceRecord, named: NamedMetrics, metrics: Map<string, MetricSpec>): NamedMetrics {
    for (const [name, spec] of metrics) {
      if (spec.kind === 'existing') {
        const m = this.index.getMetric(spec.id);
        if (m === undefined || m.creator !== r.creator) throw new BadRequest(new NoSuchMetric(spec.id).message);
        const owner = named.get(name);
        if (owner !== undefined && owner !== m.id) throw new NamedMetricAlreadyExists(name);
        if (m.resourceId === r.id && m.name !== null) named.delete(m.name);
        else if (m.resourceId !== null && m.name !== null) this.storage.resources.unnameMetric(m.resourceId, m.name, m.id);
        this.index.putMetric({ ...m, resourceId: r.id, name }, r.creator);
        named.set(name, m.id);
      } else {
        if (this.index.getPolicy(spec.archivePolicyName) === undefined) {
          throw new BadRequest(new NoSuchArchivePolicy(spec.archivePolicyName).message);
        }
        if (named.has(name)) throw new NamedMetricAlreadyExists(name);
        const m: MetricRecord = {
          id: spec.id ?? newMetricId(),
          name,
          unit: spec.unit,
          archivePolicyName: spec.archivePolicyName,
          creator: r.creator,
          resourceId: r.id,
        };
        named.set(name, m.id);
        this.index.putMetric(m, r.creator);
      }
    }
    return named;
  }

  /** Detaches the named metrics of resource `id` (they stay, without a resource); answers the named metrics it is left with: none. */
  private detachMetrics(id: string): NamedMetrics {
    for (const metricId of this.storage.resources.metricsOf(id).values()) {
      const m = this.index.getMetric(metricId);
      if (m !== undefined) this.index.putMetric({ ...m, resourceId: null });
    }
    return new Map();
  }

  create(type: string, input: NewResource): Promise<ResourceRecord> {
    return this.write(() => this.insert(this.activeType(type), input));
  }

  /**
   * Creates resources and adds named metrics to existing ones in one write
   * transaction, as create() and update(type, id, { metrics }, true) would
   * one by one: a collector's write may name thousands, and a commit each
   * cost more than all the rest of the write.
   */
  createAndExtend(type: string, created: readonly NewResource[], extended: readonly { id: string; metrics: Map<string, MetricSpec> }[]): Promise<void> {
    return this.write(() => {
      if (created.length > 0) {
        // Read once: the type does not change inside the transaction.
        const rt = this.activeType(type);
        const common = this.values.claimCreator(created[0]!.creator);
        const records = created.map((input) => this.insertUnindexed(rt, input, common));
        this.values.addCurrent(records, rt.attributes.map((a) => a.name), common);
      }
      for (const { id, metrics } of extended) this.change(type, id, { metrics }, true);
    });
  }

  /** create() inside a write transaction, of the active type `rt`. */
  private insert(rt: ResourceTypeRecord, input: NewResource): ResourceRecord {
    const common = this.values.claimCreator(input.creator);
    const r = this.insertUnindexed(rt, input, common);
    this.values.indexCurrent(r, rt.attributes.map((a) => a.name), true, common);
    return r;
  }

  /** insert() but for the resource_values entries, which the caller adds; `common` the value index's common creator. */
  private insertUnindexed(rt: ResourceTypeRecord, input: NewResource, common: string): ResourceRecord {
    const { storage } = this;
    const r = newResourceRecord(rt.name, input);
    // One write of the record with its metrics, which fails on a taken id: the error rolls the transaction back.
    const named = input.metrics === undefined ? new Map<string, string>() : this.nameMetrics(r, new Map(), input.metrics);
    if (!storage.resources.putIfAbsent(r.id, r, named)) throw new ResourceAlreadyExists(input.id);
    this.starts.write(r, true, common);
    return r;
  }

  /**
   * Applies changes; a new revision is recorded when an attribute changes,
   * `metrics` (replacing the whole map, or added with `appendMetrics`) alone
   * does not make one.
   */
  update(type: string, id: string, changes: ResourceChanges, appendMetrics = false): Promise<ResourceRecord> {
    return this.write(() => this.change(type, id, changes, appendMetrics));
  }

  /** update() inside a write transaction. */
  private change(type: string, id: string, changes: ResourceChanges, appendMetrics: boolean): ResourceRecord {
    const { storage } = this;
    this.activeType(type);
    const r = this.get(type, id);
    if (r === undefined) throw new NoSuchResource(id);
    const { next, changed } = applyChanges(type, r, changes);
    if (changed) {
      const now = nowMicros();
      const revision = ((storage.meta.get('resourceRevision') as number | undefined) ?? 0) + 1;
      void storage.meta.put('resourceRevision', revision);
      const old: Revision = { ...r, revision, revisionEnd: now };
      void storage.resourceHistory.put([id, revision], old);
      this.values.indexRevision(old, this.attributeNames(r.type), true);
      next.revisionStart = now;
      void storage.resources.put(id, next);
      this.indexCurrent(r, false);
      this.indexCurrent(next, true);
    }
    if (changes.metrics !== undefined) {
      const named = appendMetrics ? storage.resources.metricsOf(id) : this.detachMetrics(id);
      storage.resources.setMetrics(id, this.nameMetrics(next, named, changes.metrics));
    }
    return changed ? next : r;
  }

  /** Deletes resources and their metrics; answers how many were deleted. */
  private async deleteIds(ids: string[]): Promise<number> {
    const { storage } = this;
    const dropped: string[] = [];
    const n = await this.write(() => {
      let count = 0;
      for (const id of ids) {
        const r = storage.resources.get(id);
        if (r === undefined) continue;
        // Read while the resource holds their names and creator (metric-records.ts).
        const metrics = [...this.metricsOf(id).values()].map((metricId) => this.index.getMetric(metricId));
        // Then the resource, so that removing its metrics has no record of theirs to rewrite.
        storage.resources.remove(id);
        for (const m of metrics) {
          if (m !== undefined) {
            this.index.removeMetric(m);
            dropped.push(m.id);
          }
        }
        const attributes = this.attributeNames(r.type);
        for (const { key, value } of storage.resourceHistory.getRange({ start: [id, 0], end: [id, Number.MAX_SAFE_INTEGER] })) {
          this.values.indexRevision(value as Revision, attributes, false);
          void storage.resourceHistory.remove(key);
        }
        this.indexCurrent(r, false);
        count++;
      }
      return count;
    });
    if (dropped.length > 0) this.onMetricsDeleted(dropped);
    return n;
  }

  async delete(type: string, id: string): Promise<void> {
    if (this.get(type, id) === undefined) throw new NoSuchResource(id);
    await this.deleteIds([id]);
  }

  /** Batch delete of the current resources of `type` matching `filter`. */
  async deleteMatching(type: string, filter: QueryNode): Promise<number> {
    const rt = this.getType(type);
    const match = compileQuery(filter, rt);
    const plan = this.plan(rt, filter, false);
    const ids: string[] = [];
    const revisions = plan === undefined ? this.scan(type, false) : this.planned(type, plan, false);
    for (const r of revisions) if (match(r) === true) ids.push(r.id);
    return this.deleteIds(ids);
  }

  /** The index access path of a search, or undefined when it must scan; `filter` must compile. */
  private plan(rt: ResourceTypeRecord, filter: QueryNode | undefined, history: boolean): Plan | undefined {
    if (filter === undefined) return undefined;
    return planSearch(filter, { type: rt, estimate: (range, cap) => this.values.count(rt.name, range, history, cap) });
  }

  /**
   * Current resources of `type` in ascending `revision_start`, from `from`
   * on; stops before a resource starting after
   * `until()` (the last `revision_start` a full page still takes).
   */
  private *byRevisionStart(type: string, from: number | undefined, until: () => number | undefined): Generator<Revision> {
    for (const { id, revisionStart } of this.starts.ordered(type, from)) {
      const bound = until();
      if (bound !== undefined && revisionStart > bound) return;
      const r = this.storage.resources.get(id);
      if (r !== undefined) yield current(r);
    }
  }

  /** The current revision of `id` if of `type`, then its closed ones for `history`. */
  private *revisionsOf(type: string, id: string, history: boolean): Generator<Revision> {
    const { storage } = this;
    const r = storage.resources.get(id);
    if (r === undefined || (type !== 'generic' && r.type !== type)) return;
    yield current(r);
    if (!history) return;
    for (const { value } of storage.resourceHistory.getRange({ start: [id, 0], end: [id, Number.MAX_SAFE_INTEGER] })) {
      yield value as Revision;
    }
  }

  /** Each revision a plan points at, once. */
  private *planned(type: string, plan: Plan, history: boolean): Generator<Revision> {
    const { storage } = this;
    const narrowed = this.narrowedTargets(type, plan, history);
    if (narrowed !== undefined) {
      for (const at of narrowed) {
        const [id, revision] = splitTarget(at);
        const r = revision === -1 ? this.get(type, id) : (storage.resourceHistory.get([id, revision]) as Revision | undefined);
        if (r !== undefined) yield revision === -1 ? current(r) : (r as Revision);
      }
      return;
    }
    const seen = new Set<string>();
    // Ids first: a range then skips the revisions they already gave.
    const accesses = [...plan.accesses].sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'ids' ? -1 : 1));
    for (const access of accesses) {
      if (access.kind === 'ids') {
        for (const id of access.ids) {
          if (seen.has(`${id}@*`)) continue;
          seen.add(`${id}@*`);
          yield* this.revisionsOf(type, id, history);
        }
        continue;
      }
      for (const { id, revision } of this.values.targets(type, access.range, history)) {
        // `id@*`: an `ids` access gave every revision of the id.
        const at = targetKey(id, revision);
        if (seen.has(at) || seen.has(`${id}@*`)) continue;
        seen.add(at);
        const r =
          revision === -1
            ? storage.resources.get(id)
            : (storage.resourceHistory.get([id, revision]) as Revision | undefined);
        if (r !== undefined) yield revision === -1 ? current(r) : (r as Revision);
      }
    }
  }

  /**
   * With many candidates and other indexed conjuncts: the revisions
   * (`targetKey`) every one of them points at, so that only those are read.
   */
  private narrowedTargets(type: string, plan: Plan, history: boolean): Set<string> | undefined {
    if (plan.narrowing === undefined || plan.estimate <= SORT_CANDIDATES_MAX) return undefined;
    let keys = this.targetKeys(type, plan, history);
    if (keys === undefined) return undefined;
    for (const other of plan.narrowing) keys = this.targetKeys(type, other, history, keys) ?? keys;
    return keys;
  }

  /**
   * The target key (`targetKey`) of each revision the ranges of a plan point
   * at (only those in `within` when given); undefined if the plan pins ids.
   */
  private targetKeys(type: string, plan: Plan, history: boolean, within?: Set<string>): Set<string> | undefined {
    const keys = new Set<string>();
    const put = (at: string) => {
      if (within === undefined || within.has(at)) keys.add(at);
    };
    for (const access of plan.accesses) {
      if (access.kind === 'ids') return undefined;
      if (!history) for (const id of this.values.currentIds(type, access.range)) put(id);
      else for (const { id, revision } of this.values.targets(type, access.range, true)) put(targetKey(id, revision));
    }
    return keys;
  }

  /**
   * The current resources a plan points at, by ascending `revision_start`
   * from `from` on (ties in any order).
   */
  private plannedByRevisionStart(type: string, plan: Plan, from: number | undefined): { id: string; revisionStart: number }[] {
    const out: { id: string; revisionStart: number }[] = [];
    const seen = new Set<string>();
    const put = (id: string, revisionStart: number) => {
      if ((from === undefined || revisionStart >= from) && !seen.has(id)) {
        seen.add(id);
        out.push({ id, revisionStart });
      }
    };
    for (const access of plan.accesses) {
      if (access.kind === 'range') {
        for (const t of this.values.targets(type, access.range, false)) put(t.id, t.revisionStart);
        continue;
      }
      for (const id of access.ids) {
        const r = this.get(type, id);
        if (r !== undefined) put(id, r.revisionStart);
      }
    }
    return out.sort((a, b) => a.revisionStart - b.revisionStart);
  }

  /** Every revision of `type` (current ones, and closed ones for `history`). */
  private *scan(type: string, history: boolean): Generator<Revision> {
    const { storage } = this;
    if (type === 'generic') {
      for (const { value } of storage.resources.getRange()) yield current(value);
      if (history) for (const { value } of storage.resourceHistory.getRange()) yield value as Revision;
      return;
    }
    for (const id of this.starts.ids(type)) yield* this.revisionsOf(type, id, history);
  }

  private markerRevision(marker: string, history: boolean): Revision | undefined {
    if (!history) {
      const r = this.storage.resources.get(marker);
      return r === undefined ? undefined : current(r);
    }
    const at = marker.lastIndexOf('@');
    if (at === -1) return undefined;
    const id = marker.slice(0, at);
    const rev = marker.slice(at + 1);
    if (!/^\s*[-+]?\d+\s*$/.test(rev)) return undefined;
    const revision = Number.parseInt(rev, 10);
    if (revision === -1) {
      const r = this.storage.resources.get(id);
      return r === undefined ? undefined : current(r);
    }
    return this.storage.resourceHistory.get([id, revision]) as Revision | undefined;
  }

  /** `revision_start` of the oldest revision of a resource (history first, else the current one). */
  firstRevisionStart(id: string): number | undefined {
    for (const { value } of this.storage.resourceHistory.getRange({ start: [id, 0], end: [id, Number.MAX_SAFE_INTEGER], limit: 1 })) {
      return (value as Revision).revisionStart;
    }
    return this.storage.resources.get(id)?.revisionStart;
  }

  /** One page of (current or all) revisions of `type` matching the filter. */
  list(type: string, options: ListResourcesOptions): Revision[] {
    const rt = this.getType(type);
    const match: Predicate | undefined = options.filter === undefined ? undefined : compileQuery(options.filter, rt);
    const compare = compareRevisions(options.sorts);
    let after: Revision | undefined;
    if (options.marker !== undefined) {
      after = this.markerRevision(options.marker, options.history);
      if (after === undefined) throw new InvalidPagination(`Invalid marker: \`${options.marker}'`);
    }
    const page: Revision[] = [];
    const { limit } = options;
    /** Adds a candidate to the page if it belongs; answers whether it matched the filter. */
    const add = (r: Revision): boolean => {
      if (match !== undefined && match(r) !== true) return false;
      if (after !== undefined && compare(r, after) <= 0) return true;
      if (page.length === limit && compare(r, page[page.length - 1]!) >= 0) return true;
      let lo = 0;
      let hi = page.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (compare(page[mid]!, r) <= 0) lo = mid + 1;
        else hi = mid;
      }
      page.splice(lo, 0, r);
      if (page.length > limit) page.pop();
      return true;
    };
    const plan = this.plan(rt, options.filter, options.history);
    const first = options.sorts[0];
    const defaultOrder = !options.history && limit > 0 && first?.key === 'revision_start' && first.direction === 'asc';
    if (defaultOrder && (plan === undefined || plan.estimate > SORT_CANDIDATES_MAX)) {
      // Many resources may match: the first ones in revision_start order may fill the page soon.
      const until = () => (page.length === limit ? page[limit - 1]!.revisionStart : undefined);
      const budget = plan === undefined ? Number.POSITIVE_INFINITY : WALK_BUDGET;
      let reads = 0;
      let complete = true;
      const floor = revisionStartFloor(plan);
      const from = floor === undefined || (after !== undefined && after.revisionStart > floor) ? after?.revisionStart : floor;
      for (const r of this.byRevisionStart(type, from, until)) {
        if (++reads > budget) {
          complete = false;
          break;
        }
        add(r);
      }
      if (complete) return page;
      page.length = 0;
    }
    if (defaultOrder && plan !== undefined) {
      const candidates = this.plannedByRevisionStart(type, plan, after?.revisionStart);
      let ids: Set<string> | undefined;
      if (plan.narrowing !== undefined && candidates.length > SORT_CANDIDATES_MAX) {
        // Reading index entries is far cheaper than reading and testing resources.
        ids = new Set(candidates.map((c) => c.id));
        for (const other of plan.narrowing) ids = this.targetKeys(type, other, false, ids) ?? ids;
      }
      for (const { id, revisionStart } of candidates) {
        if (page.length === limit && revisionStart > page[limit - 1]!.revisionStart) break;
        if (ids !== undefined && !ids.has(id)) continue;
        const r = this.get(type, id);
        if (r !== undefined) add(current(r));
      }
      return page;
    }
    const revisions = plan === undefined ? this.scan(type, options.history) : this.planned(type, plan, options.history);
    for (const r of revisions) add(r);
    return page;
  }
}
