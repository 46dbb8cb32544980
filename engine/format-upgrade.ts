/**
 * Opening a data directory of an older format brings it to FORMAT_VERSION
 * in one transaction (a crash leaves it as it was, upgraded again at the
 * next start): format 1's pending measures move into records
 * (engine/incoming-upgrade.ts), and before format 6 the keys of
 * ID_KEYED_DBS are rewritten with their UUIDs as 16 bytes
 * (engine/uuid-keys.ts), and before format 7 resources_by_type is dropped
 * (resources_by_revision_start is the index of a type's resources; it and
 * resource_values are rebuilt in their format 7 layout as the index opens,
 * engine/resources.ts; so is resource_values before format 8, without its
 * NULL entries), and before format 10 each resource's named metrics move
 * from metrics_by_resource into its record (engine/resource-records.ts).
 * Other changes since format 1 (format 11's compact resource records among
 * them) only need the stamp: their older records still read.
 */
import type { Database, Key } from 'lmdb';
import { entryCount } from './db-stats.js';
import { moveFormat1Incoming } from './incoming-upgrade.js';
import { MAX_STORAGE_KEY_BYTES } from './key-limit.js';
import { silentProgress, type Progress, type ProgressTask } from './progress.js';
import { withNamedMetrics } from './resource-records.js';
import { FORMAT_VERSION, ID_KEYED_DBS, idKeyed, NAMED_METRICS_IN_RECORDS, rawDatabase, withEncoder, type MetricByResourceKey, type Storage } from './storage.js';
import { bufferToKeyValue, idValues, keyValueToBuffer } from './uuid-keys.js';

/** The first format whose keys hold UUIDs as bytes. */
const BINARY_UUID_FORMAT = 6;
/** The first format without resources_by_type. */
const WITHOUT_BY_TYPE_FORMAT = 7;
const RETIRED_BY_TYPE = 'resources_by_type';
/** The first format keeping a resource's named metrics in its record. */
const NAMED_IN_RECORD_FORMAT = 10;
const RETIRED_BY_RESOURCE = 'metrics_by_resource';
/** Records read at a time: what the rewrite holds in memory stays bounded whatever the database's size. */
const REKEY_BATCH = 10_000;

/**
 * The records of `db` in key order, REKEY_BATCH at a time, each batch read
 * whole before it is given: the caller may write between batches (`same`
 * tells the last key read, from which the next batch starts).
 */
function* batchesOf<K extends Key, V>(db: Database<V, K>, same: (a: K, b: K) => boolean): Generator<{ key: K; value: V }[]> {
  let after: K | undefined;
  for (;;) {
    const batch = [...db.getRange(after === undefined ? { limit: REKEY_BATCH + 1 } : { start: after, limit: REKEY_BATCH + 1 })].filter(
      ({ key }) => after === undefined || !same(key, after),
    );
    if (batch.length === 0) return;
    yield batch;
    after = batch[batch.length - 1]!.key;
  }
}

/**
 * Rewrites every key of the database `name`, stored as ordered-binary, with
 * its key encoder, values unchanged. A rewritten key sorts before the one it
 * replaces (the UUID tag is below any character of the text), so the walk
 * in key order never meets a key it wrote. Left as they are: keys without a
 * UUID (the same bytes), and keys ordered-binary does not give back as they
 * are (already holding a UUID's bytes).
 */
function rekey(storage: Storage, name: string, task: ProgressTask): void {
  const raw = rawDatabase(storage.root, name);
  const keyed = storage.root.openDB<Buffer, Key>({ ...idKeyed(name), encoding: 'binary' });
  const encoder = ID_KEYED_DBS[name]!;
  // Keys of any directory are within the engine's limit (its 4 KB pages' own), and a rewrite only shortens them.
  const scratch = Buffer.allocUnsafe(MAX_STORAGE_KEY_BYTES);
  for (const read of batchesOf(raw, (a, b) => a.equals(b))) {
    for (const { key, value } of read.map((r) => ({ key: Buffer.from(r.key), value: Buffer.from(r.value) }))) {
      task.advance();
      const logical = bufferToKeyValue(key);
      // Written by this format already (a directory stamped older by hand): ordered-binary does not read it back.
      if (!keyValueToBuffer(logical).equals(key)) continue;
      // Without a UUID: the same bytes.
      if (scratch.subarray(0, encoder.writeKey(logical, scratch, 0)).equals(key)) continue;
      void raw.remove(key);
      void keyed.put(logical as Key, value);
    }
  }
}

/**
 * Rewrites every resource record with its named metrics, from
 * metrics_by_resource (then dropped), a batch of records at a time.
 */
function moveNamedMetrics(storage: Storage, task: ProgressTask): void {
  const byResource = storage.root.openDB<string, MetricByResourceKey>({ ...idKeyed(RETIRED_BY_RESOURCE), ...withEncoder(idValues) });
  const { db } = storage.resources;
  for (const batch of batchesOf(db, (a, b) => a === b)) {
    for (const { key: id, value } of batch) {
      const named = new Map<string, string>();
      for (const { key, value: metricId } of byResource.getRange({ start: [id, ''], end: [id, '\uffff'] })) named.set(key[1], metricId);
      db.putSync(id, withNamedMetrics(value, named, storage.nameCodes));
      task.advance();
    }
  }
  rawDatabase(storage.root, RETIRED_BY_RESOURCE).dropSync();
}

export function upgradeFormat(storage: Storage, progress: Progress = silentProgress): void {
  const found = storage.meta.get('format');
  if (found === FORMAT_VERSION) return;
  const older = (format: number) => typeof found === 'number' && found < format;
  const rekeyed = older(BINARY_UUID_FORMAT) ? Object.keys(ID_KEYED_DBS) : [];
  const retired = older(WITHOUT_BY_TYPE_FORMAT) && [...storage.root.getKeys()].map(String).includes(RETIRED_BY_TYPE);
  const named = older(NAMED_IN_RECORD_FORMAT) && storage.meta.get(NAMED_METRICS_IN_RECORDS) !== true;
  const total =
    entryCount(storage.incoming) +
    rekeyed.reduce((n, name) => n + entryCount(rawDatabase(storage.root, name)), 0) +
    (named ? entryCount(storage.resources) : 0);
  const task = progress.task(`upgrading to format ${FORMAT_VERSION}`, total);
  try {
    storage.root.transactionSync(() => {
      moveFormat1Incoming(storage, task);
      for (const name of rekeyed) rekey(storage, name, task);
      if (retired) rawDatabase(storage.root, RETIRED_BY_TYPE).dropSync();
      if (named) moveNamedMetrics(storage, task);
      void storage.meta.put(NAMED_METRICS_IN_RECORDS, true);
      void storage.meta.put('format', FORMAT_VERSION);
    });
  } finally {
    task.finish();
  }
}
