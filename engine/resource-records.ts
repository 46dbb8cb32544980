/**
 * The `resources` database: each current resource's record together with
 * its named metrics (name -> metric id). The named metrics had a database
 * of their own, metrics_by_resource: a record per metric keyed by the
 * resource's UUID and the name, 37 bytes of key and LMDB's node for 17 of
 * value, in pages a random UUID order leaves a third empty. In the record
 * they cost the name and the id, and a collector's new series one LMDB
 * write fewer (bench/RESULTS.md, session 27).
 *
 * A value: the record's length (varuint), the record (storage.ts'
 * RESOURCE_RECORDS, without the id the key holds), then each named metric
 * in name order (UTF-8 bytes): the name's length (varuint), the name, the
 * id's length (varuint), the id (uuid-keys.ts idValues). Metric names keep
 * the storage key limit they had as part of a key (key-limit.ts), so that
 * a name is accepted or refused as before.
 */
import type { Database } from 'lmdb';
import { readVaruint, varuintSize, writeVaruint } from '../formats/varint.js';
import { checkKeyLength, MAX_STORAGE_KEY_BYTES } from './key-limit.js';
import type { MetricOwner } from './metric-records.js';
import type { FieldsEncoder } from './record-codec.js';
import type { ResourceRecord } from './resource-search.js';
import { idFirstKeys, idValues } from './uuid-keys.js';

/** A resource's named metrics: metric id by name. */
export type NamedMetrics = Map<string, string>;

/** A stored value that does not read as this layout. */
export class CorruptResourceValue extends Error {}

function varuintAt(bytes: Uint8Array, at: number): { value: number; next: number } {
  const read = readVaruint(bytes, at);
  if (typeof read === 'string') throw new CorruptResourceValue(`resource value: ${read} length at byte ${at}`);
  return read;
}

/** Where the named metrics of `value` start, and its record's bytes. */
function recordPart(value: Uint8Array): { record: Uint8Array; metricsAt: number } {
  const { value: length, next } = varuintAt(value, 0);
  if (next + length > value.length) throw new CorruptResourceValue('resource value: record past its end');
  return { record: value.subarray(next, next + length), metricsAt: next + length };
}

/** The record's bytes and the named metrics of a stored value. */
export function splitStoredValue(value: Uint8Array): { record: Uint8Array; metrics: NamedMetrics } {
  const { record, metricsAt } = recordPart(value);
  return { record, metrics: readNamedMetrics(value, metricsAt) };
}

/** The named metrics of `value`, from `at`, in stored order. */
function readNamedMetrics(value: Uint8Array, at = recordPart(value).metricsAt): NamedMetrics {
  const out: NamedMetrics = new Map();
  let p = at;
  while (p < value.length) {
    const name = varuintAt(value, p);
    const nameEnd = name.next + name.value;
    const id = varuintAt(value, nameEnd);
    const idEnd = id.next + id.value;
    if (idEnd > value.length) throw new CorruptResourceValue(`resource value: named metric past its end at byte ${p}`);
    out.set(Buffer.from(value.buffer, value.byteOffset + name.next, name.value).toString('utf8'), idValues.decode(value.subarray(id.next, idEnd)));
    p = idEnd;
  }
  return out;
}

/** The name under which `value`'s named metrics (from `at`) hold the metric of stored id `id`, if any. */
function nameOf(value: Uint8Array, at: number, id: Uint8Array): string | undefined {
  let p = at;
  while (p < value.length) {
    const name = varuintAt(value, p);
    const nameEnd = name.next + name.value;
    const idAt = varuintAt(value, nameEnd);
    const idEnd = idAt.next + idAt.value;
    if (idEnd > value.length) throw new CorruptResourceValue(`resource value: named metric past its end at byte ${p}`);
    if (idAt.value === id.length && Buffer.compare(id, value.subarray(idAt.next, idEnd)) === 0) {
      return Buffer.from(value.buffer, value.byteOffset + name.next, name.value).toString('utf8');
    }
    p = idEnd;
  }
  return undefined;
}

/**
 * A stored value: `record`'s bytes and named metrics (`metrics`, or bytes
 * already laid out), in one buffer (a collector's new series writes one).
 * The upgrade from format 9 makes one of each record there was.
 */
export function withNamedMetrics(record: Uint8Array, metrics: NamedMetrics | Uint8Array): Buffer {
  let size = varuintSize(record.length) + record.length;
  const entries: [name: Buffer, id: Buffer][] = [];
  if (metrics instanceof Uint8Array) size += metrics.length;
  else {
    for (const [name, id] of metrics) {
      const entry: [Buffer, Buffer] = [Buffer.from(name, 'utf8'), idValues.encode(id)];
      entries.push(entry);
      size += varuintSize(entry[0].length) + entry[0].length + varuintSize(entry[1].length) + entry[1].length;
    }
    if (entries.length > 1) entries.sort(([a], [b]) => Buffer.compare(a, b));
  }
  const out = Buffer.allocUnsafe(size);
  let p = writeVaruint(out, record.length, 0);
  out.set(record, p);
  p += record.length;
  if (metrics instanceof Uint8Array) out.set(metrics, p);
  for (const [name, id] of entries) {
    p = writeVaruint(out, name.length, p);
    out.set(name, p);
    p = writeVaruint(out, id.length, p + name.length);
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
    private readonly codec: FieldsEncoder<ResourceRecord>,
  ) {}

  get(id: string): ResourceRecord | undefined {
    const value = this.db.getBinaryFast(id);
    return value === undefined ? undefined : this.decoded(id, recordPart(value).record);
  }

  /** The named metrics of resource `id` (none when it does not exist), in name order. */
  metricsOf(id: string): NamedMetrics {
    return this.metricsIfExists(id) ?? new Map();
  }

  /** metricsOf, undefined when resource `id` does not exist: one read for both answers. */
  metricsIfExists(id: string): NamedMetrics | undefined {
    const value = this.db.getBinaryFast(id);
    return value === undefined ? undefined : readNamedMetrics(value);
  }

  /**
   * What resource `id` holds of metric `metricId` (engine/metric-records.ts),
   * undefined when it does not exist: read without decoding the rest of the
   * record and the other metrics, as a metric read costs it.
   */
  owner(id: string, metricId: string): MetricOwner | undefined {
    const value = this.db.getBinaryFast(id);
    if (value === undefined) return undefined;
    const { record, metricsAt } = recordPart(value);
    return { creator: this.codec.field(record, 'creator'), name: nameOf(value, metricsAt, idValues.encode(metricId)) };
  }

  /** Every record and its named metrics, in key order. */
  *getRange(): Generator<{ key: string; value: ResourceRecord; metrics: NamedMetrics }> {
    for (const { key, value } of this.db.getRange()) {
      const { record, metrics } = splitStoredValue(value);
      yield { key, value: this.decoded(key, record), metrics };
    }
  }

  /** Writes `record` as resource `id`'s, keeping its named metrics; inside a write transaction. */
  put(id: string, record: ResourceRecord): void {
    const old = this.db.getBinaryFast(id);
    const metrics = old === undefined ? new Uint8Array(0) : Buffer.from(old.subarray(recordPart(old).metricsAt, old.length));
    this.db.putSync(id, withNamedMetrics(this.codec.encode(record), metrics));
  }

  /** Writes a new resource with `metrics` unless `id` holds one; answers whether it wrote. Inside a write transaction. */
  putIfAbsent(id: string, record: ResourceRecord, metrics: NamedMetrics): boolean {
    for (const name of metrics.keys()) checkNameLength(id, name);
    const putSync = this.db.putSync as unknown as PutSyncNoOverwrite;
    return putSync.call(this.db, id, withNamedMetrics(this.codec.encode(record), metrics), { noOverwrite: true });
  }

  /** Replaces the named metrics of resource `id`, which exists; inside a write transaction. */
  setMetrics(id: string, metrics: NamedMetrics): void {
    for (const name of metrics.keys()) checkNameLength(id, name);
    const old = this.db.getBinaryFast(id);
    if (old === undefined) throw new Error(`resource ${id} does not exist`);
    this.db.putSync(id, withNamedMetrics(Buffer.from(recordPart(old).record), metrics));
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

  private decoded(id: string, bytes: Uint8Array): ResourceRecord {
    const record = this.codec.decode(bytes);
    record.id = id;
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
