/**
 * Where the engine keeps measures and aggregates, cut so that the computing
 * code (processing, reads, cross-metric queries) never waits in the middle
 * of its work: every driver call that may go over a network is made at the
 * edges (append, load, fetch, commit), and what the computing code reads in
 * between is a synchronous snapshot. The embedded mode implements all of it
 * on LMDB (engine/drivers/lmdb/), where the edges cost nothing: a snapshot
 * is the live read transaction and a commit one write transaction.
 */

/**
 * Metrics are spread over shards by id (IncomingLog.shardOf); a shard is
 * processed by one holder at a time (Coordinator).
 */
export type Shard = number;

/**
 * Grows each time a shard's lease is taken: a commit carries the fence of
 * the lease it was computed under, and a store that can see leases change
 * refuses one whose fence is no longer the shard's.
 */
export type Fence = number;

/** The shard a processing batch belongs to and the fence its commit carries. */
export interface Lease {
  shard: Shard;
  fence: Fence;
}

/**
 * Accepted measures waiting to be processed: per shard, records numbered in
 * commit order (`seq`), each holding one push's series of that shard's
 * metrics (engine/incoming-batch.ts). A metric's state keeps the highest
 * seq it consumed, so the numbering must never go back.
 */
export interface IncomingLog {
  readonly shards: number;
  /** From 0 to shards - 1. */
  shardOf(metricId: string): Shard;
  /** Appends one record per shard; resolves, with each record's seq, once they are durable. */
  append(records: ReadonlyMap<Shard, Uint8Array>): Promise<Map<Shard, number>>;
  /**
   * Whether other processes append too (cluster nodes): then a shard's
   * holder learns of their records by scanning after the last seq it saw.
   */
  readonly shared: boolean;
  /**
   * Visits every record the shard still holds whose seq is above `after`
   * (default: all), oldest first (taking a shard over: its pending points
   * are found again from them). `bytes` are valid during the call only.
   */
  scan(shard: Shard, visit: (seq: number, bytes: Uint8Array) => void, after?: number): Promise<void>;
  /** The newest seq given in the shard: every record acknowledged so far has one at most this. */
  head(shard: Shard): Promise<number>;
  /** Visits the records `seqs` (ascending) that the shard still holds; `bytes` as in scan. */
  fetch(shard: Shard, seqs: readonly number[], visit: (seq: number, bytes: Uint8Array) => void): Promise<void>;
  /** Deletes a record no metric needs any more. */
  drop(shard: Shard, seq: number): Promise<void>;
  /**
   * Asks the shard's holder to process its records up to `seq` now, without
   * waiting for its reorder window: a refresh on another node waits for
   * them. A smaller seq than one asked before changes nothing.
   */
  hurry(shard: Shard, seq: number): Promise<void>;
  /** Per shard, the greatest seq hurry was asked (none: not asked). */
  hurried(): Promise<Map<Shard, number>>;
}

/** [metric, granularity, first timestamp]: granularity 0 holds the raw tail's chunks (engine/state-chunks.ts). */
export type StateChunkKey = [metricId: string, granularity: number, firstTimestamp: number];
/** [metric, granularity, split key]. */
export type SplitKeyTuple = [metricId: string, granularity: number, key: number];

/** What processing writes: states (engine/metric-state.ts), their chunks, sealed splits (engine/split.ts). */
export interface SeriesKeys {
  state: string;
  chunk: StateChunkKey;
  split: SplitKeyTuple;
}
export type SeriesKind = keyof SeriesKeys;

/** Puts and removals of series records, by kind and key. */
export interface RecordWriter {
  put<K extends SeriesKind>(kind: K, key: SeriesKeys[K], value: Uint8Array): void;
  remove<K extends SeriesKind>(kind: K, key: SeriesKeys[K]): void;
}

/** Writes computed ahead, replayed in order into a store's writer at commit. */
export interface RecordWrites {
  apply(into: RecordWriter): void;
}

/** One metric's writes of a processing batch: applied whole, or dropped when the metric was deleted meanwhile. */
export interface MetricWrites {
  metricId: string;
  writes: RecordWrites;
}

/** The chunks or sealed splits of one metric at one granularity whose keys lie in [start, end). */
export interface SeriesRange {
  metricId: string;
  granularity: number;
  start: number;
  end: number;
}

/**
 * A consistent view of the series records as they were at load, read
 * synchronously. Bytes answered by `state`, `split` and `chunk` are valid
 * until the next read of the snapshot: decode or copy them at once.
 */
export interface SeriesSnapshot {
  state(metricId: string): Buffer | undefined;
  /** Chunk keys of the range, ascending. */
  chunkKeys(range: SeriesRange): Iterable<StateChunkKey>;
  /** The range's chunks, ascending, as bytes that stay valid. */
  chunks(range: SeriesRange): { key: StateChunkKey; value: Uint8Array }[];
  chunk(key: StateChunkKey): Uint8Array | undefined;
  /** The range's last chunk (an open split's newest, which a freeze grows), without walking the ones before it. */
  lastChunk(range: SeriesRange): { key: StateChunkKey; value: Uint8Array } | undefined;
  /** Sealed split keys of the range, ascending, the first `limit` when given. */
  splitKeys(range: SeriesRange, limit?: number): Iterable<SplitKeyTuple>;
  /**
   * Undefined when no such split is stored. A store that loads sealed
   * splits only in the ranges asked of load throws SnapshotMiss
   * (engine/errors.ts) for a stored split outside them.
   */
  split(key: SplitKeyTuple): Uint8Array | undefined;
  /**
   * Done reading. A thread that then idles (a worker between tasks) must
   * release: LMDB's read transaction keeps every page freed after it from
   * being reused, and the file grows.
   */
  release(): void;
}

/** Metric states, their chunks and sealed splits. */
export interface SeriesStore {
  /**
   * A snapshot holding at least these metrics' records, and seeing every
   * commit that completed before the call, on any thread. `splits`: the
   * sealed splits the computing code will read (a network store loads only
   * those; a store whose snapshot reads in place needs no hint).
   */
  load(metricIds: readonly string[], splits?: readonly SeriesRange[]): Promise<SeriesSnapshot>;
  /** Applies a processing batch's writes at once: all or none, each metric's only while it exists. */
  commit(lease: Lease, batch: readonly MetricWrites[]): Promise<void>;
  /**
   * Removes the records of metrics the index deleted, for good: a commit
   * computed before and arriving after writes nothing of them.
   */
  drop(metricIds: readonly string[]): Promise<void>;
}

/** Which shards this process should hold, and their leases. */
export interface Coordinator {
  owned(): readonly Shard[];
  /** Takes the shard's lease for `ttlMs`: its fence, or null while another holder has it. */
  lock(shard: Shard, ttlMs: number): Promise<Fence | null>;
  /** Extends a lease held under `fence`; false once it was lost. */
  renew(shard: Shard, fence: Fence, ttlMs: number): Promise<boolean>;
  release(shard: Shard, fence: Fence): Promise<void>;
  /** The fence the shard's lease is held under now, whoever holds it; null while nobody does. */
  leaseOf(shard: Shard): Promise<Fence | null>;
  /** Calls `listener` whenever owned() may have changed; the unsubscribe. */
  onChange(listener: () => void): () => void;
}

/** The drivers of one engine, or of one worker thread of it. */
export interface Drivers {
  incoming: IncomingLog;
  series: SeriesStore;
  coordinator: Coordinator;
}
