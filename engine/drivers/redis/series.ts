/**
 * Series records in Redis, each metric's under its shard's hash tag
 * (keys.ts): its state in the shard's state hash, its chunks in a hash of
 * its own, and its sealed splits as write-once keys named by the revision
 * that wrote them, with an index hash saying which is current. This is the
 * "redis-only" mode; an object store would take the split bytes under the
 * same names (scripts.ts, COMMIT).
 *
 * load() answers a snapshot filled in one round trip: every state, chunk
 * and split index of the metrics, and only the sealed splits in the ranges
 * asked for (a metric can have thousands). A split outside them that the
 * index lists throws SnapshotMiss, so that the caller loads again with it.
 *
 * commit() is one script on the lease's shard, refused unless the shard's
 * lease still holds the lease's fence. Each metric's writes carry the
 * revision its records had when this store last loaded them, so a commit
 * computed from records that changed since is refused too, and a new
 * revision, so the same commit run twice applies once. Metrics marked
 * deleted (markDeleted) are never written again.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { FencedCommit, SnapshotMiss } from '../../errors.js';
import { shardOfMetric } from '../shard-hash.js';
import type { Lease, MetricWrites, RecordWriter, SeriesKeys, SeriesKind, SeriesRange, SeriesSnapshot, SeriesStore, Shard, SplitKeyTuple, StateChunkKey } from '../types.js';
import { guard, queueScript, runScript, unavailable } from './connection.js';
import { asBuffer } from './incoming.js';
import { parseSeriesField, seriesField, shardKeys } from './keys.js';
import { COMMIT, LOAD, MARK_DELETED } from './scripts.js';

/** What LOAD answers for one metric. */
type LoadedMetric = [state: Buffer | null, revision: Buffer | null, chunks: Buffer[], index: Buffer, splits: (Buffer | null)[]];

interface MetricRecords {
  state: Buffer | undefined;
  /** Ascending by granularity, then first timestamp. */
  chunks: { key: StateChunkKey; value: Buffer }[];
  /** Sealed split keys stored, ascending by granularity, then key. */
  splitKeys: SplitKeyTuple[];
  /** Loaded split bytes by field; a field of the index absent here was not loaded. */
  splits: Map<string, Buffer | null>;
  indexed: Set<string>;
}

const byGranularityThenKey = (a: readonly [string, number, number], b: readonly [string, number, number]): number => a[1] - b[1] || a[2] - b[2];

function inRange(key: readonly [string, number, number], { granularity, start, end }: SeriesRange): boolean {
  return key[1] === granularity && key[2] >= start && key[2] < end;
}

class RedisSnapshot implements SeriesSnapshot {
  constructor(private readonly metrics: ReadonlyMap<string, MetricRecords>) {}

  private of(metricId: string): MetricRecords {
    const records = this.metrics.get(metricId);
    if (records === undefined) throw new Error(`Metric ${metricId} was not loaded in this series snapshot`);
    return records;
  }

  state(metricId: string): Buffer | undefined {
    return this.of(metricId).state;
  }

  chunkKeys(range: SeriesRange): Iterable<StateChunkKey> {
    return this.chunks(range).map(({ key }) => key);
  }

  chunks(range: SeriesRange): { key: StateChunkKey; value: Uint8Array }[] {
    return this.of(range.metricId).chunks.filter(({ key }) => inRange(key, range));
  }

  chunk(key: StateChunkKey): Uint8Array | undefined {
    return this.of(key[0]).chunks.find((c) => c.key[1] === key[1] && c.key[2] === key[2])?.value;
  }

  splitKeys(range: SeriesRange, limit = Infinity): Iterable<SplitKeyTuple> {
    return this.of(range.metricId).splitKeys.filter((key) => inRange(key, range)).slice(0, limit);
  }

  split(key: SplitKeyTuple): Uint8Array | undefined {
    const records = this.of(key[0]);
    const field = seriesField(key[1], key[2]);
    if (!records.indexed.has(field)) return undefined;
    const bytes = records.splits.get(field);
    if (bytes === undefined) throw new SnapshotMiss([key]);
    return bytes ?? undefined;
  }

  release(): void {}
}

/** Collects a metric's writes as COMMIT's (op, field, value) arguments. */
class ScriptWrites implements RecordWriter {
  readonly args: (string | Buffer)[] = [];
  count = 0;

  constructor(private readonly metricId: string) {}

  put<K extends SeriesKind>(kind: K, key: SeriesKeys[K], value: Uint8Array): void {
    this.push(kind, key, true, asBuffer(value));
  }

  remove<K extends SeriesKind>(kind: K, key: SeriesKeys[K]): void {
    this.push(kind, key, false, '');
  }

  private push(kind: SeriesKind, key: SeriesKeys[SeriesKind], put: boolean, value: string | Buffer): void {
    const metricId = typeof key === 'string' ? key : key[0];
    // One metric's keys are all under its shard's tag: a write to another metric would land in the wrong slot.
    if (metricId !== this.metricId) throw new Error(`A write of metric ${this.metricId} touches metric ${metricId}`);
    const op = { state: 'S', chunk: 'C', split: 'P' }[kind];
    const field = typeof key === 'string' ? '' : seriesField(key[1], key[2]);
    this.args.push(put ? op : op.toLowerCase(), field, value);
    this.count++;
  }
}

export class RedisSeriesStore implements SeriesStore {
  /**
   * Each metric's revision as this store last loaded or committed it ('':
   * none yet). Its commits are checked against it, since processing
   * commits what it computed from its latest load of the metric.
   */
  private readonly revisions = new Map<string, string>();

  constructor(
    private readonly client: Redis,
    readonly shards: number,
  ) {}

  async load(metricIds: readonly string[], splits: readonly SeriesRange[] = []): Promise<SeriesSnapshot> {
    const byShard = new Map<Shard, string[]>();
    for (const id of new Set(metricIds)) {
      const shard = shardOfMetric(id, this.shards);
      const ids = byShard.get(shard);
      if (ids === undefined) byShard.set(shard, [id]);
      else ids.push(id);
    }
    const metrics = new Map<string, MetricRecords>();
    if (byShard.size === 0) return new RedisSnapshot(metrics);
    // One transaction: on one Redis, the shards are read at the same instant too.
    const tx = this.client.multi();
    for (const [shard, ids] of byShard) {
      const position = new Map(ids.map((id, i) => [id, i + 1]));
      const ranges = splits.filter((r) => position.has(r.metricId));
      queueScript(tx, LOAD, [shardKeys.states(shard), shardKeys.revisions(shard), ...ids.flatMap((id) => [shardKeys.chunks(shard, id), shardKeys.splitIndex(shard, id)])], [
        String(ids.length),
        ...ids,
        String(ranges.length),
        ...ranges.flatMap((r) => [String(position.get(r.metricId)), String(r.granularity), String(r.start), String(r.end)]),
        ...ids.map((id) => shardKeys.splitPrefix(shard, id)),
      ]);
    }
    const replies = (await guard(tx.exec()))!;
    [...byShard.values()].forEach((ids, s) => {
      const [err, loaded] = replies[s]!;
      if (err !== null) throw unavailable(err);
      (loaded as LoadedMetric[]).forEach((reply, i) => metrics.set(ids[i]!, this.records(ids[i]!, reply)));
    });
    return new RedisSnapshot(metrics);
  }

  private records(metricId: string, [state, revision, chunkReply, indexReply, splitReply]: LoadedMetric): MetricRecords {
    this.revisions.set(metricId, revision?.toString('latin1') ?? '');
    const chunks: MetricRecords['chunks'] = [];
    for (let j = 0; j < chunkReply.length; j += 2) chunks.push({ key: [metricId, ...parseSeriesField(chunkReply[j]!.toString('latin1'))], value: chunkReply[j + 1]! });
    chunks.sort((a, b) => byGranularityThenKey(a.key, b.key));
    const indexed = new Set<string>();
    const splitKeys: SplitKeyTuple[] = [];
    const index = indexReply.length === 0 ? [] : indexReply.toString('latin1').split('\n');
    for (let j = 0; j < index.length; j += 2) {
      const field = index[j]!;
      indexed.add(field);
      splitKeys.push([metricId, ...parseSeriesField(field)]);
    }
    splitKeys.sort(byGranularityThenKey);
    const splits = new Map<string, Buffer | null>();
    for (let j = 0; j < splitReply.length; j += 2) splits.set(splitReply[j]!.toString('latin1'), splitReply[j + 1] ?? null);
    return { state: state ?? undefined, chunks, splitKeys, splits, indexed };
  }

  async commit(lease: Lease, batch: readonly MetricWrites[]): Promise<void> {
    if (batch.length === 0) return;
    const { shard, fence } = lease;
    const keys = [shardKeys.lock(shard), shardKeys.deleted(shard), shardKeys.states(shard), shardKeys.revisions(shard)];
    const args: (string | Buffer)[] = [String(fence), String(batch.length)];
    const revisions: string[] = [];
    for (const { metricId, writes } of batch) {
      if (shardOfMetric(metricId, this.shards) !== shard) throw new Error(`Metric ${metricId} is not of shard ${shard}`);
      const collected = new ScriptWrites(metricId);
      writes.apply(collected);
      // Unique: it also names the sealed splits this commit writes, which are never overwritten.
      const revision = `${fence}-${randomBytes(8).toString('hex')}`;
      revisions.push(revision);
      keys.push(shardKeys.chunks(shard, metricId), shardKeys.splitIndex(shard, metricId));
      args.push(metricId, this.revisions.get(metricId) ?? '*', revision, shardKeys.splitPrefix(shard, metricId), String(collected.count), ...collected.args);
    }
    const [status, detail] = (await guard(runScript(this.client, COMMIT, keys, args))) as [number, Buffer | number | undefined];
    if (status === -1) throw new FencedCommit(shard, fence, 'the shard\'s lease is no longer held under this fence');
    if (status === -2) throw new FencedCommit(shard, fence, `metric ${String(detail)} changed since it was loaded`);
    batch.forEach(({ metricId }, i) => this.revisions.set(metricId, revisions[i]!));
  }

  async drop(metricIds: readonly string[]): Promise<void> {
    await Promise.all(metricIds.map((id) => this.markDeleted(id)));
  }

  /**
   * Deletes a metric's series records for good: commits in flight for it
   * are dropped, now and whenever they arrive. Its incoming records are
   * left to the processor, which drops them once no metric needs them.
   */
  async markDeleted(metricId: string): Promise<void> {
    const shard = shardOfMetric(metricId, this.shards);
    this.revisions.delete(metricId);
    await guard(
      runScript(
        this.client,
        MARK_DELETED,
        [shardKeys.deleted(shard), shardKeys.states(shard), shardKeys.revisions(shard), shardKeys.chunks(shard, metricId), shardKeys.splitIndex(shard, metricId)],
        [metricId, shardKeys.splitPrefix(shard, metricId)],
      ),
    );
  }
}
