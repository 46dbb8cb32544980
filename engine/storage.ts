/**
 * The embedded LMDB environment and its named databases. The server opens it
 * read-write; worker threads open the same path to read splits and commit
 * their processing results (LMDB serialises writers across threads). The
 * engine reaches measures and aggregates through the drivers over it
 * (engine/drivers/lmdb/), the index and the data directory tools directly.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type DatabaseOptions, type Key, type RootDatabase } from 'lmdb';
import type { SplitKeyTuple, StateChunkKey } from './drivers/types.js';
import { limitKeyLength } from './key-limit.js';
import { MetricRecords, type CodedMetric } from './metric-records.js';
import { NameCodes } from './name-codes.js';
import { fieldsEncoder } from './record-codec.js';
import { ResourceRecords, type StoredResource } from './resource-records.js';
import type { Revision } from './resource-search.js';
import { idFirstKeys, idKeys, idLastKeys, type KeyEncoder } from './uuid-keys.js';

/**
 * Bumped whenever the on-disk layout changes; engine/format-upgrade.ts
 * brings an older directory up to date when it is opened. Version 1 kept
 * incoming measures per metric; the upgrade (engine/incoming-upgrade.ts)
 * moves them into version 2's shared records.
 * Version 3 added open-split chunks; its metric states still read those of
 * versions 1 and 2 (as states with no chunks), so the upgrade from 2 only
 * stamps the version. Version 4 encodes open-split chunks with the split
 * codec; its chunks of version 3, raw, are still read, so the upgrade from 3
 * only stamps the version too, and keeps a release that would read encoded
 * chunks as raw from opening the directory. Version 5 stores metric and
 * resource records as arrays of their fields (record-codec.ts), and keeps
 * incoming records in segment files (drivers/lmdb/segment-log.ts); records
 * of version 4, maps and `incoming_batches`, are still read, so the upgrade
 * from 4 only stamps the version. Version 6 stores the metric and resource
 * UUIDs of the keys of ID_KEYED_DBS as 16 bytes (engine/uuid-keys.ts), and
 * those of metric and resource records and of metrics_by_resource's values
 * too (record-codec.ts, uuid-keys.ts idValues): the upgrade from 5 rewrites
 * those databases' keys; values holding text UUIDs still read.
 * Version 7 keeps each resource once in resources_by_revision_start (under
 * its own type, not also under `generic`), which replaces
 * resources_by_type, and no longer files current revisions by
 * revision_start and revision_end in resource_values: the upgrade from 6
 * drops resources_by_type and the two indexes are rebuilt on open
 * (engine/resources.ts, engine/resource-value-index.ts). Its metric and
 * resource records leave out their id, which their key holds
 * (record-codec.ts); records with it still read. Its metric states
 * (version 4, engine/metric-state.ts) may hold an open split's only chunk
 * inline (engine/state-chunks.ts); those of version 3 still read. A release
 * of format 6 would miss resources in that index and those values, and
 * could not read such states.
 * Version 8 files no NULL value in resource_values and
 * resource_history_values (a revision has no entry for a field it leaves
 * empty): the value index is rebuilt on open, so the upgrade from 7 only
 * stamps the version, which keeps the admin commands (whose check would
 * take the NULL entries for extras) off a directory not yet rebuilt.
 * Version 9 writes metric states of version 5 (engine/metric-state.ts:
 * numbers against ones the reader has, the newest chunk's key); those of
 * versions 1 to 4 still read and are rewritten as they are updated, so the
 * upgrade from 8 only stamps the version, which keeps a release of format 8,
 * which cannot read such states, from opening the directory.
 * Version 10 keeps a resource's named metrics in its record
 * (engine/resource-records.ts) instead of metrics_by_resource: the upgrade
 * from 9 moves them there and drops that database.
 * Version 11 writes a resource's (or revision's) started_at as `true` while
 * it is its revision_start, and no attributes as nil (record-codec.ts
 * CompactFields); older records still read, so the upgrade from 10 only
 * stamps the version, which keeps a release of format 10 from misreading.
 * Version 12 leaves out of a metric's record the name and creator its
 * resource holds (engine/metric-records.ts); older records still read, so
 * the upgrade from 11 only stamps the version, which keeps a release of
 * format 11, which would read `true` for them, from opening the directory.
 * Version 13 writes a resource's named metrics with their names' codes
 * (engine/name-codes.ts, databases name_codes and codes_by_name); older
 * values still read, so the upgrade from 12 only stamps the version.
 * Version 14 writes a resource record's type and creator, and a metric
 * record's archive policy, as their codes (the same dictionary); older
 * records still read, so the upgrade from 13 only stamps the version, which
 * keeps a release of format 13, which would read numbers for them, from
 * opening the directory.
 */
export const FORMAT_VERSION = 14;
/**
 * Meta key set in a directory whose resource records hold their named
 * metrics (created or upgraded at format 10 or later), so that the upgrade
 * moves them once, also in a directory stamped older by hand.
 */
export const NAMED_METRICS_IN_RECORDS = 'namedMetricsInRecords';
const UPGRADABLE_VERSIONS: readonly unknown[] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13];

/**
 * LMDB names of the databases whose keys hold a metric or resource UUID, and
 * how (engine/uuid-keys.ts). Not `splits`: its values are kilobytes, the
 * 20 bytes a key saves are not worth rewriting them on upgrade. Open them
 * with these encoders or with binary keys, never with lmdb-js' default
 * keys: those install on the database a comparison that expects keys
 * padded with zeros, and lookups of these keys then go astray.
 */
export const ID_KEYED_DBS: Readonly<Record<string, KeyEncoder>> = {
  metrics: idKeys,
  metric_state: idKeys,
  state_chunks: idFirstKeys,
  resources: idKeys,
  resource_history: idFirstKeys,
  resources_by_revision_start: idLastKeys('sn'),
  // Before format 10 (resource-records.ts): read once, to upgrade.
  metrics_by_resource: idFirstKeys,
};

export type IncomingKey = [metricId: string, seq: number];
export type ResourceHistoryKey = [resourceId: string, revision: number];
export type ResourceByRevisionStartKey = [type: string, revisionStart: number, resourceId: string];
export type MetricByResourceKey = [resourceId: string, metricName: string];

export interface Storage {
  readonly root: RootDatabase;
  readonly meta: Database<unknown, string>;
  readonly policies: Database<unknown, string>;
  readonly rules: Database<unknown, string>;
  /** Metric records by metric UUID (engine/metric-records.ts). */
  readonly metrics: MetricRecords;
  /** Format 1's measures accepted but not yet aggregated, per metric (read once, to upgrade). */
  readonly incoming: Database<Buffer, IncomingKey>;
  /** Measures accepted but not yet aggregated: one record per push (engine/incoming-batch.ts). */
  readonly incomingBatches: Database<Buffer, number>;
  /** Per metric: raw back-window points and open splits (engine/metric-state.ts). */
  readonly states: Database<Buffer, string>;
  /** Sealed (Arrow-encoded) aggregated splits. */
  readonly splits: Database<Buffer, SplitKeyTuple>;
  /** The older rows of open splits and raw tails, in raw chunks (engine/state-chunks.ts). */
  readonly stateChunks: Database<Buffer, StateChunkKey>;
  /** Resource types by name (`generic` is implicit). */
  readonly resourceTypes: Database<unknown, string>;
  /** Current revision of each resource, and its named metrics, by resource UUID. */
  readonly resources: ResourceRecords;
  /** The codes of the metric names, types, creators and archive policies records hold (databases name_codes and codes_by_name). */
  readonly nameCodes: NameCodes;
  /** Past revisions, by (resource UUID, revision number). */
  readonly resourceHistory: Database<unknown, ResourceHistoryKey>;
  /**
   * Index: current resources of each type in `revision_start` order (the
   * default sort), each under its own type. Value unused. Built from
   * `resources` when missing (meta `resourcesByRevisionStart`,
   * engine/revision-start-index.ts).
   */
  readonly resourcesByRevisionStart: Database<unknown, ResourceByRevisionStartKey>;
  /**
   * Index: current resources by the value of each field (generic fields and
   * the type's attributes) under their type, dupSort: a key per value, a dup
   * per revision (layout in resource-index-keys.ts). Built when missing
   * (engine/resource-value-index.ts).
   */
  readonly resourceValues: Database<Buffer, Buffer>;
  /** Index: closed revisions by field value, as resourceValues with the revision in the dup. */
  readonly resourceHistoryValues: Database<Buffer, Buffer>;
  close(): Promise<void>;
}

export class FormatVersionMismatch extends Error {
  constructor(found: unknown, dir: string) {
    super(
      `The data directory ${dir} holds on-disk format version ${String(found)}, ` +
        `this release reads version ${FORMAT_VERSION}; refusing to start`,
    );
  }
}

export interface StorageOptions {
  /** Bytes; LMDB's map grows up to this size. */
  mapSize?: number;
  readOnly?: boolean;
}

/** LMDB names of the dupSort databases (whose dup trees LMDB's page counts leave out, see db-stats.ts). */
export const DUP_SORT_DBS = { resourceValues: 'resource_values', resourceHistoryValues: 'resource_history_values' } as const;

/** The LMDB flags of DUP_SORT_DBS: fixed-size dups. */
const DUP_FLAGS = { dupSort: true, dupFixed: true } as const;

/** The LMDB flags database `name` is created with (a copy must open its twin with the same); none for most. */
export function databaseFlags(name: string): Partial<typeof DUP_FLAGS> {
  return (Object.values(DUP_SORT_DBS) as string[]).includes(name) ? DUP_FLAGS : {};
}

/**
 * Database `name` of `env` with its keys and values as bytes, and the flags
 * it was created with (databaseFlags). Never open one of ID_KEYED_DBS with
 * lmdb-js' default keys: that installs its comparison for them, which
 * expects keys padded with zeros, on the environment's handle of the
 * database, and lookups of the 16-byte keys go astray.
 */
export function rawDatabase(env: RootDatabase, name: string): Database<Buffer, Buffer> {
  return env.openDB<Buffer, Buffer>({ name, keyEncoding: 'binary', encoding: 'binary', ...databaseFlags(name) });
}

/**
 * Open-split chunks (~1 KB) and metric states pack more to a page (bench:footprint p60, bench/RESULTS.md
 * "8 KB pages, session 16"). LMDB fixes the size when it creates the file: older directories keep 4 KB.
 * Keys keep the engine's limit whatever the size (key-limit.ts).
 */
export const PAGE_SIZE = 8192;

/**
 * Binary keys and fixed-size binary dups. The encoder passes bytes through;
 * lmdb-js wants one (with writeKey) to look up a single dup.
 */
const VALUE_INDEX = {
  ...DUP_FLAGS,
  keyEncoding: 'binary',
  encoder: {
    encode: (b: Buffer) => b,
    decode: (b: Buffer, size?: number) => Uint8Array.prototype.slice.call(b, 0, size ?? b.length) as Buffer,
    writeKey: (b: Buffer, target: Uint8Array, position: number) => {
      target.set(b, position);
      return position + b.length;
    },
  },
} as const;

/** lmdb-js takes `encoder` at run time; its database options' type does not name it. */
export const withEncoder = (encoder: object) => ({ encoder });
/** Options of a database of ID_KEYED_DBS: its name and key encoder. */
export const idKeyed = (name: string) => ({ name, keyEncoder: ID_KEYED_DBS[name]! });
const METRIC_RECORDS = fieldsEncoder<CodedMetric>(['id', 'name', 'unit', 'archivePolicyName', 'creator', 'resourceId'], ['id', 'resourceId'], 'id');
const RESOURCE_FIELDS = ['id', 'type', 'originalResourceId', 'creator', 'userId', 'projectId', 'startedAt', 'endedAt', 'revisionStart', 'attrs'] as const;
/** A resource's started_at as `true` while it is its revision_start, no attributes as nil (format 11). */
const COMPACT_RESOURCE = { sameAs: { startedAt: 'revisionStart' }, objects: ['attrs'] } as const;
/** Resource records as the resources database stores them (engine/resource-records.ts gives their type and creator codes). */
export const RESOURCE_RECORDS = fieldsEncoder<StoredResource>(RESOURCE_FIELDS, ['id'], 'id', COMPACT_RESOURCE);
const REVISION_RECORDS = fieldsEncoder<Revision>([...RESOURCE_FIELDS, 'revision', 'revisionEnd'], ['id'], undefined, COMPACT_RESOURCE);

export const DEFAULT_MAP_SIZE = 64 * 1024 ** 3;
export const MAX_DBS = 64;

export function dbPath(dataDir: string): string {
  return join(dataDir, 'db');
}

export function openStorage(dataDir: string, options: StorageOptions = {}): Storage {
  const path = dbPath(dataDir);
  if (!options.readOnly) mkdirSync(path, { recursive: true });
  const root = open({
    path,
    maxDbs: MAX_DBS,
    pageSize: PAGE_SIZE,
    mapSize: options.mapSize ?? DEFAULT_MAP_SIZE,
    readOnly: options.readOnly ?? false,
    // Neither `cache` nor `useWritemap`: lmdb-js has no child transactions with them, and the index's writes
    // need theirs to roll back when a check fails after a write (engine/index.ts write).
  });
  // Every database, not only those keyed by names: a key that holds no request's text never nears the limit.
  const db = <V, K extends Key>(dbOptions: DatabaseOptions & { name: string }) => limitKeyLength(root.openDB<V, K>(dbOptions));
  // A directory of an older format opened read-only (the admin tools) may have none: it holds no code.
  const codesHeld = !options.readOnly || [...root.getKeys()].map(String).includes('name_codes');
  const nameCodes = new NameCodes(
    codesHeld ? db<string, number>({ name: 'name_codes', encoding: 'msgpack' }) : undefined,
    codesHeld ? db<number, string>({ name: 'codes_by_name', encoding: 'msgpack' }) : undefined,
  );
  const resources = new ResourceRecords(db<Buffer, string>({ ...idKeyed('resources'), encoding: 'binary' }), RESOURCE_RECORDS, nameCodes);
  const storage: Storage = {
    root,
    metrics: new MetricRecords(db<CodedMetric, string>({ ...idKeyed('metrics'), ...withEncoder(METRIC_RECORDS) }), resources, nameCodes),
    meta: db({ name: 'meta', encoding: 'msgpack' }),
    policies: db({ name: 'policies', encoding: 'msgpack' }),
    rules: db({ name: 'rules', encoding: 'msgpack' }),
    incoming: db({ name: 'incoming', encoding: 'binary' }),
    incomingBatches: db({ name: 'incoming_batches', encoding: 'binary' }),
    states: db({ ...idKeyed('metric_state'), encoding: 'binary' }),
    splits: db({ name: 'splits', encoding: 'binary' }),
    stateChunks: db({ ...idKeyed('state_chunks'), encoding: 'binary' }),
    resourceTypes: db({ name: 'resource_types', encoding: 'msgpack' }),
    resources,
    nameCodes,
    resourceHistory: db({ ...idKeyed('resource_history'), ...withEncoder(REVISION_RECORDS) }),
    resourcesByRevisionStart: db({ ...idKeyed('resources_by_revision_start'), encoding: 'msgpack' }),
    resourceValues: db({ name: DUP_SORT_DBS.resourceValues, ...VALUE_INDEX }),
    resourceHistoryValues: db({ name: DUP_SORT_DBS.resourceHistoryValues, ...VALUE_INDEX }),
    close: () => root.close(),
  };
  if (!options.readOnly) {
    const found = storage.meta.get('format');
    if (found === undefined) {
      storage.meta.putSync('format', FORMAT_VERSION);
      storage.meta.putSync(NAMED_METRICS_IN_RECORDS, true);
    }
    else if (found !== FORMAT_VERSION && !UPGRADABLE_VERSIONS.includes(found)) {
      void root.close();
      throw new FormatVersionMismatch(found, dataDir);
    }
  }
  return storage;
}
