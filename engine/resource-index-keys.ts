/**
 * Entries of the per-field value indexes (resource_values and
 * resource_history_values, see resource-value-index.ts), in LMDB dupSort
 * databases: one key per (type, field, value), the revisions holding that
 * value as its fixed-size duplicates, so that a value many resources share
 * (a creator, a project, NULL ended_at) is stored once.
 *
 *   key   type code (u16) | field code (u16) | tag | value
 *         tag 0: NULL (no value bytes), 1: boolean (1 byte), 2: number
 *         (8 bytes, datetimes as µs), 3: string (UTF-8, to the end)
 *   dup   id (16 bytes) | revision (float64, history only) | revision_start (float64)
 *
 * Codes come from the dictionary of resource-index-names.ts. Numbers are
 * big-endian float64 with the sign bit flipped (all bits when negative), so
 * that byte order is numeric order. Strings go through `indexString`, a
 * monotonic map onto text of characters in [U+0020, U+D7FF] (whose UTF-8
 * order is code point order) at most INDEXED_STRING_LENGTH long: a key range
 * built from the mapped bounds (inclusive) holds every value in the range,
 * and the search re-checks each candidate against the filter.
 *
 * Resource ids are canonical UUIDs (resource-id.ts). An id that is not (a
 * record written by hand) keeps its entries apart, its id in the key after
 * the value and a 0x00 byte, its dups without the id: LMDB wants the dups of
 * a key of one size, and the 0x00 keeps such a key within its value's range.
 */
import { writeUuid } from './uuid-keys.js';

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

/** A code of the dictionary: two bytes in a key. */
export const MAX_CODE = 0xffff;

const enum Tag {
  Null = 0,
  Boolean = 1,
  Number = 2,
  String = 3,
}
/** First byte after the tag of a value's key; also the byte that follows a value before an id that is not a UUID. */
const PREFIX_BYTES = 5;
const ID_SEPARATOR = 0x00;

/** A number's 8 bytes in key order at `at`: big-endian, the sign bit flipped (all bits when negative). */
function writeNumber(b: Buffer, v: number, at: number): void {
  // -0 === 0 for the filter but not for its bytes.
  b.writeDoubleBE(v === 0 ? 0 : v, at);
  if (b[at]! & 0x80) for (let i = at; i < at + 8; i++) b[i] = ~b[i]! & 0xff;
  else b[at]! |= 0x80;
}

/** Bytes of a value's encoding, its tag included; `text` is indexString of a string value. */
function valueLength(v: StoredValue, text: string): number {
  if (v === null) return 1;
  if (typeof v === 'boolean') return 2;
  if (typeof v === 'number') return 9;
  return 1 + Buffer.byteLength(text);
}

/** Writes a value's encoding at `at` (room for valueLength); `text` as for valueLength. */
function writeValue(b: Buffer, v: StoredValue, text: string, at: number): void {
  if (v === null) b[at] = Tag.Null;
  else if (typeof v === 'boolean') {
    b[at] = Tag.Boolean;
    b[at + 1] = v ? 1 : 0;
  } else if (typeof v === 'number') {
    b[at] = Tag.Number;
    writeNumber(b, v, at + 1);
  } else {
    b[at] = Tag.String;
    b.write(text, at + 1, 'utf8');
  }
}

function valueBytes(v: StoredValue): Buffer {
  const text = typeof v === 'string' ? indexString(v) : '';
  const b = Buffer.allocUnsafe(valueLength(v, text));
  writeValue(b, v, text, 0);
  return b;
}

function prefix(typeCode: number, fieldCode: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt16BE(typeCode, 0);
  b.writeUInt16BE(fieldCode, 2);
  return b;
}

const UUID_BYTES = 16;

/** A revision's place in the index: the dup bytes say which revision, and carry its revision_start. */
export interface IndexTarget {
  id: string;
  /** -1: the current revision. */
  revision: number;
  revisionStart: number;
}

/**
 * What every entry of one revision shares: its dup, and its id when that is
 * not a UUID (kept in the keys). Made once per revision: a collector's
 * first write files six entries for each of thousands of resources.
 */
export interface TargetBytes {
  dup: Buffer;
  /** The id the keys carry after the value; undefined for a UUID, which the dup holds. */
  keyId: string | undefined;
}

export function targetBytes({ id, revision, revisionStart }: IndexTarget): TargetBytes {
  const history = revision !== -1;
  const size = history ? 16 : 8;
  // Written first and the test of the id at once (writeUuid refuses anything but a canonical UUID): no regular expression per revision.
  const withId = Buffer.allocUnsafe(UUID_BYTES + size);
  const uuid = writeUuid(id, withId, 0) === UUID_BYTES;
  const dup = uuid ? withId : Buffer.allocUnsafe(size);
  let at = uuid ? UUID_BYTES : 0;
  if (history) at = dup.writeDoubleBE(revision, at);
  dup.writeDoubleBE(revisionStart, at);
  return { dup, keyId: uuid ? undefined : id };
}

/**
 * The key of one entry: `value` of field `fieldCode` on the revision of
 * `target`. Written into one buffer: a collector's first write files
 * ~60,000 entries, and the small buffers joined per entry were a third of
 * that write's allocations.
 */
export function entryKey(typeCode: number, fieldCode: number, value: StoredValue, { keyId }: TargetBytes): Buffer {
  const text = typeof value === 'string' ? indexString(value) : '';
  const valueEnd = 4 + valueLength(value, text);
  const key = Buffer.allocUnsafe(valueEnd + (keyId === undefined ? 0 : 1 + Buffer.byteLength(keyId)));
  key.writeUInt16BE(typeCode, 0);
  key.writeUInt16BE(fieldCode, 2);
  writeValue(key, value, text, 4);
  if (keyId !== undefined) {
    key[valueEnd] = ID_SEPARATOR;
    key.write(keyId, valueEnd + 1, 'utf8');
  }
  return key;
}

/** The key and dup of one entry: `value` of field `fieldCode` on `target`, in the current index when revision is -1. */
export function entryBytes(typeCode: number, fieldCode: number, value: StoredValue, target: IndexTarget): { key: Buffer; dup: Buffer } {
  const bytes = targetBytes(target);
  return { key: entryKey(typeCode, fieldCode, value, bytes), dup: bytes.dup };
}

const HEX_DIGITS = Buffer.from('0123456789abcdef');
/** Where each byte's two digits go in the 36 characters of a UUID. */
const DIGIT_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
const uuidText = Buffer.alloc(36, '-');

/** A UUID's text from its 16 bytes, written into one buffer: far cheaper than joining strings, which the sets of ids they end up in flatten. */
function uuidOf(b: Buffer): string {
  for (let i = 0; i < 16; i++) {
    const x = b[i]!;
    const at = DIGIT_AT[i]!;
    uuidText[at] = HEX_DIGITS[x >> 4]!;
    uuidText[at + 1] = HEX_DIGITS[x & 15]!;
  }
  return uuidText.toString('latin1');
}

/** Where a key's value ends. */
function valueEnd(key: Uint8Array): number {
  switch (key[4]) {
    case Tag.Null:
      return PREFIX_BYTES;
    case Tag.Boolean:
      return PREFIX_BYTES + 1;
    case Tag.Number:
      return PREFIX_BYTES + 8;
    default: {
      const end = key.indexOf(ID_SEPARATOR, PREFIX_BYTES);
      return end === -1 ? key.length : end;
    }
  }
}

/** The revision an entry points at; `history` for resource_history_values. */
export function entryTarget(key: Buffer, dup: Buffer, history: boolean): IndexTarget {
  const uuid = dup.length === (history ? 32 : 24);
  const at = uuid ? 16 : 0;
  const id = uuid ? uuidOf(dup) : key.toString('utf8', valueEnd(key) + 1);
  return history
    ? { id, revision: dup.readDoubleBE(at), revisionStart: dup.readDoubleBE(at + 8) }
    : { id, revision: -1, revisionStart: dup.readDoubleBE(at) };
}

/** The id an entry of resource_values points at (reads no more of it). */
export function entryId(key: Buffer, dup: Buffer): string {
  return dup.length === 24 ? uuidOf(dup) : key.toString('utf8', valueEnd(key) + 1);
}

/** A key's codes and value in key form (a string as `indexString` made it). */
export function decodeKey(key: Buffer): { typeCode: number; fieldCode: number; value: StoredValue } {
  const typeCode = key.readUInt16BE(0);
  const fieldCode = key.readUInt16BE(2);
  switch (key[4]) {
    case Tag.Null:
      return { typeCode, fieldCode, value: null };
    case Tag.Boolean:
      return { typeCode, fieldCode, value: key[5] === 1 };
    case Tag.Number: {
      const b = Buffer.from(key.subarray(PREFIX_BYTES, PREFIX_BYTES + 8));
      if (b[0]! & 0x80) b[0]! &= 0x7f;
      else for (let i = 0; i < 8; i++) b[i] = ~b[i]! & 0xff;
      return { typeCode, fieldCode, value: b.readDoubleBE(0) };
    }
    default:
      return { typeCode, fieldCode, value: key.toString('utf8', PREFIX_BYTES, valueEnd(key)) };
  }
}

/**
 * Index entries of one field: its NULLs, or its non-null values between
 * `lo` and `hi` (inclusive; absent means unbounded).
 */
export type KeyRange =
  | { readonly field: string; readonly nulls: true }
  | { readonly field: string; readonly nulls: false; readonly lo?: IndexValue; readonly hi?: IndexValue };

/** lmdb start (inclusive) and end (exclusive) keys of a range of a field under a type. */
export function rangeBounds(typeCode: number, fieldCode: number, range: KeyRange): { start: Buffer; end: Buffer } {
  const head = prefix(typeCode, fieldCode);
  if (range.nulls) return { start: Buffer.concat([head, Buffer.of(Tag.Null)]), end: Buffer.concat([head, Buffer.of(Tag.Boolean)]) };
  return {
    start: Buffer.concat([head, range.lo === undefined ? Buffer.of(Tag.Boolean) : valueBytes(range.lo)]),
    // Every key of value `hi` (a longer string's next byte is >= 0x20, an id's separator 0x00) sorts before hi | 0x01.
    end: Buffer.concat([head, range.hi === undefined ? Buffer.of(0xff) : Buffer.concat([valueBytes(range.hi), Buffer.of(ID_SEPARATOR + 1)])]),
  };
}

/** Whether `range` holds `value`: whether its entry, were it filed, would be among the range's (rangeBounds). */
export function rangeHolds(range: KeyRange, value: IndexValue): boolean {
  if (range.nulls) return false;
  const { start, end } = rangeBounds(0, 0, range);
  const key = entryKey(0, 0, value, { dup: EMPTY, keyId: undefined });
  return Buffer.compare(start, key) <= 0 && Buffer.compare(key, end) < 0;
}
const EMPTY = Buffer.alloc(0);

/** Bounds of every key under a type. */
export function typeBounds(typeCode: number): { start: Buffer; end: Buffer } {
  return { start: prefix(typeCode, 0), end: Buffer.concat([prefix(typeCode, MAX_CODE), Buffer.of(0xff)]) };
}

/**
 * The range of strings starting with `prefix` in key form, or undefined
 * when the prefix is not kept exactly by `indexString`.
 */
export function prefixRange(field: string, prefix: string): KeyRange | undefined {
  if (prefix === '' || prefix.length >= INDEXED_STRING_LENGTH || !isExactIndexString(prefix)) return undefined;
  return { field, nulls: false, lo: prefix, hi: prefix + TOP_CHAR.repeat(INDEXED_STRING_LENGTH - prefix.length) };
}
