/**
 * What the collector protocols remember between writes: each series as a
 * collector names it (the raw bytes of a line protocol series part, the
 * encoded labels of a remote write time series) and what it maps to (its
 * resource, metric names and, once resolved, metric records), so that a
 * series seen before costs a map lookup instead of parsing, sorting tags,
 * building names and reading the index. Entries live in scopes, one per
 * way of naming (protocol, resource type, creator, resource tag): the same
 * bytes map elsewhere in another scope.
 *
 * Bounded by a number of entries, as the index's record cache: once full it
 * takes no more (a fixed subset serves as many hits as any eviction would
 * for series sent in turn, more than it holds, without promoting garbage to
 * the old generation), and starts over after many misses, to follow a set
 * of series that changed. Nothing here is trusted as it stands: a metric
 * record found through it is checked against the index on every write
 * (see engine/collector.ts).
 */
import { FormatError } from '../formats/errors.js';
import { grown } from '../formats/grown.js';
import type { MetricRecord } from './index.js';
import { resourceUuid } from './resource-id.js';

/**
 * Entries remembered at most: a series, a resource or a metric, ~400 bytes
 * each on average (a line protocol series of one field and its metric take
 * ~800), so at most ~100 MB.
 */
export const SERIES_CACHE_SIZE = 250_000;
/** Misses of a full cache, per entry it holds, after which it starts over. */
const RENEWAL_MISSES = 10;
/** Generation of a scope the cache did not take. */
const DETACHED = -1;

/** The maps of one scope (`T`, an object of Maps the caller defines) and the generation that made it. */
export class SeriesScope<T> {
  constructor(
    readonly maps: T,
    readonly generation: number,
  ) {}
}

export class SeriesCache {
  private scopes = new Map<string, SeriesScope<unknown>>();
  private size = 0;
  private generation = 0;
  private missesWhenFull = 0;

  constructor(private readonly capacity = SERIES_CACHE_SIZE) {}

  /**
   * The scope of that name (counted as an entry when new), made by `create`
   * the first time: scope names must tell apart callers whose maps differ.
   * A caller keeps the scope it got for the whole of a write, so that what
   * it finds in one map agrees with the others even if the cache starts
   * over meanwhile.
   */
  scope<T>(name: string, create: () => T): SeriesScope<T> {
    let scope = this.scopes.get(name) as SeriesScope<T> | undefined;
    if (scope === undefined) {
      const admitted = this.admit();
      scope = new SeriesScope(create(), admitted ? this.generation : DETACHED);
      if (admitted) this.scopes.set(name, scope);
    }
    return scope;
  }

  /**
   * Whether an entry found missing from `scope` may be put in it (then
   * counted); false when the cache is full. A scope that is not in the
   * cache (dropped by a renewal since the caller got it, or never admitted)
   * takes entries without counting: it is garbage once its caller is done.
   */
  room(scope: SeriesScope<unknown>): boolean {
    return scope.generation !== this.generation || this.admit();
  }

  /** Whether one more entry fits; counts a miss when it does not, starting over after enough. */
  private admit(): boolean {
    if (this.size < this.capacity) {
      this.size++;
      return true;
    }
    if (++this.missesWhenFull >= RENEWAL_MISSES * this.capacity) {
      this.scopes = new Map();
      this.size = 0;
      this.missesWhenFull = 0;
      this.generation++;
    }
    return false;
  }
}

/** The attribute values of a resource whose collector gives none: one object for all (an empty object is ~56 bytes). */
const NONE_GIVEN: Readonly<Record<string, string>> = Object.freeze({});

/** A resource as a collector names it, remembered across writes. */
export class ResourceSlot {
  /** The batch that last counted it, and its index there. */
  stamp = 0;
  index = 0;
  /** Creator of the stored resource once a write found it (a resource's creator never changes). */
  creator: string | undefined = undefined;
  /** Whether another slot of its scope has the same id (a resource named under two keys): a batch then keeps its metrics apart by id. */
  shared = false;

  constructor(
    /** What a write groups points by: the resource name (remote write: job and instance). */
    readonly key: string,
    readonly original: string,
    /** The stored id, or the error naming why `original` cannot be one (thrown when a write gets to it). */
    readonly id: string | Error,
    /** Attribute values the collector gives (remote write: job and instance), checked when a write prepares the resource. */
    readonly given: Readonly<Record<string, string>> = NONE_GIVEN,
  ) {}
}

/**
 * The slot of the resource a collector names `original` (grouped by `key`),
 * its id derived for `creator` as Gnocchi derives it.
 */
export function namedResource(key: string, original: string, creator: string, given: Readonly<Record<string, string>> = NONE_GIVEN): ResourceSlot {
  let id: string | Error;
  try {
    id = resourceUuid(original, creator);
  } catch (err) {
    if (!(err instanceof FormatError)) throw err;
    id = err;
  }
  return new ResourceSlot(key, original, id, given);
}

/** A metric of a ResourceSlot, remembered across writes. */
export class MetricSlot {
  stamp = 0;
  index = 0;
  /**
   * The record the metric resolved to. Trusted only while the index still
   * hands out this very object: it replaces a record whenever the record
   * changes (deleted, detached, moved), so a hit needs no resource read.
   */
  record: MetricRecord | undefined = undefined;
  /** The index's metricRecordsVersion when `record` was last found current (-1: never). */
  checked = -1;
  /** Whether the name passed the collectors' check of metric names (a refused one is refused on every write). */
  nameChecked = false;
  constructor(
    readonly resource: ResourceSlot,
    readonly name: string,
  ) {}
}

/** The maps a collector protocol keeps in a scope of the series cache: its series by how they are written, and their slots. */
export interface CollectorMaps<S> {
  series: ByteMap<S>;
  resources: Map<string, ResourceSlot>;
  /** The first slot of each resource id, to mark the slots that share one. */
  byId: Map<string, ResourceSlot>;
  metrics: Map<string, MetricSlot>;
  /** How many resources and metrics the scope's last write named: what its next write likely names. */
  named: { resources: number; metrics: number };
}

/**
 * One write's view of a scope of the series cache: series `S` by how they
 * are written, and the one slot of each resource key and metric identity
 * (the cache's while it has room, else the write's own, so that a batch
 * still sees one object per resource and metric).
 */
export class CollectorScope<S> {
  private readonly scope: SeriesScope<CollectorMaps<S>>;
  private readonly own: Omit<CollectorMaps<S>, 'series' | 'named'> = { resources: new Map(), byId: new Map(), metrics: new Map() };
  /** The entry of the series last seen (START before the first, UNKNOWN after one not remembered). */
  private last = START;
  private viewed: Uint8Array | undefined = undefined;
  private view: DataView | undefined = undefined;

  constructor(
    private readonly cache: SeriesCache,
    name: string,
  ) {
    this.scope = cache.scope(name, () => ({ series: new ByteMap(), resources: new Map(), byId: new Map(), metrics: new Map(), named: { resources: 0, metrics: 0 } }));
  }

  /** How many resources and metrics the scope's last write named (0 before any). */
  get named(): Readonly<{ resources: number; metrics: number }> {
    return this.scope.maps.named;
  }

  /** Notes how many resources and metrics this write named. */
  noteNamed(resources: number, metrics: number): void {
    const { named } = this.scope.maps;
    named.resources = resources;
    named.metrics = metrics;
  }

  /** The entry of the series written as bytes [start, end), whose hashBytes is `hash`; -1 when not remembered. */
  seriesEntry(bytes: Uint8Array, start: number, end: number, hash: number): number {
    return this.scope.maps.series.find(bytes, start, end, hash);
  }

  /** The series of an entry seriesEntry, expected or rememberSeries gave. */
  seriesAt(entry: number): S {
    return this.scope.maps.series.value(entry);
  }

  /**
   * Remembers a series if the cache has room (one not remembered is built
   * again on its next line); answers its entry, -1 when not remembered.
   */
  rememberSeries(bytes: Uint8Array, start: number, end: number, hash: number, series: S): number {
    return this.cache.room(this.scope) ? this.scope.maps.series.add(bytes, start, end, hash, series) : -1;
  }

  /**
   * The entry of the series expected next: the one that followed the series
   * last seen (or started the write) when a write last saw it; -1 for none.
   * Collectors send their series in the same order write after write, so
   * a line's series can be recognised by comparing its bytes with one key
   * instead of hashing them and probing.
   */
  expected(): number {
    return this.last === UNKNOWN ? -1 : this.scope.maps.series.following(this.last);
  }

  /** The entry of the series just read, -1 when not remembered: what expected() answers next time after the one before. */
  seen(entry: number): void {
    const { series } = this.scope.maps;
    if (this.last !== UNKNOWN && entry !== -1 && series.following(this.last) !== entry) series.follow(this.last, entry);
    this.last = entry === -1 ? UNKNOWN : entry;
  }

  /** End of entry's key when `bytes` hold it from `start` and it ends before `end`; -1 otherwise. */
  keyEndAt(entry: number, bytes: Uint8Array, start: number, end: number): number {
    return this.scope.maps.series.keyEndAt(entry, this.viewOf(bytes), start, end);
  }

  /** Whether bytes [start, end) are entry's key. */
  isKey(entry: number, bytes: Uint8Array, start: number, end: number): boolean {
    return this.scope.maps.series.keyEndAt(entry, this.viewOf(bytes), start, end + 1) === end;
  }

  /** A view of the bytes of the write (kept by this scope, which lives as long as the write). */
  private viewOf(bytes: Uint8Array): DataView {
    if (bytes !== this.viewed) {
      this.viewed = bytes;
      this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    return this.view!;
  }

  /** The slot of a resource key, made by `create` the first time (marked `shared` when its id is another slot's). */
  resource(key: string, create: () => ResourceSlot): ResourceSlot {
    const { maps } = this.scope;
    let slot = maps.resources.get(key) ?? this.own.resources.get(key);
    if (slot === undefined) {
      slot = create();
      const into = this.cache.room(this.scope) ? maps : this.own;
      into.resources.set(key, slot);
      if (typeof slot.id === 'string') {
        const first = maps.byId.get(slot.id) ?? this.own.byId.get(slot.id);
        if (first === undefined) into.byId.set(slot.id, slot);
        else first.shared = slot.shared = true;
      }
    }
    return slot;
  }

  /**
   * The slot of a metric, made the first time. `held`: a series remembered
   * in the scope keeps it, so it goes into the scope's map even when the
   * cache is full (uncounted, as it takes no more memory): a later write
   * must find the series' slot, not make a second one for the same metric.
   */
  metric(resource: ResourceSlot, name: string, held = false): MetricSlot {
    const { metrics } = this.scope.maps;
    const identity = `${resource.key}\u0000${name}`;
    let slot = metrics.get(identity) ?? this.own.metrics.get(identity);
    if (slot === undefined) {
      slot = new MetricSlot(resource, name);
      (held || this.cache.room(this.scope) ? metrics : this.own.metrics).set(identity, slot);
    }
    return slot;
  }
}

/** CollectorScope.last before a write's first series, and after a series not remembered. */
const START = -1;
const UNKNOWN = -2;

/** FNV-1a of bytes [start, end) (ByteMap's hash). */
export function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h;
}

/**
 * A map keyed by byte strings, looked up by a range of a buffer: no string
 * is made of a key to find it (a series is looked up per line, and most are
 * known). Open addressing over a table of entry numbers; the keys' bytes
 * are kept back to back in one buffer, compared byte to byte (a string's
 * characters cost more to read).
 */
export class ByteMap<V> {
  private keyBytes = new Uint8Array(1024);
  /** keyBytes, for reads of four bytes. */
  private keys = new DataView(this.keyBytes.buffer);
  private used = 0;
  /** Entry e's key is keyBytes[keyStart[e], keyStart[e + 1]). */
  private keyStart = new Int32Array(33);
  private hashes = new Int32Array(32);
  /** 1 + the entry that followed entry e - 1 (e = 0: the start), 0 for none; see `follow`. */
  private after = new Int32Array(33);
  private values: V[] = [];
  /** Entry number + 1 per slot, 0 when empty; a power of two long, at most half full. */
  private table = new Int32Array(64);

  get size(): number {
    return this.values.length;
  }

  /** The entry of key [start, end) of `bytes`, whose hashBytes is `hash`; -1 when missing. */
  find(bytes: Uint8Array, start: number, end: number, hash: number): number {
    const { table, keyBytes, keyStart, hashes } = this;
    const mask = table.length - 1;
    const length = end - start;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const entry = table[i]! - 1;
      if (entry === -1) return -1;
      if (hashes[entry] !== (hash | 0)) continue;
      const at = keyStart[entry]!;
      if (keyStart[entry + 1]! - at !== length) continue;
      let j = 0;
      while (j < length && keyBytes[at + j] === bytes[start + j]) j++;
      if (j === length) return entry;
    }
  }

  value(entry: number): V {
    return this.values[entry]!;
  }

  /** End of entry's key when `bytes` hold it from `start` and it ends before `end`; -1 otherwise. */
  keyEndAt(entry: number, bytes: DataView, start: number, end: number): number {
    const at = this.keyStart[entry]!;
    const length = this.keyStart[entry + 1]! - at;
    if (start + length >= end) return -1;
    // Four bytes at a time: a key is compared per line or series, ~30-60 bytes. Little-endian, the machine's order: no byte swap.
    const { keys } = this;
    let j = 0;
    for (; j + 4 <= length; j += 4) if (keys.getInt32(at + j, true) !== bytes.getInt32(start + j, true)) return -1;
    for (; j < length; j++) if (keys.getUint8(at + j) !== bytes.getUint8(start + j)) return -1;
    return start + length;
  }

  /** The entry `follow` last set after `entry` (-1: the start), -1 for none. */
  following(entry: number): number {
    return this.after[entry + 1]! - 1;
  }

  /** Notes that `next` came after `entry` (-1: the start). */
  follow(entry: number, next: number): void {
    this.after[entry + 1] = next + 1;
  }

  /** Adds key [start, end) of `bytes` (known to be missing); answers its entry. */
  add(bytes: Uint8Array, start: number, end: number, hash: number, value: V): number {
    const entry = this.values.length;
    if (2 * (entry + 1) > this.table.length) this.rehash(2 * this.table.length);
    if (entry === this.hashes.length) {
      this.hashes = grown(this.hashes, 2 * entry);
      this.keyStart = grown(this.keyStart, 2 * entry + 1);
      this.after = grown(this.after, 2 * entry + 1);
    }
    const length = end - start;
    if (this.used + length > this.keyBytes.length) {
      this.keyBytes = grown(this.keyBytes, this.used + length);
      this.keys = new DataView(this.keyBytes.buffer);
    }
    this.keyBytes.set(bytes.subarray(start, end), this.used);
    this.used += length;
    this.keyStart[entry + 1] = this.used;
    this.hashes[entry] = hash;
    this.values.push(value);
    this.place(entry);
    return entry;
  }

  private place(entry: number): void {
    const { table } = this;
    const mask = table.length - 1;
    let i = this.hashes[entry]! & mask;
    while (table[i] !== 0) i = (i + 1) & mask;
    table[i] = entry + 1;
  }

  private rehash(size: number): void {
    this.table = new Int32Array(size);
    for (let entry = 0; entry < this.values.length; entry++) this.place(entry);
  }
}
