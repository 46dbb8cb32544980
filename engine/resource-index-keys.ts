/**
 * Keys of the per-field value indexes (resources_by_value and
 * resource_history_by_value, see resource-value-index.ts):
 *
 *   [type, field, 0, id (, revision)]          the field is NULL
 *   [type, field, 1, value, id (, revision)]   value typed: numbers (datetimes
 *                                              as µs), booleans, strings
 *
 * lmdb orders keys with ordered-binary, whose order matches JavaScript's for
 * numbers and booleans but compares strings by UTF-8 bytes, and cannot hold
 * control characters or arbitrarily long text. Strings are therefore stored
 * through `indexString`, a monotonic map onto text both orders agree on: a
 * key range built from the mapped bounds (inclusive) holds every value in
 * the range, and the search re-checks each candidate against the filter.
 */

export type IndexValue = string | number | boolean;
export type StoredValue = IndexValue | null;

/** Longest string kept whole; longer ones are indexed by their prefix. */
export const INDEXED_STRING_LENGTH = 200;
/** The greatest character `indexString` emits. */
const TOP_CHAR = '\ud7ff';

/**
 * Maps `s` onto text of characters in [U+0020, U+D7FF] (where UTF-8 and
 * UTF-16 orders agree) at most INDEXED_STRING_LENGTH long, keeping order
 * (s1 < s2 implies f(s1) <= f(s2)): cut before the first control character,
 * or before the first character >= U+D7FF with U+D7FF appended in its place.
 */
export function indexString(s: string): string {
  const n = Math.min(s.length, INDEXED_STRING_LENGTH);
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20) return s.slice(0, i);
    if (c >= 0xd7ff) return s.slice(0, i) + TOP_CHAR;
  }
  return n === s.length ? s : s.slice(0, n);
}

/** Whether `indexString` keeps `s` as it is. */
export const isExactIndexString = (s: string): boolean => indexString(s) === s;

/** The key form of a non-null value. */
export function indexValue(v: IndexValue): IndexValue {
  if (typeof v === 'string') return indexString(v);
  // -0 === 0 for the filter but not for ordered-binary.
  return v === 0 ? 0 : v;
}

export type ValueKey = (string | number | boolean)[];

export function valueKey(type: string, field: string, v: StoredValue, id: string, revision?: number): ValueKey {
  const key: ValueKey = v === null ? [type, field, 0, id] : [type, field, 1, indexValue(v), id];
  if (revision !== undefined) key.push(revision);
  return key;
}

/** The resource id and revision of a key read back (revision -1 in the current index). */
export function keyTarget(key: ValueKey): { id: string; revision: number } {
  const at = key[2] === 0 ? 3 : 4;
  return { id: key[at] as string, revision: (key[at + 1] as number | undefined) ?? -1 };
}

/**
 * Index entries of one field: its NULLs, or its non-null values between
 * `lo` and `hi` (key forms, inclusive; absent means unbounded).
 */
export type KeyRange =
  | { readonly field: string; readonly nulls: true }
  | { readonly field: string; readonly nulls: false; readonly lo?: IndexValue; readonly hi?: IndexValue };

/** lmdb start (inclusive) and end (exclusive) keys of a range under `type`. */
export function rangeBounds(type: string, range: KeyRange): { start: ValueKey; end: ValueKey } {
  const { field } = range;
  if (range.nulls) return { start: [type, field, 0], end: [type, field, 1] };
  return {
    start: range.lo === undefined ? [type, field, 1] : [type, field, 1, indexValue(range.lo)],
    // Ids are ASCII UUIDs: every key of value `hi` sorts before [..., hi, '\uffff'].
    end: range.hi === undefined ? [type, field, 2] : [type, field, 1, indexValue(range.hi), '\uffff'],
  };
}

/**
 * The range of strings starting with `prefix` in key form, or undefined
 * when the prefix is not kept exactly by `indexString`.
 */
export function prefixRange(field: string, prefix: string): KeyRange | undefined {
  if (prefix === '' || prefix.length >= INDEXED_STRING_LENGTH || !isExactIndexString(prefix)) return undefined;
  return { field, nulls: false, lo: prefix, hi: prefix + TOP_CHAR.repeat(INDEXED_STRING_LENGTH - prefix.length) };
}
