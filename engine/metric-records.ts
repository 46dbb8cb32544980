/**
 * The `metrics` database: metric records keyed by their id and stored
 * without it (record-codec.ts keyField), whose reads put the id back.
 *
 * From format 12, a metric named on a resource leaves out what that
 * resource's record holds already: its name (the resource names the metric,
 * engine/resource-records.ts) and its creator when it is the resource's
 * (as it is for every metric a resource is created or extended with). Each
 * is stored as `true`, and a read takes it from the resource (~1.5 us
 * more for a record not cached, resource-records.ts owner): ~24 of a collector
 * metric's ~50 bytes (`cpu.usage@region=r0`, `admin`), and the 65
 * characters of a Keystone creator (`user:project`) where there is one.
 * A resource's creator never changes, and a metric's name changes only
 * with the resource naming it, which rewrites the metric's record. Records
 * stored whole (before format 12, or without a resource) read as they were.
 * From format 14 a record holds its archive policy's code (engine/name-codes.ts)
 * instead of its name: Ceilometer's are ~20 characters (`ceilometer-low-rate`),
 * the same for thousands of metrics. A record stored before holds the name,
 * which still reads.
 *
 * It offers only the operations the engine uses, so that a new kind of
 * read fails to compile rather than return records without their id or
 * with what they left out.
 */
import type { Database, RangeIterable } from 'lmdb';
import type { MetricRecord } from './index.js';
import type { NameCodes } from './name-codes.js';
import type { ResourceRecords } from './resource-records.js';

/** A metric record as stored: `true` for a field its resource holds. */
export interface StoredMetric extends Omit<MetricRecord, 'name' | 'creator'> {
  name: string | null | true;
  creator: string | true;
}

/** A metric record as in the database: its archive policy as its code, or as its name (before format 14). */
export type CodedMetric = Omit<StoredMetric, 'archivePolicyName'> & { archivePolicyName: string | number };

/** What a metric's resource holds of it. */
export interface MetricOwner {
  creator: string;
  /** The name the resource gives the metric; undefined when it names it not. */
  name: string | undefined;
}

/** A record that leaves fields to a resource that does not name it (or does not exist). */
export class UnresolvedMetricRecord extends Error {
  constructor(readonly metricId: string, resourceId: string | null) {
    super(`metric ${metricId} leaves its name or creator to resource ${String(resourceId)}, which does not name it`);
  }
}

/** A record whose archive policy's code no name has. */
export class CorruptMetricRecord extends Error {}

/** Whether a stored record leaves a field to its resource. */
const leavesToResource = (m: StoredMetric): boolean => m.name === true || m.creator === true;

/** The stored form of `metric`, its policy's code `policyCode`, named on a resource of creator `ownerCreator` (undefined: on none). */
function codedMetric(metric: MetricRecord, ownerCreator: string | undefined, policyCode: number): CodedMetric {
  if (ownerCreator === undefined || metric.resourceId === null || metric.name === null) return { ...metric, archivePolicyName: policyCode };
  return { ...metric, archivePolicyName: policyCode, name: true, creator: metric.creator === ownerCreator ? true : metric.creator };
}

/** `stored` (of id `id`) with the fields it leaves to `owner` filled in; undefined when `owner` cannot fill them. */
export function resolvedMetric(id: string, stored: StoredMetric, owner: MetricOwner | undefined): MetricRecord | undefined {
  stored.id = id;
  if (!leavesToResource(stored)) return stored as MetricRecord;
  if (owner === undefined) return undefined;
  const name = stored.name === true ? owner.name : stored.name;
  if (name === undefined) return undefined;
  return { ...stored, name, creator: stored.creator === true ? owner.creator : stored.creator };
}

export class MetricRecords {
  constructor(
    readonly db: Database<CodedMetric, string>,
    private readonly resources: ResourceRecords,
    private readonly codes: NameCodes,
  ) {}

  get(id: string): MetricRecord | undefined {
    const coded = this.db.get(id);
    return coded === undefined ? undefined : this.resolved(id, this.stored(id, coded));
  }

  /** The record as stored, its id and its policy's name put back: what it leaves to its resource unread. */
  getStored(id: string): StoredMetric | undefined {
    const coded = this.db.get(id);
    return coded === undefined ? undefined : this.stored(id, coded);
  }

  /** Every record, in key order. */
  getRange(): RangeIterable<{ key: string; value: MetricRecord }> {
    return this.db.getRange().map(({ key, value }) => ({ key, value: this.resolved(key, this.stored(key, value)) }));
  }

  /** Every record as stored (as getStored answers it), in key order: for `check`, which resolves them itself. */
  getStoredRange(): RangeIterable<{ key: string; value: StoredMetric }> {
    return this.db.getRange().map(({ key, value }) => ({ key, value: this.stored(key, value) }));
  }

  doesExist(id: string): boolean {
    return this.db.doesExist(id);
  }

  /**
   * Stores `metric`; `ownerCreator` is the creator of the resource that
   * names it (its `resourceId`, as `name`) once the write's transaction
   * commits, if any: what that resource holds is left out.
   */
  put(id: string, metric: MetricRecord, ownerCreator?: string): Promise<boolean> {
    return this.db.put(id, codedMetric(metric, ownerCreator, this.codes.code(metric.archivePolicyName)));
  }

  remove(id: string): Promise<boolean> {
    return this.db.remove(id);
  }

  getStats(): unknown {
    return this.db.getStats();
  }

  /** `stored` (its id put back) with what it leaves to its resource read from it. */
  resolve(stored: StoredMetric): MetricRecord {
    return this.resolved(stored.id, stored);
  }

  /** A record read, its id and its policy's name put back. */
  private stored(id: string, coded: CodedMetric): StoredMetric {
    const stored = coded as StoredMetric;
    stored.id = id;
    if (typeof coded.archivePolicyName === 'number') {
      const name = this.codes.name(coded.archivePolicyName);
      if (name === undefined) throw new CorruptMetricRecord(`metric ${id}: no name has code ${coded.archivePolicyName}`);
      stored.archivePolicyName = name;
    }
    return stored;
  }

  private resolved(id: string, stored: StoredMetric): MetricRecord {
    const owner = leavesToResource(stored) && stored.resourceId !== null ? this.resources.owner(stored.resourceId, id) : undefined;
    const metric = resolvedMetric(id, stored, owner);
    if (metric === undefined) throw new UnresolvedMetricRecord(id, stored.resourceId);
    return metric;
  }
}
