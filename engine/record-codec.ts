/**
 * The index's records (metrics, resources and their past revisions) as
 * msgpack arrays of their fields in a fixed order, not maps: the field names
 * were a third of a metric record and half of a resource's (146 -> 94 and
 * 182 -> 90 bytes), stored once per record. Properties beyond the fields
 * named follow as one map, so that nothing a caller stores is lost. A record
 * written as a map (on-disk format 4 and before) still decodes as it was
 * stored. Fields holding a UUID (a record's own id, a metric's resource)
 * store a canonical one as its 16 bytes, not its 36 characters (format 6);
 * text stored before reads as it was.
 */
import { Packr } from 'msgpackr';
import { readUuid, writeUuid } from './uuid-keys.js';

/** An lmdb-js value encoder (lmdb-js hands decode a buffer and the value's size). */
export interface RecordEncoder<T> {
  encode(record: T): Buffer;
  decode(bytes: Uint8Array, size?: number): T;
}

// Nested objects (a resource's attributes) as maps: msgpackr's records would define their shapes in every value.
const packr = new Packr({ useRecords: false });

const UUID_BYTES = 16;

function packedUuid(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const bytes = Buffer.allocUnsafe(UUID_BYTES);
  return writeUuid(value, bytes, 0) < 0 ? value : bytes;
}

function unpackedUuid(value: unknown): unknown {
  return value instanceof Uint8Array && value.length === UUID_BYTES ? readUuid(value, 0) : value;
}

/** `uuids`: the fields that hold a UUID or null. */
export function fieldsEncoder<T extends object>(fields: readonly (keyof T & string)[], uuids: readonly (keyof T & string)[] = []): RecordEncoder<T> {
  const named = new Set<string>(fields);
  const isUuid = fields.map((field) => uuids.includes(field));
  return {
    encode(record) {
      const values: unknown[] = fields.map((field, i) => (isUuid[i] ? packedUuid(record[field]) : record[field]));
      // Every index write encodes here: no array of entries for the usual record without extras.
      let rest: Record<string, unknown> | undefined;
      for (const key of Object.keys(record)) if (!named.has(key)) (rest ??= {})[key] = record[key as keyof T];
      if (rest !== undefined) values.push(rest);
      return packr.pack(values);
    },
    decode(bytes, size) {
      const value: unknown = packr.unpack(size === undefined ? bytes : bytes.subarray(0, size));
      if (!Array.isArray(value)) return value as T;
      const record: Record<string, unknown> = {};
      fields.forEach((field, i) => (record[field] = isUuid[i] ? unpackedUuid(value[i]) : value[i]));
      if (value.length > fields.length) Object.assign(record, value[fields.length]);
      return record as T;
    },
  };
}
