/**
 * Series records in the LMDB environment: states, state chunks and sealed
 * splits are three named databases (engine/storage.ts). A snapshot is this
 * thread's live read transaction, so loading prefetches nothing and the
 * computing code reads records where they lie; a commit is one synchronous
 * write transaction, serialised with every other writer of the environment.
 * There is one shard and nobody else to hold it: the fence is not checked.
 */
import type { Database, Key } from 'lmdb';
import type { Storage } from '../../storage.js';
import { plainView } from './plain-view.js';
import type { Lease, MetricWrites, RecordWriter, SeriesKind, SeriesRange, SeriesSnapshot, SeriesStore, SplitKeyTuple, StateChunkKey } from '../types.js';

function databases(storage: Storage): Record<SeriesKind, Database<Buffer, Key>> {
  return { state: storage.states, chunk: storage.stateChunks, split: storage.splits } as Record<SeriesKind, Database<Buffer, Key>>;
}

/** Writes at once: inside a write transaction. */
function directWriter(storage: Storage): RecordWriter {
  const dbs = databases(storage);
  return {
    put(kind, key, value) {
      void dbs[kind].put(key, value as Buffer);
    },
    remove(kind, key) {
      void dbs[kind].remove(key);
    },
  };
}

function keyRange({ metricId, granularity, start, end }: SeriesRange): { start: [string, number, number]; end: [string, number, number] } {
  return { start: [metricId, granularity, start], end: [metricId, granularity, end] };
}

class LmdbSnapshot implements SeriesSnapshot {
  constructor(private readonly storage: Storage) {}

  state(metricId: string): Buffer | undefined {
    return plainView(this.storage.states.getBinaryFast(metricId));
  }

  chunkKeys(range: SeriesRange): Iterable<StateChunkKey> {
    return this.storage.stateChunks.getKeys(keyRange(range));
  }

  chunks(range: SeriesRange): { key: StateChunkKey; value: Uint8Array }[] {
    return [...this.storage.stateChunks.getRange(keyRange(range))];
  }

  chunk(key: StateChunkKey): Uint8Array | undefined {
    return this.storage.stateChunks.get(key);
  }

  lastChunk({ metricId, granularity, start, end }: SeriesRange): { key: StateChunkKey; value: Uint8Array } | undefined {
    // Reversed, a range holds its start and not its end: from the range's end (a key there is past the range) down.
    const below = { start: [metricId, granularity, end] as StateChunkKey, end: [metricId, granularity, -Number.MAX_VALUE] as StateChunkKey, reverse: true, limit: 2 };
    for (const entry of this.storage.stateChunks.getRange(below)) {
      if (entry.key[2] < end) return entry.key[2] >= start ? entry : undefined;
    }
    return undefined;
  }

  splitKeys(range: SeriesRange, limit?: number): Iterable<SplitKeyTuple> {
    return this.storage.splits.getKeys(limit === undefined ? keyRange(range) : { ...keyRange(range), limit });
  }

  split(key: SplitKeyTuple): Uint8Array | undefined {
    return plainView(this.storage.splits.getBinaryFast(key));
  }

  release(): void {
    this.storage.root.resetReadTxn();
  }
}

export class LmdbSeriesStore implements SeriesStore {
  private readonly snapshot: LmdbSnapshot;
  private readonly writer: RecordWriter;

  constructor(private readonly storage: Storage) {
    this.snapshot = new LmdbSnapshot(storage);
    this.writer = directWriter(storage);
  }

  /** The live read transaction, renewed so that it sees what other threads committed. */
  async load(): Promise<SeriesSnapshot> {
    this.storage.root.resetReadTxn();
    return this.snapshot;
  }

  async commit(_lease: Lease, batch: readonly MetricWrites[]): Promise<void> {
    const { storage, writer } = this;
    storage.root.transactionSync(() => {
      for (const { metricId, writes } of batch) {
        // The metric may have been deleted while the batch was computed: then drop it all.
        if (storage.metrics.doesExist(metricId)) writes.apply(writer);
      }
    });
  }

  /** The index's delete transaction removed them already (dropSeries), and commits check the metric exists. */
  async drop(): Promise<void> {}
}

/** The records of a deleted metric; inside the write transaction that deletes it (so SeriesStore.drop has nothing left to do). */
export function dropSeries(storage: Storage, metricId: string): void {
  void storage.states.remove(metricId);
  for (const key of storage.stateChunks.getKeys({ start: [metricId, -1, 0], end: [metricId, Number.MAX_SAFE_INTEGER, 0] })) void storage.stateChunks.remove(key);
  for (const key of storage.splits.getKeys({ start: [metricId, 0, 0], end: [metricId, Number.MAX_SAFE_INTEGER, 0] })) void storage.splits.remove(key);
}

/** A snapshot of an environment outside the engine (the data directory checks). */
export function lmdbSnapshot(storage: Storage): SeriesSnapshot {
  return new LmdbSnapshot(storage);
}
