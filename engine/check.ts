/**
 * The consistency check of a data directory (`gnocchi-ts check`): every
 * stored record is read back and held against what the engine would have
 * written.
 *
 *   splits         decode (sealed ones check their CRC), sit in their
 *                  window, and belong to a metric and one of its policy's
 *                  granularities, older than that granularity's open split;
 *   metric states  decode, name only their policy's granularities, and agree
 *                  with their chunks (counts, layout, rows in order and in
 *                  the split's window) and with the oldest sealed split
 *                  (retention scans from it);
 *   chunks         belong to a state's tail or open split;
 *   metrics        have their policy; named ones are named so on their
 *                  resource, whose named metrics are such metrics;
 *   resources      have their type; the index databases hold exactly the
 *                  entries rebuilt from the resources and their history.
 *
 * Read-only and synchronous: lmdb-js keeps one read transaction while the
 * event loop is not yielded to, so the whole check sees one snapshot even
 * while a server writes.
 */
import type { ArchivePolicy } from './archive-policy.js';
import { entryCount } from './db-stats.js';
import { resolvedMetric, type StoredMetric } from './metric-records.js';
import { decodeMetricState, encodeMetricState, METRIC_STATE_VERSION, type MetricState, type OpenSplit } from './metric-state.js';
import { silentProgress, type Progress, type ProgressTask } from './progress.js';
import { decodeKey, entryBytes, entryTarget, type StoredValue } from './resource-index-keys.js';
import { IndexNames } from './resource-index-names.js';
import type { NamedMetrics } from './resource-records.js';
import type { ResourceRecord, Revision } from './resource-search.js';
import { indexedFields, targetOf } from './resource-value-index.js';
import type { ResourceTypeRecord } from './resource-type.js';
import { revisionMark } from './revision-start-index.js';
import { decodeStoredSplit, isRawSplit, POINTS_PER_SPLIT, rawRowCount, rawSplitProblem, splitKeyOf } from './split.js';
import { decodeChunk, readOpenSplit, readTail } from './state-chunks.js';
import { lmdbSnapshot } from './drivers/lmdb/series.js';
import type { SeriesSnapshot, SplitKeyTuple, StateChunkKey } from './drivers/types.js';
import type { Storage } from './storage.js';

export type FaultKind =
  | 'split-corrupt'
  | 'split-orphan'
  | 'state-corrupt'
  | 'state-orphan'
  | 'state-missing'
  | 'state-mismatch'
  | 'chunk-corrupt'
  | 'chunk-orphan'
  | 'metric-policy-missing'
  | 'metric-resource-missing'
  | 'resource-type-missing'
  | 'index-missing'
  | 'index-extra'
  | 'index-mismatch';

export interface Fault {
  kind: FaultKind;
  /** The LMDB database of the record at fault. */
  db: string;
  key: unknown;
  reason: string;
}

export interface CheckReport {
  /** At most MAX_FAULTS of them; `faultCount` counts all. */
  faults: Fault[];
  faultCount: number;
  /** Records read, per LMDB database. */
  checked: Record<string, number>;
}

/** Faults kept for the report: a wrecked directory must not exhaust memory. */
const MAX_FAULTS = 10_000;
/** The tail's chunks sit under granularity 0 (engine/state-chunks.ts). */
const TAIL = 0;
function rawChunkProblem(chunk: Uint8Array, ncols: number): string | null {
  return rawSplitProblem(chunk, ncols) ?? (rawRowCount(chunk) === 0 ? 'no rows' : null);
}

/** Why an open split's encoded chunk does not decode to rows, or null. */
function encodedChunkProblem(chunk: Uint8Array, key: StateChunkKey, ncols: number): string | null {
  try {
    return decodeChunk(chunk, key, ncols).timestamps.length === 0 ? 'no rows' : null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Why timestamps are not those of a split's rows (ascending periods within its window), or null. */
function rowsProblem(timestamps: Float64Array, key: number, granularity: number): string | null {
  const end = key + granularity * POINTS_PER_SPLIT;
  for (let i = 0; i < timestamps.length; i++) {
    const t = timestamps[i]!;
    if (t < key || t >= end) return `row ${i} at ${t} lies outside the split's window [${key}, ${end})`;
    if ((t - key) % granularity !== 0) return `row ${i} at ${t} is not on a ${granularity} µs period`;
    if (i > 0 && t <= timestamps[i - 1]!) return `row ${i} at ${t} does not follow row ${i - 1}`;
  }
  return null;
}

const keyString = (key: unknown): string => JSON.stringify(key);

class Checker {
  readonly faults: Fault[] = [];
  faultCount = 0;
  readonly checked: Record<string, number> = {};
  /** Faults per database, and index entries expected per database (see mayHoldExtras). */
  private readonly faultsIn = new Map<string, number>();
  private readonly expected = new Map<string, number>();
  private lastMetricId: string | undefined;
  private lastMetric: { metric: StoredMetric | undefined; policy: ArchivePolicy | undefined } = { metric: undefined, policy: undefined };
  /** The series records as processing and reads see them. */
  private readonly series: SeriesSnapshot;
  /** The value index's names, as of the check's snapshot. */
  private readonly names: IndexNames;
  /** Its common creator, which the index files no entry for. */
  private readonly commonCreator: string | undefined;
  private readonly attributes: (type: string) => readonly string[] | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly task: ProgressTask,
  ) {
    this.series = lmdbSnapshot(storage);
    this.names = new IndexNames(storage.meta).refresh();
    this.commonCreator = this.names.commonCreator();
    this.attributes = attributeNames(storage);
  }

  fault(kind: FaultKind, db: string, key: unknown, reason: string): void {
    this.faultCount++;
    this.faultsIn.set(db, (this.faultsIn.get(db) ?? 0) + 1);
    if (this.faults.length < MAX_FAULTS) this.faults.push({ kind, db, key, reason });
  }

  private read(db: string): void {
    this.checked[db] = (this.checked[db] ?? 0) + 1;
    this.task.advance();
  }

  /** A metric and its policy; records come sorted by metric, so one lookup serves a run of them. */
  private metricOf(id: string): { metric: StoredMetric | undefined; policy: ArchivePolicy | undefined } {
    if (id !== this.lastMetricId) {
      this.lastMetricId = id;
      const metric = this.storage.metrics.getStored(id);
      const policy = metric === undefined ? undefined : (this.storage.policies.get(metric.archivePolicyName) as ArchivePolicy | undefined);
      this.lastMetric = { metric, policy };
    }
    return this.lastMetric;
  }

  metrics(): void {
    const { storage } = this;
    for (const { key, value: stored } of storage.metrics.getStoredRange()) {
      this.read('metrics');
      if (storage.policies.get(stored.archivePolicyName) === undefined) {
        this.fault('metric-policy-missing', 'metrics', key, `archive policy ${stored.archivePolicyName} does not exist`);
      }
      if (stored.resourceId === null) continue;
      const owner = storage.resources.owner(stored.resourceId, key);
      if (owner === undefined) {
        this.fault('metric-resource-missing', 'metrics', key, `resource ${stored.resourceId} does not exist`);
      }
      const m = resolvedMetric(key, stored, owner);
      if (m === undefined) {
        this.fault('index-missing', 'resources', [stored.resourceId, null], `metric ${key} leaves its name or creator to its resource, which does not name it`);
        continue;
      }
      // One that leaves its name to the resource is named there by construction.
      if (m.name === null || stored.name === true || owner === undefined) continue;
      const named = storage.resources.metricsOf(stored.resourceId).get(m.name);
      if (named === undefined) this.fault('index-missing', 'resources', [m.resourceId, m.name], `metric ${m.id} is not named on its resource`);
      else if (named !== m.id) this.fault('index-mismatch', 'resources', [m.resourceId, m.name], `names metric ${named}, expected ${m.id}`);
    }
  }

  /** The named metrics of resource `id`: each a metric of that resource and name. */
  private namedMetrics(id: string, named: NamedMetrics): void {
    for (const [name, metricId] of named) {
      const stored = this.storage.metrics.getStored(metricId);
      if (stored === undefined) {
        this.fault('index-extra', 'resources', [id, name], `metric ${metricId} does not exist`);
        continue;
      }
      // One left unresolved is the walk of metrics' fault.
      const m = resolvedMetric(metricId, stored, stored.resourceId === null ? undefined : this.storage.resources.owner(stored.resourceId, metricId));
      if (m !== undefined && (m.resourceId !== id || m.name !== name)) {
        this.fault('index-mismatch', 'resources', [id, name], `metric ${metricId} is named ${m.name ?? 'null'} on resource ${m.resourceId ?? 'null'}`);
      }
    }
  }

  splits(): void {
    const { storage } = this;
    let previousMetric: string | undefined;
    for (const { key, value } of storage.splits.getRange()) {
      this.read('splits');
      const [metricId, granularity, splitKey] = key;
      if (metricId !== previousMetric) {
        previousMetric = metricId;
        if (this.metricOf(metricId).metric !== undefined && !storage.states.doesExist(metricId)) {
          this.fault('state-missing', 'metric_state', metricId, 'the metric has sealed splits but no state');
        }
      }
      const { metric, policy } = this.metricOf(metricId);
      if (metric === undefined) {
        this.fault('split-orphan', 'splits', key, `metric ${metricId} does not exist`);
        continue;
      }
      if (policy === undefined) continue;
      if (!policy.definition.some((d) => d.granularity === granularity)) {
        this.fault('split-orphan', 'splits', key, `granularity ${granularity} µs is not in policy ${policy.name}`);
        continue;
      }
      if (splitKeyOf(splitKey, granularity) !== splitKey) {
        this.fault('split-corrupt', 'splits', key, `key ${splitKey} does not start a split of granularity ${granularity} µs`);
        continue;
      }
      const ncols = policy.aggregationMethods.length;
      if (isRawSplit(value)) {
        const problem = rawSplitProblem(value, ncols);
        if (problem !== null) {
          this.fault('split-corrupt', 'splits', key, problem);
          continue;
        }
      }
      try {
        const rows = rowsProblem(decodeStoredSplit(value, splitKey, granularity, ncols).timestamps, splitKey, granularity);
        if (rows !== null) this.fault('split-corrupt', 'splits', key, rows);
      } catch (err) {
        this.fault('split-corrupt', 'splits', key, (err as Error).message);
      }
    }
  }

  states(): void {
    for (const { key, value } of this.storage.states.getRange()) {
      this.read('metric_state');
      const { metric, policy } = this.metricOf(key);
      if (metric === undefined) {
        this.fault('state-orphan', 'metric_state', key, `metric ${key} does not exist`);
        continue;
      }
      if (policy === undefined) continue;
      let state: MetricState;
      try {
        state = decodeMetricState(value);
        // Current states re-encode to their very bytes: a difference is truncated or trailing data.
        if (value[0] === METRIC_STATE_VERSION && !encodeMetricState(state, value[2]!).equals(value)) throw new Error('the bytes do not match the layout they describe');
      } catch (err) {
        this.fault('state-corrupt', 'metric_state', key, (err as Error).message);
        continue;
      }
      this.state(key, policy, state, value[2]!);
    }
  }

  private state(metricId: string, policy: ArchivePolicy, state: MetricState, columnCount: number): void {
    const ncols = policy.aggregationMethods.length;
    if (state.granularities.length > 0 && columnCount !== ncols) {
      this.fault('state-mismatch', 'metric_state', metricId, `${columnCount} columns, policy ${policy.name} has ${ncols} methods`);
      return;
    }
    this.tail(metricId, state);
    for (const g of state.granularities) {
      if (!policy.definition.some((d) => d.granularity === g.granularity)) {
        this.fault('state-mismatch', 'metric_state', metricId, `granularity ${g.granularity} µs is not in policy ${policy.name}`);
        continue;
      }
      const sealed = this.sealedKeyRange(metricId, g.granularity);
      if (sealed !== null && (g.oldestSealedKey === null || g.oldestSealedKey > sealed.oldest)) {
        this.fault(
          'state-mismatch',
          'metric_state',
          metricId,
          `granularity ${g.granularity} µs: oldest sealed key ${g.oldestSealedKey ?? 'null'}, but a split is sealed at ${sealed.oldest} (retention would miss it)`,
        );
      }
      if (g.open === null) continue;
      if (sealed !== null && sealed.newest >= g.open.key) {
        this.fault('state-mismatch', 'metric_state', metricId, `granularity ${g.granularity} µs: split ${sealed.newest} is sealed, yet ${g.open.key} is open`);
      }
      this.openSplit(metricId, g.granularity, g.open, ncols);
    }
  }

  private sealedKeyRange(metricId: string, granularity: number): { oldest: number; newest: number } | null {
    const low: SplitKeyTuple = [metricId, granularity, -1];
    const high: SplitKeyTuple = [metricId, granularity, Number.MAX_SAFE_INTEGER];
    let oldest: number | undefined;
    let newest: number | undefined;
    for (const key of this.storage.splits.getKeys({ start: low, end: high, limit: 1 })) oldest = key[2];
    // A reverse range starts at its high end.
    for (const key of this.storage.splits.getKeys({ start: high, end: low, reverse: true, limit: 1 })) newest = key[2];
    return oldest === undefined || newest === undefined ? null : { oldest, newest };
  }

  /** Its chunks, each checked; null when one is corrupt (reported). */
  private chunks(metricId: string, slot: number, start: number, end: number, ncols: number): Buffer[] | null {
    const chunks: Buffer[] = [];
    for (const { key, value } of this.storage.stateChunks.getRange({ start: [metricId, slot, start], end: [metricId, slot, end] })) {
      const problem = slot === TAIL || isRawSplit(value) ? rawChunkProblem(value, ncols) : encodedChunkProblem(value, key, ncols);
      if (problem !== null) {
        this.fault('chunk-corrupt', 'state_chunks', key, problem);
        return null;
      }
      chunks.push(value);
    }
    return chunks;
  }

  private tail(metricId: string, state: MetricState): void {
    const chunks = this.chunks(metricId, TAIL, -Number.MAX_VALUE, Number.MAX_VALUE, 1);
    if (chunks === null) return;
    if (chunks.length !== state.tailFrozen) {
      this.fault('state-mismatch', 'metric_state', metricId, `the tail counts ${state.tailFrozen} chunks, ${chunks.length} are stored`);
      return;
    }
    const { timestamps } = readTail(this.series, metricId, state).tail;
    for (let i = 1; i < timestamps.length; i++) {
      if (timestamps[i]! < timestamps[i - 1]!) {
        this.fault('state-mismatch', 'metric_state', metricId, `tail point ${i} at ${timestamps[i]} comes before point ${i - 1}`);
        return;
      }
    }
  }

  private openSplit(metricId: string, granularity: number, open: OpenSplit, ncols: number): void {
    const where = `granularity ${granularity} µs, open split ${open.key}`;
    const inline = rawSplitProblem(open.raw, ncols);
    if (inline !== null) {
      this.fault('state-corrupt', 'metric_state', metricId, `${where}: ${inline}`);
      return;
    }
    const chunks = this.chunks(metricId, granularity, open.key, open.key + granularity * POINTS_PER_SPLIT, ncols);
    if (chunks === null) return;
    if (chunks.length !== open.frozen) {
      this.fault('state-mismatch', 'metric_state', metricId, `${where}: counts ${open.frozen} chunks, ${chunks.length} are stored`);
      return;
    }
    if (open.newest !== undefined) {
      // A freeze grows the chunk under this key: another than the newest would take rows out of order.
      let newest: number | undefined;
      for (const key of this.storage.stateChunks.getKeys({ start: [metricId, granularity, open.key], end: [metricId, granularity, open.key + granularity * POINTS_PER_SPLIT] })) newest = key[2];
      if (newest !== open.newest) {
        this.fault('state-mismatch', 'metric_state', metricId, `${where}: keeps ${open.newest} as its newest chunk, the newest stored is ${newest}`);
        return;
      }
    }
    if (open.inline !== undefined) {
      // engine/state-chunks.ts keeps a chunk inline only as the split's only one.
      if (open.frozen > 0) {
        this.fault('state-mismatch', 'metric_state', metricId, `${where}: an inline chunk and ${open.frozen} chunk records`);
        return;
      }
      const problem = encodedChunkProblem(open.inline.bytes, [metricId, granularity, open.inline.first], ncols);
      if (problem !== null) {
        this.fault('state-corrupt', 'metric_state', metricId, `${where}: inline chunk: ${problem}`);
        return;
      }
    }
    const rows = rowsProblem(readOpenSplit(this.series, metricId, granularity, open).timestamps, open.key, granularity);
    if (rows !== null) this.fault('state-mismatch', 'metric_state', metricId, `${where}: ${rows}`);
  }

  /** Every chunk must belong to its metric's tail or to an open split (their contents are checked with the states). */
  orphanChunks(): void {
    let lastId: string | undefined;
    let state: MetricState | undefined;
    for (const key of this.storage.stateChunks.getKeys()) {
      this.read('state_chunks');
      const [metricId, slot, first] = key;
      if (metricId !== lastId) {
        lastId = metricId;
        const bytes = this.storage.states.get(metricId);
        state = undefined;
        try {
          if (bytes !== undefined) state = decodeMetricState(bytes);
        } catch {
          // Reported with the states.
        }
      }
      if (state === undefined) {
        if (!this.storage.states.doesExist(metricId)) this.fault('chunk-orphan', 'state_chunks', key, `metric ${metricId} has no state`);
        continue;
      }
      if (slot === TAIL) {
        if (state.tailFrozen === 0) this.fault('chunk-orphan', 'state_chunks', key, 'the tail has no frozen chunks');
        continue;
      }
      const open = state.granularities.find((g) => g.granularity === slot)?.open ?? null;
      if (open === null || open.frozen === 0 || first < open.key || first >= open.key + slot * POINTS_PER_SPLIT) {
        this.fault('chunk-orphan', 'state_chunks', key, `no open split of granularity ${slot} µs holds rows at ${first}`);
      }
    }
  }

  resources(): void {
    const { storage, attributes } = this;
    for (const { key, value: r, metrics } of storage.resources.getRange()) {
      this.read('resources');
      this.namedMetrics(key, metrics);
      const attrs = attributes(r.type);
      if (attrs === undefined) {
        this.fault('resource-type-missing', 'resources', key, `resource type ${r.type} does not exist`);
        continue;
      }
      this.expect('resources_by_revision_start', storage.resourcesByRevisionStart, [revisionStartKey(r)], revisionMark(r, this.commonCreator));
      this.expectValues('resource_values', storage.resourceValues, currentRevision(r), attrs);
    }
    for (const { key, value } of storage.resourceHistory.getRange()) {
      this.read('resource_history');
      const r = value as Revision;
      const attrs = attributes(r.type);
      if (attrs === undefined) {
        this.fault('resource-type-missing', 'resource_history', key, `resource type ${r.type} does not exist`);
        continue;
      }
      this.expectValues('resource_history_values', storage.resourceHistoryValues, r, attrs);
    }
  }

  /** The entries `keys` must be in `db`, with `value`. */
  private expect<K extends unknown[]>(name: string, db: { get(key: K): unknown }, keys: Iterable<K>, value: unknown): void {
    for (const key of keys) {
      this.expected.set(name, (this.expected.get(name) ?? 0) + 1);
      const stored = db.get(key);
      if (stored === undefined) this.fault('index-missing', name, key, 'no entry');
      else if (stored !== value) this.fault('index-mismatch', name, key, `holds ${keyString(stored)}, expected ${keyString(value)}`);
    }
  }

  /** The value index entries of a revision must be in `db` (a dup each). */
  private expectValues(name: string, db: Storage['resourceValues'], r: Revision, attrs: readonly string[]): void {
    const typeCode = this.names.typeCode(r.type);
    for (const [field, value] of indexedFields(r, attrs, this.commonCreator)) {
      this.expected.set(name, (this.expected.get(name) ?? 0) + 1);
      const fieldCode = this.names.fieldCode(field);
      const entry = typeCode === undefined || fieldCode === undefined ? undefined : entryBytes(typeCode, fieldCode, value, targetOf(r));
      if (entry === undefined || !db.doesExist(entry.key, entry.dup)) this.fault('index-missing', name, valueKey(r, field, value), 'no entry');
    }
  }

  /**
   * Whether `db` may hold entries no resource gives. When every expected
   * entry was found and the database holds just as many, it holds nothing
   * else: the walk of its entries (a rebuild of their resource's entries
   * each) is saved.
   */
  private mayHoldExtras(name: string, db: Storage['resourceValues'] | Storage['resourcesByRevisionStart']): boolean {
    const stored = entryCount(db);
    if ((this.faultsIn.get(name) ?? 0) > 0 || stored !== (this.expected.get(name) ?? 0)) return true;
    if (stored > 0) this.checked[name] = stored;
    this.task.advance(stored);
    return false;
  }

  /** The name codes: each code names a name that has it back, and each name has a code that names it. */
  nameCodes(): void {
    const { byCode, byName } = this.storage.nameCodes;
    if (byCode === undefined || byName === undefined) return;
    for (const { key: code, value: name } of byCode.getRange()) {
      this.read('name_codes');
      const back = byName.get(name);
      if (back !== code) this.fault('index-mismatch', 'codes_by_name', name, `name ${name} has code ${String(back)}, expected ${code}`);
    }
    for (const { key: name, value: code } of byName.getRange()) {
      this.read('codes_by_name');
      if (byCode.get(code) !== name) this.fault('index-extra', 'codes_by_name', name, `code ${code} does not name ${name}`);
    }
  }

  /** Every index entry must be one its resource (or revision) gives. */
  extraIndexEntries(): void {
    const { storage } = this;
    const resource = (id: string) => storage.resources.get(id);
    if (this.mayHoldExtras('resources_by_revision_start', storage.resourcesByRevisionStart)) {
      for (const key of storage.resourcesByRevisionStart.getKeys()) {
        this.read('resources_by_revision_start');
        const r = resource(key[2]);
        if (r === undefined || keyString(revisionStartKey(r)) !== keyString(key)) {
          this.fault('index-extra', 'resources_by_revision_start', key, `resource ${key[2]} has no such entry`);
        }
      }
    }
    for (const [name, db, history] of [
      ['resource_values', storage.resourceValues, false],
      ['resource_history_values', storage.resourceHistoryValues, true],
    ] as const) {
      if (!this.mayHoldExtras(name, db)) continue;
      for (const { key, value } of db.getRange()) {
        this.read(name);
        const target = entryTarget(key, value, history);
        const r = history
          ? (storage.resourceHistory.get([target.id, target.revision]) as Revision | undefined)
          : currentOf(resource(target.id));
        if (!this.gives(r, key, value)) {
          const { typeCode, fieldCode, value: keyValue } = decodeKey(key);
          const shown = [this.names.typeName(typeCode) ?? typeCode, this.names.fieldName(fieldCode) ?? fieldCode, keyValue, target.id];
          if (history) shown.push(target.revision);
          this.fault('index-extra', name, shown, `${history ? `revision ${target.revision} of ` : ''}resource ${target.id} has no such entry`);
        }
      }
    }
  }

  /** Whether revision `r` gives the value index entry `key`, `dup`. */
  private gives(r: Revision | undefined, key: Buffer, dup: Buffer): boolean {
    if (r === undefined) return false;
    const attrs = this.attributes(r.type);
    // A revision of a missing type has unknown entries: it was reported as such.
    if (attrs === undefined) return true;
    const { typeCode, fieldCode } = decodeKey(key);
    const field = this.names.fieldName(fieldCode);
    if (typeCode !== this.names.typeCode(r.type) || field === undefined) return false;
    for (const [f, value] of indexedFields(r, attrs, this.commonCreator)) {
      if (f !== field) continue;
      const entry = entryBytes(typeCode, fieldCode, value, targetOf(r));
      return entry.key.equals(key) && entry.dup.equals(dup);
    }
    return false;
  }
}

/** How a fault shows a value index entry: type, field, value, id (, revision). */
function valueKey(r: Revision, field: string, value: StoredValue): unknown[] {
  const key: unknown[] = [r.type, field, value, r.id];
  if (r.revision !== -1) key.push(r.revision);
  return key;
}

const currentRevision = (r: ResourceRecord): Revision => ({ ...r, revision: -1, revisionEnd: null });
const currentOf = (r: ResourceRecord | undefined): Revision | undefined => (r === undefined ? undefined : currentRevision(r));

const revisionStartKey = (r: ResourceRecord): [string, number, string] => [r.type, r.revisionStart, r.id];

/** Attribute names by type, undefined for a type that does not exist. */
function attributeNames(storage: Storage): (type: string) => readonly string[] | undefined {
  const known = new Map<string, readonly string[] | undefined>([['generic', []]]);
  return (type) => {
    if (!known.has(type)) {
      const rt = storage.resourceTypes.get(type) as ResourceTypeRecord | undefined;
      known.set(type, rt?.attributes.map((a) => a.name));
    }
    return known.get(type);
  };
}

/** Checks the whole data directory behind `storage` (opened read-only, or not). */
export function checkStorage(storage: Storage, progress: Progress = silentProgress): CheckReport {
  const walked = [
    storage.metrics,
    storage.splits,
    storage.states,
    storage.stateChunks,
    storage.resources,
    storage.resourceHistory,
    storage.resourcesByRevisionStart,
    storage.resourceValues,
    storage.resourceHistoryValues,
    ...[storage.nameCodes.byCode, storage.nameCodes.byName].filter((db) => db !== undefined),
  ].reduce((n, db) => n + entryCount(db), 0);
  const task = progress.task('checking', walked);
  try {
    const checker = new Checker(storage, task);
    checker.metrics();
    checker.splits();
    checker.states();
    checker.orphanChunks();
    checker.resources();
    checker.nameCodes();
    checker.extraIndexEntries();
    return { faults: checker.faults, faultCount: checker.faultCount, checked: checker.checked };
  } finally {
    task.finish();
  }
}
