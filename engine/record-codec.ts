/**
 * The index's records (metrics, resources and their past revisions) as
 * msgpack arrays of their fields in a fixed order, not maps: the field names
 * were a third of a metric record and half of a resource's (146 -> 94 and
 * 182 -> 90 bytes), stored once per record. Properties beyond the fields
 * named follow as one map, so that nothing a caller stores is lost. A record
 * written as a map (on-disk format 4 and before) still decodes as it was
 * stored. Fields holding a UUID (a record's own id, a metric's resource)
 * store a canonical one as its 16 bytes, not its 36 characters (format 6);
 * text stored before reads as it was. A record whose id is its database key
 * leaves the id out (format 7: a tenth of a quiet series' bytes went to
 * storing it twice), behind a byte msgpack never starts a value with; the
 * database puts the key back (engine/storage.ts KeyedRecords). From format
 * 11, a field equal to another one it names (a resource's `started_at`,
 * its `revision_start` until it changes) is stored as `true`, and an empty
 * object (a resource without attributes) as nil: 10 of a collector's
 * resource's ~90 bytes. Records stored before read as they were. One
 * field of a record reads alone, the fields before it skipped undecoded
 * (a resource's creator, for each of its metrics read: metric-records.ts).
 */
import { Packr, RESERVE_START_SPACE } from 'msgpackr';
import { skipValue } from '../formats/msgpack-skip.js';
import { readUuid, writeUuid } from './uuid-keys.js';

/** An lmdb-js value encoder (lmdb-js hands decode a buffer and the value's size). */
export interface RecordEncoder<T> {
  encode(record: T): Buffer;
  decode(bytes: Uint8Array, size?: number): T;
}

// Nested objects (a resource's attributes) as maps: msgpackr's records would define their shapes in every value.
const packr = new Packr({ useRecords: false });

const UUID_BYTES = 16;
/** msgpack's "never used" byte: a record stored without its key field follows it. */
const WITHOUT_KEY = 0xc1;

function packedUuid(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const bytes = Buffer.allocUnsafe(UUID_BYTES);
  return writeUuid(value, bytes, 0) < 0 ? value : bytes;
}

function unpackedUuid(value: unknown): unknown {
  return value instanceof Uint8Array && value.length === UUID_BYTES ? readUuid(value, 0) : value;
}

/** A fieldsEncoder: records, and one field of a stored record without decoding the others. */
export interface FieldsEncoder<T> extends RecordEncoder<T> {
  field<K extends keyof T & string>(bytes: Uint8Array, name: K): T[K];
}

/** Fields stored in fewer bytes when their value allows (none holds `true`, nor an empty object that is not its whole value). */
export interface CompactFields<T> {
  /** Field -> the field it is stored as `true` for when equal to it (and not undefined). */
  sameAs?: Partial<Record<keyof T & string, keyof T & string>>;
  /** Fields holding an object, stored as nil when it has no property. */
  objects?: readonly (keyof T & string)[];
}

/** The msgpack string from `at` to `end`, decoded directly: msgpackr's set-up costs more than the string (a resource's creator read for each of its metrics read). */
function stringAt(bytes: Uint8Array, at: number, end: number): string | undefined {
  const type = bytes[at]!;
  const header = type >= 0xa0 && type <= 0xbf ? 1 : type === 0xd9 ? 2 : type === 0xda ? 3 : type === 0xdb ? 5 : 0;
  return header === 0 ? undefined : Buffer.from(bytes.buffer, bytes.byteOffset + at + header, end - at - header).toString('utf8');
}

function isEmptyObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  for (const _ in value) return false;
  return true;
}

/**
 * `uuids`: the fields that hold a UUID or null. `keyField`: a field the
 * database key holds, left out of the bytes: it decodes as undefined, in
 * its place, for the database to fill in. `compact`: see CompactFields.
 */
export function fieldsEncoder<T extends object>(
  fields: readonly (keyof T & string)[],
  uuids: readonly (keyof T & string)[] = [],
  keyField?: keyof T & string,
  compact: CompactFields<T> = {},
): FieldsEncoder<T> {
  const named = new Set<string>(fields);
  const layout = (names: readonly (keyof T & string)[]) =>
    names.map((name) => ({ name, uuid: uuids.includes(name), sameAs: compact.sameAs?.[name], object: compact.objects?.includes(name) === true }));
  const full = layout(fields);
  const stored = layout(fields.filter((field) => field !== keyField));
  const storedValue = (record: T, { name, uuid, sameAs, object }: (typeof stored)[number]): unknown => {
    const value = record[name];
    if (uuid) return packedUuid(value);
    if (sameAs !== undefined && value !== undefined && value === record[sameAs]) return true;
    if (object && isEmptyObject(value)) return null;
    return value;
  };
  const restored = full.filter(({ sameAs, object }) => sameAs !== undefined || object);
  const decode = (bytes: Uint8Array, size?: number): T => {
    const end = size ?? bytes.length;
    const withoutKey = keyField !== undefined && end > 0 && bytes[0] === WITHOUT_KEY;
    const value: unknown = packr.unpack(bytes.subarray(withoutKey ? 1 : 0, end));
    if (!Array.isArray(value)) return value as T;
    const record: Record<string, unknown> = {};
    const names = withoutKey ? stored : full;
    if (withoutKey) record[keyField!] = undefined;
    names.forEach(({ name, uuid }, i) => (record[name] = uuid ? unpackedUuid(value[i]) : value[i]));
    for (const { name, sameAs, object } of restored) {
      if (sameAs !== undefined && record[name] === true) record[name] = record[sameAs];
      else if (object && record[name] === null) record[name] = {};
    }
    if (value.length > names.length) Object.assign(record, value[names.length]);
    return record as T;
  };
  const field = <K extends keyof T & string>(bytes: Uint8Array, name: K): T[K] => {
    const withoutKey = keyField !== undefined && bytes.length > 0 && bytes[0] === WITHOUT_KEY;
    const names = withoutKey ? stored : full;
    const index = names.findIndex((f) => f.name === name);
    let at = withoutKey ? 1 : 0;
    const type = bytes[at]!;
    const count = type >= 0x90 && type <= 0x9f ? type & 0x0f : type === 0xdc ? (bytes[at + 1]! << 8) | bytes[at + 2]! : -1;
    // A map (format 4), or a field a transform reads with another: the whole record.
    if (index < 0 || count <= index || names[index]!.sameAs !== undefined || names[index]!.object) return decode(bytes)[name];
    at += type === 0xdc ? 3 : 1;
    for (let i = 0; i < index; i++) at = skipValue(bytes, at);
    const end = skipValue(bytes, at);
    const value: unknown = stringAt(bytes, at, end) ?? packr.unpack(bytes.subarray(at, end));
    return (names[index]!.uuid ? unpackedUuid(value) : value) as T[K];
  };
  return {
    field,
    decode,
    encode(record) {
      const values: unknown[] = stored.map((field) => storedValue(record, field));
      // Every index write encodes here: no array of entries for the usual record without extras.
      let rest: Record<string, unknown> | undefined;
      for (const key of Object.keys(record)) if (!named.has(key)) (rest ??= {})[key] = record[key as keyof T];
      if (rest !== undefined) values.push(rest);
      if (keyField === undefined) return packr.pack(values);
      const packed = packr.pack(values, RESERVE_START_SPACE | 1);
      packed[0] = WITHOUT_KEY;
      return packed;
    },
  };
}
