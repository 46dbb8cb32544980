/**
 * The per-field value indexes of resources: current revisions in
 * resource_values, closed ones in resource_history_values (entry layout in
 * resource-index-keys.ts). Every write here runs inside the caller's LMDB
 * write transaction, with the resource write it mirrors.
 *
 * Each revision is filed once, under its own type, by the generic fields
 * below and the type's own attributes; a search of `generic` (which sees
 * every resource) reads the range under each type. Each entry carries the
 * revision's `revision_start`, the default sort key, so candidates sort
 * without reading them. Current revisions are not filed by `revision_start`
 * nor by `revision_end` (NULL on every one): resources_by_revision_start
 * answers both (revision-start-index.ts), also for history searches, which
 * find current revisions by them too. Nor by a `started_at` that is their
 * `revision_start`, nor by a creator that is the index's common creator
 * (resource-index-names.ts), as a collector's resources have them: that
 * index marks those and answers their `started_at` and creator too. A
 * collector's resources share one creator, so its entries (a dup each
 * under one key) were ~30 bytes and a put a resource, for searches that
 * match most resources anyway.
 *
 * NULL is filed by absence: a revision has no entry for a field it leaves
 * empty. Those entries were three of a collector's resource's ten puts
 * (`user_id`, `project_id` and `ended_at` are NULL on every one), and a
 * search of `= null` usually matches most resources anyway, so a scan of the
 * type answers it (see answersNull).
 */
import type { Database } from 'lmdb';
import { entryCount } from './db-stats.js';
import { silentProgress, type Progress } from './progress.js';
import { IndexNames } from './resource-index-names.js';
import { RevisionMark, startedAtRevision, type RevisionStartIndex, type StartRange } from './revision-start-index.js';
import {
  entryId,
  entryKey,
  entryTarget,
  rangeBounds,
  rangeHolds,
  targetBytes,
  typeBounds,
  type IndexTarget,
  type IndexValue,
  type KeyRange,
  type StoredValue,
} from './resource-index-keys.js';
import { fieldOf, type ResourceRecord, type Revision } from './resource-search.js';
import type { Storage } from './storage.js';

export type { IndexTarget } from './resource-index-keys.js';

const GENERIC_FIELDS: readonly string[] = [
  'original_resource_id', 'creator', 'user_id', 'project_id', 'started_at', 'ended_at', 'revision_start', 'revision_end',
];

export function isIndexedGenericField(field: string): boolean {
  return GENERIC_FIELDS.includes(field);
}

/** Generic fields resources_by_revision_start answers for current revisions. */
const CURRENT_UNFILED = new Set(['revision_start', 'revision_end']);

/** The generic fields a current revision is filed by. */
const CURRENT_FIELDS = GENERIC_FIELDS.filter((field) => !CURRENT_UNFILED.has(field));

/**
 * fieldOf for CURRENT_FIELDS, on a record rather than a revision (addCurrent
 * makes no revision per resource), NULL for what resources_by_revision_start
 * answers; `common` is the index's common creator.
 */
const CURRENT_FIELD_VALUES: Readonly<Record<string, (r: ResourceRecord, common: string | undefined) => StoredValue>> = {
  original_resource_id: (r) => r.originalResourceId,
  creator: (r, common) => (r.creator === common ? null : r.creator),
  user_id: (r) => r.userId,
  project_id: (r) => r.projectId,
  started_at: (r) => (startedAtRevision(r) ? null : r.startedAt),
  ended_at: (r) => r.endedAt,
};

/**
 * Whether the index answers `field = null`: the fields resources_by_revision_start
 * answers for current revisions, which closed revisions never leave NULL.
 */
export function answersNull(field: string): boolean {
  return CURRENT_UNFILED.has(field);
}

/**
 * The fields a revision is filed by, with its values (none NULL): the
 * generic ones, then its type's attributes; `common` is the index's common
 * creator. engine/check.ts rebuilds entries with it.
 */
export function* indexedFields(r: Revision, attributes: readonly string[], common: string | undefined): Generator<[field: string, value: IndexValue]> {
  const current = r.revision === -1;
  for (const field of current ? CURRENT_FIELDS : GENERIC_FIELDS) {
    const value = current ? CURRENT_FIELD_VALUES[field]!(r, common) : fieldOf(r, field);
    if (value !== null) yield [field, value];
  }
  for (const name of attributes) {
    const value = r.attrs[name] ?? null;
    if (value !== null) yield [name, value];
  }
}

export const targetOf = (r: Revision): IndexTarget => ({ id: r.id, revision: r.revision, revisionStart: r.revisionStart });

/** Names of the databases of the layout before this one (msgpack keys, every generic field also under `generic`). */
const RETIRED_DBS = ['resources_by_value', 'resource_history_by_value'];
const META_KEY = 'resourcesByValue';
/**
 * 2: resource_values and resource_history_values, dupSort, binary; 3: current revisions without revision_start and
 * revision_end; 4: no NULL entries; 5: current revisions without a started_at that is their revision_start; 6: nor
 * the common creator.
 */
const META_VERSION = 6;
/** Below this cap, counting steps through entries instead of counting natively. */
const SMALL_COUNT = 1_000;

type ValueDb = Database<Buffer, Buffer>;

/** Current revisions resources_by_revision_start holds in a `revision_start` range, only those whose entry has the bit `marked` when given. */
interface Starts {
  range: StartRange;
  marked?: RevisionMark;
}

/** Where the entries of a range are: a key range of a value index, or resources_by_revision_start's current revisions. */
type Source = { kind: 'values'; db: ValueDb; history: boolean; bounds: { start: Buffer; end: Buffer } } | ({ kind: 'starts'; type: string } & Starts);

/**
 * The current revisions of `range` that resources_by_revision_start
 * answers (`common`: the index's common creator), or undefined for none:
 * all of them for `revision_start` and `revision_end` (which the value
 * index leaves out), the marked ones for `started_at` and `creator`.
 */
function currentStarts(range: KeyRange, common: string | undefined): Starts | undefined {
  if (range.field === 'revision_end') return range.nulls ? { range: {} } : undefined;
  if (range.field === 'creator') {
    return common !== undefined && rangeHolds(range, common) ? { range: {}, marked: RevisionMark.CommonCreator } : undefined;
  }
  if (range.field !== 'revision_start' && range.field !== 'started_at') return undefined;
  if (range.nulls) return undefined;
  const { lo, hi } = range;
  // A datetime's bounds are numbers (search-plan.ts keyable): other ones select none.
  if ((lo !== undefined && typeof lo !== 'number') || (hi !== undefined && typeof hi !== 'number')) return undefined;
  return range.field === 'started_at' ? { range: { lo, hi }, marked: RevisionMark.StartedAtRevision } : { range: { lo, hi } };
}

export class ResourceValueIndex {
  private readonly names: IndexNames;

  constructor(
    private readonly storage: Storage,
    /** Answers `revision_start`/`revision_end` of current revisions, which this index leaves out. */
    private readonly starts: RevisionStartIndex,
  ) {
    this.names = new IndexNames(storage.meta);
  }

  /**
   * Builds both indexes from the stored revisions when the data directory
   * predates them, and drops the retired ones; answers whether it did (the
   * common creator may then have changed).
   */
  ensureBuilt(attributesOf: (type: string) => readonly string[], progress: Progress = silentProgress): boolean {
    const { storage } = this;
    if (storage.meta.get(META_KEY) === META_VERSION) return false;
    const existing = new Set([...storage.root.getKeys()].map(String));
    for (const name of RETIRED_DBS) if (existing.has(name)) storage.root.openDB({ name }).dropSync();
    const task = progress.task('building resource_values', entryCount(storage.resources) + entryCount(storage.resourceHistory));
    try {
      storage.root.transactionSync(() => {
        for (const db of [storage.resourceValues, storage.resourceHistoryValues]) {
          for (const key of [...db.getKeys()]) void db.remove(key);
        }
        // Kept when chosen: a rebuild then files what the writes did.
        const common = this.names.refresh().commonCreator() ?? mostCommonCreator(storage);
        this.names.clear(common);
        for (const { value: r } of storage.resources.getRange()) {
          this.indexCurrent(r, attributesOf(r.type), true, common);
          task.advance();
        }
        for (const { value } of storage.resourceHistory.getRange()) {
          const r = value as Revision;
          this.indexRevision(r, attributesOf(r.type), true);
          task.advance();
        }
        void storage.meta.put(META_KEY, META_VERSION);
      });
    } finally {
      task.finish();
    }
    return true;
  }

  /** The index's common creator, `creator` if none was chosen yet: what the current revisions written next are filed with; inside a write transaction. */
  claimCreator(creator: string): string {
    return this.names.refresh().claimCreator(creator);
  }

  /** The index's common creator, if one was chosen. */
  commonCreator(): string | undefined {
    return this.names.refresh().commonCreator();
  }

  /** Adds or removes the entries of a current revision, `common` the index's common creator (claimCreator). */
  indexCurrent(r: ResourceRecord, attributes: readonly string[], add: boolean, common: string | undefined): void {
    const rev: Revision = { ...r, revision: -1, revisionEnd: null };
    this.write(rev, indexedFields(rev, attributes, common), add);
  }

  /**
   * Adds the entries of new current revisions, all of one type: the
   * entries of indexCurrent, field by field rather than revision by
   * revision, so that consecutive puts go to the same keys (a collector's
   * first write files six entries for each of thousands of resources, most
   * under the few keys of a shared value: its creator, NULL). A key is
   * built once for a run of revisions sharing its value (the puts copy it),
   * and fields are read straight off the records: this filed ~60,000
   * entries a write through a Revision copy, fieldOf and a key buffer each.
   * `common` as for indexCurrent.
   */
  addCurrent(records: readonly ResourceRecord[], attributes: readonly string[], common: string | undefined): void {
    if (records.length === 0) return;
    const names = this.names.refresh();
    const db = this.storage.resourceValues;
    const typeCode = names.internType(records[0]!.type);
    const targets = records.map((r) => targetBytes({ id: r.id, revision: -1, revisionStart: r.revisionStart }));
    const file = (fieldCode: number, valueOf: (r: ResourceRecord, common: string | undefined) => StoredValue) => {
      // The key of `shared`, for the revisions whose id is a UUID (the dup holds it).
      let key: Buffer | undefined;
      let shared: StoredValue = null;
      for (let i = 0; i < records.length; i++) {
        const value = valueOf(records[i]!, common);
        if (value === null) continue;
        const target = targets[i]!;
        if (target.keyId !== undefined) {
          void db.put(entryKey(typeCode, fieldCode, value, target), target.dup);
          continue;
        }
        if (key === undefined || value !== shared) {
          key = entryKey(typeCode, fieldCode, value, target);
          shared = value;
        }
        void db.put(key, target.dup);
      }
    };
    for (const field of CURRENT_FIELDS) file(names.internField(field), CURRENT_FIELD_VALUES[field]!);
    for (const name of attributes) file(names.internField(name), (r) => r.attrs[name] ?? null);
  }

  /** Adds or removes the entries of a closed revision. */
  indexRevision(r: Revision, attributes: readonly string[], add: boolean): void {
    this.write(r, indexedFields(r, attributes, undefined), add);
  }

  /** Adds or removes one attribute's entry of a revision. */
  indexAttribute(r: Revision, name: string, value: StoredValue, add: boolean): void {
    this.write(r, [[name, value]], add);
  }

  private write(r: Revision, fields: Iterable<[string, StoredValue]>, add: boolean): void {
    const names = this.names.refresh();
    const db = this.db(r.revision !== -1);
    const typeCode = add ? names.internType(r.type) : names.typeCode(r.type);
    if (typeCode === undefined) return;
    const target = targetBytes(targetOf(r));
    for (const [field, value] of fields) {
      if (value === null) continue;
      const fieldCode = add ? names.internField(field) : names.fieldCode(field);
      if (fieldCode === undefined) continue;
      const key = entryKey(typeCode, fieldCode, value, target);
      void (add ? db.put(key, target.dup) : db.remove(key, target.dup));
    }
  }

  private db(history: boolean): ValueDb {
    return history ? this.storage.resourceHistoryValues : this.storage.resourceValues;
  }

  /** Removes every entry under `type` and frees its code (a deleted type's name may be reused). */
  dropType(type: string): void {
    const names = this.names.refresh();
    const code = names.typeCode(type);
    if (code === undefined) return;
    for (const db of [this.storage.resourceValues, this.storage.resourceHistoryValues]) {
      for (const key of [...db.getKeys(typeBounds(code))]) void db.remove(key);
    }
    names.freeType(type);
  }

  /** Where the entries of `range` under `type` (under every type for `generic`) are: current revisions, then closed ones for `history`. */
  private *sources(type: string, range: KeyRange, history: boolean): Generator<Source> {
    const names = this.names.refresh();
    const starts = currentStarts(range, names.commonCreator());
    if (starts !== undefined) yield { kind: 'starts', type, ...starts };
    // Current revisions are filed here unless resources_by_revision_start answers all of them.
    const currentFiled = !CURRENT_UNFILED.has(range.field);
    if (!currentFiled && !history) return;
    const fieldCode = names.fieldCode(range.field);
    if (fieldCode === undefined) return;
    const own = names.typeCode(type);
    const typeCodes = type === 'generic' ? names.allTypeCodes() : own === undefined ? [] : [own];
    for (const typeCode of typeCodes) {
      const bounds = rangeBounds(typeCode, fieldCode, range);
      if (currentFiled) yield { kind: 'values', db: this.storage.resourceValues, history: false, bounds };
      if (history) yield { kind: 'values', db: this.storage.resourceHistoryValues, history: true, bounds };
    }
  }

  /**
   * How many revisions (current ones, and closed ones for `history`)
   * `range` holds under `type`; past `cap` it may stop and answer cap + 1.
   * An estimate for `started_at` and `creator`: every current revision in
   * the range of `revision_start` resources_by_revision_start answers
   * counts, marked or not.
   */
  count(type: string, range: KeyRange, history: boolean, cap: number): number {
    let n = 0;
    for (const source of this.sources(type, range, history)) {
      if (n > cap) break;
      if (source.kind === 'starts') {
        n += this.starts.count(source.type, source.range, cap - n);
        continue;
      }
      const { db, bounds } = source;
      if (cap - n < SMALL_COUNT) {
        // Stepping a few entries beats lmdb's native count, which cannot stop early.
        for (const _ of db.getRange({ ...bounds, limit: cap - n + 1 })) n++;
      } else {
        // Native: per key, LMDB's count of its dups. A copy of the bounds: lmdb-js marks the options it counts
        // with, and the history source of the same range shares them.
        n += db.getCount({ ...bounds });
      }
    }
    return n;
  }

  /** The revisions `range` points at under `type`: current ones, and closed ones for `history`. */
  *targets(type: string, range: KeyRange, history: boolean): Generator<IndexTarget> {
    for (const source of this.sources(type, range, history)) {
      if (source.kind === 'starts') yield* this.starts.targets(source.type, source.range, source.marked);
      else for (const { key, value } of source.db.getRange(source.bounds)) yield entryTarget(key, value, source.history);
    }
  }

  /** Ids of the current resources `range` points at under `type`. */
  *currentIds(type: string, range: KeyRange): Generator<string> {
    for (const source of this.sources(type, range, false)) {
      if (source.kind === 'starts') for (const t of this.starts.targets(source.type, source.range, source.marked)) yield t.id;
      else for (const { key, value } of source.db.getRange(source.bounds)) yield entryId(key, value);
    }
  }
}

/** The creator most current resources have (ties: the first met), undefined without any: the common creator of an index built anew. */
function mostCommonCreator(storage: Storage): string | undefined {
  const counts = new Map<string, number>();
  let best: string | undefined;
  for (const { value: r } of storage.resources.getRange()) {
    const n = (counts.get(r.creator) ?? 0) + 1;
    counts.set(r.creator, n);
    if (best === undefined || n > counts.get(best)!) best = r.creator;
  }
  return best;
}
