/**
 * resources_by_revision_start: every current resource once, under its own
 * type, keyed [type, revision_start, id]. It is the index of the resources
 * of a type (listings, type changes and deletions walk it), of their
 * default order, and of the current revisions' `revision_start` and
 * `revision_end` (NULL on every current one): resource_values files
 * neither for current revisions (resource-value-index.ts). `generic`, which
 * sees every resource, merges the walks of every type.
 *
 * Its value marks what resource_values leaves out of a current revision
 * for this index to answer (bits of RevisionMark): a `started_at` that is
 * the revision_start (a resource created without one and not changed
 * since, as a collector's are; its entry took ~50 bytes a resource), and a
 * creator that is the index's common creator (resource-index-names.ts; a
 * collector's resources all have one creator, whose entries took ~30 bytes
 * a resource and an LMDB put each).
 */
import type { Key as LmdbKey } from 'lmdb';
import type { IndexTarget } from './resource-index-keys.js';
import type { ResourceRecord } from './resource-search.js';
import type { Storage } from './storage.js';

type Key = [type: string, revisionStart: number, id: string];
/** Above any id: ordered-binary text of U+FFFF sorts after a UUID's tag and any printable id. */
const TOP_ID = '\uffff';
/** Below this cap, counting steps through keys instead of counting natively (which cannot stop early). */
const SMALL_COUNT = 1_000;

/** `revision_start` between `lo` and `hi` (inclusive; absent means unbounded). */
export interface StartRange {
  readonly lo?: number | undefined;
  readonly hi?: number | undefined;
}

/** The keys of `type`'s resources with `revision_start` in `range`. */
function bounds(type: string, range: StartRange): { start: LmdbKey; end: LmdbKey } {
  return {
    start: range.lo === undefined ? [type] : [type, range.lo],
    end: range.hi === undefined ? [type, Number.POSITIVE_INFINITY] : [type, range.hi, TOP_ID],
  };
}

/** Bits of an entry's value: what resource_values leaves to this index. */
export const RevisionMark = {
  /** The resource's `started_at` is its revision_start. */
  StartedAtRevision: 1,
  /** Its creator is the index's common creator. */
  CommonCreator: 2,
} as const;
export type RevisionMark = (typeof RevisionMark)[keyof typeof RevisionMark];

/** Whether a current resource's `started_at` is its revision_start. */
export const startedAtRevision = (r: Pick<ResourceRecord, 'startedAt' | 'revisionStart'>): boolean => r.startedAt === r.revisionStart;

/** A current resource's entry's value, with `common` the index's common creator. */
export const revisionMark = (r: Pick<ResourceRecord, 'startedAt' | 'revisionStart' | 'creator'>, common: string | undefined): number =>
  (startedAtRevision(r) ? RevisionMark.StartedAtRevision : 0) | (r.creator === common ? RevisionMark.CommonCreator : 0);

export class RevisionStartIndex {
  constructor(private readonly storage: Storage) {}

  /** Adds (or removes) a current resource's entry, `common` the index's common creator; inside a write transaction. */
  write(r: ResourceRecord, add: boolean, common: string | undefined): void {
    const key: Key = [r.type, r.revisionStart, r.id];
    void (add ? this.storage.resourcesByRevisionStart.put(key, revisionMark(r, common)) : this.storage.resourcesByRevisionStart.remove(key));
  }

  /** Removes every entry and files each current resource again, `common` the index's common creator; inside a write transaction. */
  rebuild(common: string | undefined, advance: () => void): void {
    const db = this.storage.resourcesByRevisionStart;
    for (const key of [...db.getKeys()]) void db.remove(key);
    for (const { value } of this.storage.resources.getRange()) {
      this.write(value, true, common);
      advance();
    }
  }

  /** The types whose resources `type` sees: every one for `generic`. */
  typesOf(type: string): string[] {
    if (type !== 'generic') return [type];
    return ['generic', ...[...this.storage.resourceTypes.getKeys()].map(String)];
  }

  private keys(type: string, range: StartRange, limit?: number): Iterable<Key> {
    return this.storage.resourcesByRevisionStart.getKeys({ ...bounds(type, range), ...(limit === undefined ? {} : { limit }) }) as Iterable<Key>;
  }

  /** Whether any resource is of `type` (its own, `generic` not seeing the others). */
  has(type: string): boolean {
    for (const _ of this.keys(type, {}, 1)) return true;
    return false;
  }

  /** Ids of the resources of `type` (its own), in `revision_start` order. */
  *ids(type: string): Generator<string> {
    for (const key of this.keys(type, {})) yield key[2];
  }

  /** How many resources `type` sees in `range` (those that started there among them); past `cap` it may stop and answer cap + 1. */
  count(type: string, range: StartRange, cap: number): number {
    let n = 0;
    for (const t of this.typesOf(type)) {
      if (n > cap) break;
      if (cap - n < SMALL_COUNT) {
        for (const _ of this.keys(t, range, cap - n + 1)) n++;
      } else {
        n += this.storage.resourcesByRevisionStart.getCount(bounds(t, range));
      }
    }
    return n;
  }

  /** The current revisions `type` sees in `range`, type by type; only those whose entry has the bit `marked` when given. */
  *targets(type: string, range: StartRange, marked?: RevisionMark): Generator<IndexTarget> {
    for (const t of this.typesOf(type)) {
      if (marked === undefined) {
        for (const key of this.keys(t, range)) yield { id: key[2], revision: -1, revisionStart: key[1] };
        continue;
      }
      for (const { key, value } of this.storage.resourcesByRevisionStart.getRange(bounds(t, range))) {
        if (((value as number) & marked) !== 0) yield { id: (key as Key)[2], revision: -1, revisionStart: (key as Key)[1] };
      }
    }
  }

  /**
   * The resources `type` sees in ascending `revision_start` (ties by type,
   * then id) from `from` on: for `generic`, the walks of every type merged.
   */
  *ordered(type: string, from: number | undefined): Generator<{ id: string; revisionStart: number }> {
    const range: StartRange = from === undefined ? {} : { lo: from };
    const heads: { key: Key; rest: Iterator<Key> }[] = [];
    for (const t of this.typesOf(type)) {
      const rest = this.keys(t, range)[Symbol.iterator]();
      const first = rest.next();
      if (first.done !== true) heads.push({ key: first.value, rest });
    }
    while (heads.length > 0) {
      // A handful of types: a linear pick beats a heap.
      let at = 0;
      for (let i = 1; i < heads.length; i++) if (heads[i]!.key[1] < heads[at]!.key[1]) at = i;
      const head = heads[at]!;
      yield { id: head.key[2], revisionStart: head.key[1] };
      const next = head.rest.next();
      if (next.done === true) heads.splice(at, 1);
      else head.key = next.value;
    }
  }
}
