/**
 * The per-field value indexes of resources: current revisions in
 * resources_by_value, closed ones in resource_history_by_value (key layout
 * in resource-index-keys.ts). Every write here runs inside the caller's LMDB
 * write transaction, with the resource write it mirrors.
 *
 * Indexed fields: the type's own attributes under the type, and the generic
 * fields below under the type and under `generic` (generic searches see
 * every resource). Each entry's value is the revision's `revision_start`,
 * the default sort key, so candidates sort without reading them.
 * `revision_end` is NULL on every current revision, and
 * indexed so that history searches find current revisions by it too.
 */
import { entryCount } from './db-stats.js';
import { silentProgress, type Progress } from './progress.js';
import { keyTarget, rangeBounds, valueKey, type KeyRange, type StoredValue, type ValueKey } from './resource-index-keys.js';
import { fieldOf, type ResourceRecord, type Revision } from './resource-search.js';
import type { Storage } from './storage.js';

const GENERIC_FIELDS: readonly string[] = [
  'original_resource_id', 'creator', 'user_id', 'project_id', 'started_at', 'ended_at', 'revision_start', 'revision_end',
];

export function isIndexedGenericField(field: string): boolean {
  return GENERIC_FIELDS.includes(field);
}

/** The types a resource's entries are filed under: its own, and `generic` (which sees every resource). */
export function indexedTypes(type: string): string[] {
  return type === 'generic' ? ['generic'] : [type, 'generic'];
}

/**
 * The keys of a revision's entries (each entry's value is the revision's
 * `revision_start`); `revision` for a closed revision. engine/check.ts
 * rebuilds the expected entries with it.
 */
export function* valueIndexKeys(r: Revision, attributes: readonly string[], revision?: number): Generator<ValueKey> {
  for (const type of indexedTypes(r.type)) {
    for (const field of GENERIC_FIELDS) yield valueKey(type, field, fieldOf(r, field), r.id, revision);
  }
  for (const name of attributes) yield valueKey(r.type, name, r.attrs[name] ?? null, r.id, revision);
}

const META_KEY = 'resourcesByValue';
/** Below this cap, counting steps through keys instead of counting natively. */
const SMALL_COUNT = 1_000;
const META_VERSION = 1;

/** A revision an entry points at (revision -1 is the current one), with its `revision_start`. */
export interface IndexTarget {
  id: string;
  revision: number;
  revisionStart: number;
}

export class ResourceValueIndex {
  constructor(private readonly storage: Storage) {}

  /** Builds both indexes from the stored revisions when the data directory predates them. */
  ensureBuilt(attributesOf: (type: string) => readonly string[], progress: Progress = silentProgress): void {
    const { storage } = this;
    if (storage.meta.get(META_KEY) === META_VERSION) return;
    const task = progress.task('building resources_by_value', entryCount(storage.resources) + entryCount(storage.resourceHistory));
    try {
      storage.root.transactionSync(() => {
        for (const db of [storage.resourcesByValue, storage.resourceHistoryByValue]) {
          for (const key of [...db.getKeys()]) void db.remove(key);
        }
        for (const { value } of storage.resources.getRange()) {
          const r = value as ResourceRecord;
          this.indexCurrent(r, attributesOf(r.type), true);
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
  }

  /** Adds or removes the entries of a current revision. */
  indexCurrent(r: ResourceRecord, attributes: readonly string[], add: boolean): void {
    const rev: Revision = { ...r, revision: -1, revisionEnd: null };
    this.write(this.storage.resourcesByValue, rev, attributes, undefined, add);
  }

  /** Adds or removes the entries of a closed revision. */
  indexRevision(r: Revision, attributes: readonly string[], add: boolean): void {
    this.write(this.storage.resourceHistoryByValue, r, attributes, r.revision, add);
  }

  /** Adds or removes one attribute's entry of a revision. */
  indexAttribute(r: Revision, name: string, value: StoredValue, add: boolean): void {
    const history = r.revision !== -1;
    const db = history ? this.storage.resourceHistoryByValue : this.storage.resourcesByValue;
    const key = valueKey(r.type, name, value, r.id, history ? r.revision : undefined);
    void (add ? db.put(key, r.revisionStart) : db.remove(key));
  }

  private write(
    db: Storage['resourcesByValue'],
    r: Revision,
    attributes: readonly string[],
    revision: number | undefined,
    add: boolean,
  ): void {
    for (const key of valueIndexKeys(r, attributes, revision)) void (add ? db.put(key, r.revisionStart) : db.remove(key));
  }

  /** Removes every entry under `type` (a deleted type's name may be reused). */
  dropType(type: string): void {
    for (const db of [this.storage.resourcesByValue, this.storage.resourceHistoryByValue]) {
      for (const key of [...db.getKeys({ start: [type], end: [type, '\uffff'] })]) void db.remove(key);
    }
  }

  /**
   * How many revisions (current ones, and closed ones for `history`)
   * `range` holds under `type`; past `cap` it may stop and answer cap + 1.
   */
  count(type: string, range: KeyRange, history: boolean, cap: number): number {
    const bounds = rangeBounds(type, range);
    let n = 0;
    for (const db of history ? [this.storage.resourcesByValue, this.storage.resourceHistoryByValue] : [this.storage.resourcesByValue]) {
      if (n > cap) break;
      if (cap - n < SMALL_COUNT) {
        // Stepping a few keys beats lmdb's native count, which cannot stop early.
        for (const _ of db.getKeys({ ...bounds, limit: cap - n + 1 })) n++;
      } else {
        n += db.getKeysCount(bounds);
      }
    }
    return n;
  }

  /** The revisions `range` points at under `type`: current ones, then closed ones for `history`. */
  *targets(type: string, range: KeyRange, history: boolean): Generator<IndexTarget> {
    const bounds = rangeBounds(type, range);
    for (const db of history ? [this.storage.resourcesByValue, this.storage.resourceHistoryByValue] : [this.storage.resourcesByValue]) {
      for (const { key, value } of db.getRange(bounds)) {
        const { id, revision } = keyTarget(key as ValueKey);
        yield { id, revision, revisionStart: value as number };
      }
    }
  }

  /** Ids of the current resources `range` points at under `type` (reads keys only). */
  *currentIds(type: string, range: KeyRange): Generator<string> {
    for (const key of this.storage.resourcesByValue.getKeys(rangeBounds(type, range))) yield keyTarget(key as ValueKey).id;
  }
}
