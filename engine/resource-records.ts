/**
 * The `resources` database: each current resource's record together with
 * its named metrics (name -> metric id). The named metrics had a database
 * of their own, metrics_by_resource: a record per metric keyed by the
 * resource's UUID and the name, 37 bytes of key and LMDB's node for 17 of
 * value, in pages a random UUID order leaves a third empty. In the record
 * they cost the name and the id, and a collector's new series one LMDB
 * write fewer (bench/RESULTS.md, session 27).
 *
 * A value: a 0 byte, the record's length (varuint), the record (storage.ts'
 * RESOURCE_RECORDS, without the id the key holds), then each named metric
 * in name order (UTF-8 bytes): the name's code (varuint, engine/name-codes.ts),
 * the id's length (varuint), the id (uuid-keys.ts idValues). Before format
 * 13 a value had no 0 byte and each name in full (its length, its bytes),
 * which still reads. Metric names keep the storage key limit they had as
 * part of a key (key-limit.ts), so that a name is accepted or refused as
 * before. From format 14 the record holds its type's and its creator's
 * codes (the same dictionary) instead of their text: a collector's
 * resources all share both, and a Keystone creator (`user:project`) is 65
 * characters. A record stored before holds their text, which still reads.
 */
import type { Database } from 'lmdb';
import { readVaruint, varuintSize, writeVaruint } from '../formats/varint.js';
import { checkKeyLength, MAX_STORAGE_KEY_BYTES } from './key-limit.js';
import type { MetricOwner } from './metric-records.js';
import type { NameCodes } from './name-codes.js';
import type { FieldsEncoder } from './record-codec.js';
import type { ResourceRecord } from './resource-search.js';
import { idFirstKeys, idValues } from './uuid-keys.js';

/** A resource's record as stored: its type and creator as their codes, or as their text (before format 14). */
export type StoredResource = Omit<ResourceRecord, 'type' | 'creator'> & { type: string | number; creator: string | number };

/** A resource's named metrics: metric id by name. */
export type NamedMetrics = Map<string, string>;

/** A stored value that does not read as this layout. */
export class CorruptResourceValue extends Error {}

function varuintAt(bytes: Uint8Array, at: number): { value: number; next: number } {
  const read = readVaruint(bytes, at);
  if (typeof read === 'string') throw new CorruptResourceValue(`resource value: ${read} length at byte ${at}`);
  return read;
}

/** First byte of a value whose named metrics hold their names' codes (format 13): one without starts with its record's length, never 0. */
const CODED = 0;

/** A value's record bytes, where its named metrics start, and whether they hold codes. */
interface Layout {
  record: Uint8Array;
  metricsAt: number;
  coded: boolean;
}

function layoutOf(value: Uint8Array): Layout {
  const coded = value.length > 0 && value[0] === CODED;
  const { value: length, next } = varuintAt(value, coded ? 1 : 0);
  if (next + length > value.length) throw new CorruptResourceValue('resource value: record past its end');
  return { record: value.subarray(next, next + length), metricsAt: next + length, coded };
}

/** The record's bytes (a copy) and the named metrics of a stored value. */
export function splitStoredValue(value: Uint8Array, codes: NameCodes): { record: Uint8Array; metrics: NamedMetrics } {
  const layout = layoutOf(value);
  const record = Uint8Array.prototype.slice.call(layout.record);
  return { record, metrics: readNamedMetrics(value, layout, codes) };
}

/** A named metric as stored: its name's code, or its name's UTF-8 bytes before format 13; its id's bytes. */
interface Entry {
  name: number | Uint8Array;
  id: Uint8Array;
  next: number;
}

function entryAt(value: Uint8Array, at: number, coded: boolean): Entry {
  const name = varuintAt(value, at);
  const nameEnd = coded ? name.next : name.next + name.value;
  const id = varuintAt(value, nameEnd);
  const idEnd = id.next + id.value;
  if (idEnd > value.length) throw new CorruptResourceValue(`resource value: named metric past its end at byte ${at}`);
  return { name: coded ? name.value : value.subarray(name.next, nameEnd), id: value.subarray(id.next, idEnd), next: idEnd };
}

/**
 * A name as stored (an entry's, a record's type or creator), read once
 * every byte of the value was: looking a code up may read LMDB, which
 * reuses the buffer of a value read fast.
 */
function nameFrom(name: number | string, codes: NameCodes): string {
  if (typeof name === 'string') return name;
  const found = codes.name(name);
  if (found === undefined) throw new CorruptResourceValue(`resource value: no name has code ${name}`);
  return found;
}

/** An entry's name as stored: its code, or its text (before format 13). */
const storedName = ({ name }: Entry): number | string => (typeof name === 'number' ? name : Buffer.from(name.buffer, name.byteOffset, name.length).toString('utf8'));

/** The named metrics of `value`, in stored order. */
function readNamedMetrics(value: Uint8Array, layout: Layout, codes: NameCodes): NamedMetrics {
  const stored: [name: number | string, id: string][] = [];
  for (let p = layout.metricsAt; p < value.length; ) {
    const entry = entryAt(value, p, layout.coded);
    stored.push([storedName(entry), idValues.decode(entry.id)]);
    p = entry.next;
  }
  return new Map(stored.map(([name, id]) => [nameFrom(name, codes), id]));
}

/** The name under which `value`'s named metrics hold the metric of stored id `id`, if any. */
function nameOf(value: Uint8Array, layout: Layout, id: Uint8Array, codes: NameCodes): string | undefined {
  for (let p = layout.metricsAt; p < value.length; ) {
    const entry = entryAt(value, p, layout.coded);
    if (Buffer.compare(id, entry.id) === 0) return nameFrom(storedName(entry), codes);
    p = entry.next;
  }
  return undefined;
}

/**
 * A stored value: `record`'s bytes and named metrics (`metrics`, or the
 * bytes of coded ones already laid out), in one buffer (a collector's new
 * series writes one), their names as codes; inside a write transaction.
 * The upgrade from format 9 makes one of each record there was.
 */
export function withNamedMetrics(record: Uint8Array, metrics: NamedMetrics | Uint8Array, codes: NameCodes): Buffer {
  let size = 1 + varuintSize(record.length) + record.length;
  const entries: [code: number, id: Buffer][] = [];
  if (metrics instanceof Uint8Array) size += metrics.length;
  else {
    // In name order (UTF-8 bytes), as metricsOf answers them; each name encoded once, and not at all for a lone one (a collector's).
    const named = [...metrics];
    if (named.length > 1) {
      const bytes = new Map(named.map(([name]) => [name, Buffer.from(name, 'utf8')]));
      named.sort(([a], [b]) => Buffer.compare(bytes.get(a)!, bytes.get(b)!));
    }
    for (const [name, id] of named) {
      const entry: [number, Buffer] = [codes.code(name), idValues.encode(id)];
      entries.push(entry);
      size += varuintSize(entry[0]) + varuintSize(entry[1].length) + entry[1].length;
    }
  }
  const out = Buffer.allocUnsafe(size);
  out[0] = CODED;
  let p = writeVaruint(out, record.length, 1);
  out.set(record, p);
  p += record.length;
  if (metrics instanceof Uint8Array) out.set(metrics, p);
  for (const [code, id] of entries) {
    p = writeVaruint(out, code, p);
    p = writeVaruint(out, id.length, p);
    out.set(id, p);
    p += id.length;
  }
  return out;
}

/** lmdb-js' putSync answers whether it wrote when told not to overwrite; its typings say void. */
type PutSyncNoOverwrite = (key: string, value: Buffer, options: { noOverwrite: true }) => boolean;

export class ResourceRecords {
  constructor(
    /** Keyed by resource id (uuid-keys.ts idKeys), values as laid out above. */
    readonly db: Database<Buffer, string>,
    private readonly codec: FieldsEncoder<StoredResource>,
    private readonly codes: NameCodes,
  ) {}

  get(id: string): ResourceRecord | undefined {
    const value = this.db.getBinaryFast(id);
    return value === undefined ? undefined : this.named(id, this.codec.decode(layoutOf(value).record));
  }

  /** The named metrics of resource `id` (none when it does not exist), in name order. */
  metricsOf(id: string): NamedMetrics {
    return this.metricsIfExists(id) ?? new Map();
  }

  /** metricsOf, undefined when resource `id` does not exist: one read for both answers. */
  metricsIfExists(id: string): NamedMetrics | undefined {
    const value = this.db.getBinaryFast(id);
    return value === undefined ? undefined : readNamedMetrics(value, layoutOf(value), this.codes);
  }

  /** metricsIfExists with the resource's creator: one read for both. */
  namedAndCreator(id: string): { metrics: NamedMetrics; creator: string } | undefined {
    const value = this.db.getBinaryFast(id);
    if (value === undefined) return undefined;
    const layout = layoutOf(value);
    const creator = this.codec.field(layout.record, 'creator');
    const metrics = readNamedMetrics(value, layout, this.codes);
    return { metrics, creator: nameFrom(creator, this.codes) };
  }

  /**
   * What resource `id` holds of metric `metricId` (engine/metric-records.ts),
   * undefined when it does not exist: read without decoding the rest of the
   * record and the other metrics, as a metric read costs it.
   */
  owner(id: string, metricId: string): MetricOwner | undefined {
    const value = this.db.getBinaryFast(id);
    if (value === undefined) return undefined;
    const layout = layoutOf(value);
    const creator = this.codec.field(layout.record, 'creator');
    const name = nameOf(value, layout, idValues.encode(metricId), this.codes);
    return { creator: nameFrom(creator, this.codes), name };
  }

  /** Every record and its named metrics, in key order. */
  *getRange(): Generator<{ key: string; value: ResourceRecord; metrics: NamedMetrics }> {
    for (const { key, value } of this.db.getRange()) {
      const layout = layoutOf(value);
      const stored = this.codec.decode(layout.record);
      const metrics = readNamedMetrics(value, layout, this.codes);
      yield { key, value: this.named(key, stored), metrics };
    }
  }

  /** Writes `record` as resource `id`'s, keeping its named metrics; inside a write transaction. */
  put(id: string, record: ResourceRecord): void {
    const old = this.db.getBinaryFast(id);
    let metrics: NamedMetrics | Uint8Array = new Uint8Array(0);
    if (old !== undefined) {
      const layout = layoutOf(old);
      metrics = layout.coded ? Buffer.from(old.subarray(layout.metricsAt, old.length)) : readNamedMetrics(old, layout, this.codes);
    }
    this.db.putSync(id, withNamedMetrics(this.encoded(record), metrics, this.codes));
  }

  /** Writes a new resource with `metrics` unless `id` holds one; answers whether it wrote. Inside a write transaction. */
  putIfAbsent(id: string, record: ResourceRecord, metrics: NamedMetrics): boolean {
    for (const name of metrics.keys()) checkNameLength(id, name);
    const putSync = this.db.putSync as unknown as PutSyncNoOverwrite;
    return putSync.call(this.db, id, withNamedMetrics(this.encoded(record), metrics, this.codes), { noOverwrite: true });
  }

  /** Replaces the named metrics of resource `id`, which exists; inside a write transaction. */
  setMetrics(id: string, metrics: NamedMetrics): void {
    for (const name of metrics.keys()) checkNameLength(id, name);
    const old = this.db.getBinaryFast(id);
    if (old === undefined) throw new Error(`resource ${id} does not exist`);
    this.db.putSync(id, withNamedMetrics(Buffer.from(layoutOf(old).record), metrics, this.codes));
  }

  /** Takes `name` off resource `resourceId`'s named metrics if it names `metricId` there; inside a write transaction. */
  unnameMetric(resourceId: string, name: string, metricId: string): void {
    const named = this.metricsOf(resourceId);
    if (named.get(name) !== metricId) return;
    named.delete(name);
    this.setMetrics(resourceId, named);
  }

  remove(id: string): boolean {
    return this.db.removeSync(id);
  }

  getStats(): unknown {
    return this.db.getStats();
  }

  /** The record's bytes, its type and creator as their codes; inside a write transaction. */
  private encoded(record: ResourceRecord): Buffer {
    return this.codec.encode({ ...record, type: this.codes.code(record.type), creator: this.codes.code(record.creator) });
  }

  /** A decoded record with its id and its type's and creator's text: once its value's bytes were all read (see nameFrom). */
  private named(id: string, stored: StoredResource): ResourceRecord {
    const record = stored as unknown as ResourceRecord;
    record.id = id;
    record.type = nameFrom(stored.type, this.codes);
    record.creator = nameFrom(stored.creator, this.codes);
    return record;
  }
}

/** The key of a resource's id and a separator: what a name's key in metrics_by_resource had before the name. */
const KEY_BEFORE_NAME = 18;
/** Bytes ordered-binary writes a character in at most. */
const KEY_BYTES_A_CHARACTER = 3;

/** Refuses a metric name longer than its key in metrics_by_resource could be (key-limit.ts); encodes only a name that may be. */
function checkNameLength(resourceId: string, name: string): void {
  if (KEY_BEFORE_NAME + KEY_BYTES_A_CHARACTER * name.length <= MAX_STORAGE_KEY_BYTES) return;
  checkKeyLength(idFirstKeys, [resourceId, name]);
}
