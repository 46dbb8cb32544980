/**
 * Series records in Redis, each metric's under its shard's hash tag
 * (keys.ts): its state in the shard's state hash, its chunks in a hash of
 * its own, and its sealed splits as write-once names holding the revision
 * that wrote them, with an index hash saying which is current. The split
 * bytes are Redis keys ("redis-only" mode) or objects in an object store
 * (SeriesStoreOptions.objects, ../s3/objects.ts); everything else is in
 * Redis either way.
 *
 * load() answers a snapshot filled in one round trip to Redis: every
 * state, chunk and split index of the metrics, and only the sealed splits
 * in the ranges asked for (a metric can have thousands), the objects
 * fetched after it. A split outside them that the index lists throws
 * SnapshotMiss, so that the caller loads again with it.
 *
 * commit() is one script on the lease's shard, refused unless the shard's
 * lease still holds the lease's fence. Each metric's writes carry the
 * revision its records had when this store last loaded them, so a commit
 * computed from records that changed since is refused too, and a new
 * revision, so the same commit run twice applies once. Metrics marked
 * deleted (markDeleted) are never written again. With an object store, the
 * new splits are uploaded before the script, which then only records them
 * in the index; the uploads of a refused commit, and the objects a commit
 * superseded, are deleted after it (best effort: the janitor, janitor.ts,
 * removes what a failure or a crash left).
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { EngineUnavailable, FencedCommit, SnapshotMiss, SplitObjectMissing } from '../../errors.js';
import { failpoint, FAILPOINTS_ARMED } from '../../failpoints.js';
import { metricObjectPrefix, splitObjectName, type SplitObjects } from '../s3/objects.js';
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
  /** The split index: field → revision of the bytes current. */
  indexed: Map<string, string>;
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

  lastChunk(range: SeriesRange): { key: StateChunkKey; value: Uint8Array } | undefined {
    return this.chunks(range).at(-1);
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

/**
 * Collects a metric's writes as COMMIT's (op, field, value) arguments. With
 * an object store, sealed splits are collected apart (`objects`: field →
 * bytes, or null when removed; the last write of a field wins) and become
 * O/o ops at `finish`.
 */
class ScriptWrites implements RecordWriter {
  readonly args: (string | Buffer)[] = [];
  count = 0;
  readonly objects = new Map<string, Buffer | null>();

  constructor(
    private readonly metricId: string,
    private readonly splitsAsObjects: boolean,
  ) {}

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
    const field = typeof key === 'string' ? '' : seriesField(key[1], key[2]);
    if (kind === 'split' && this.splitsAsObjects) {
      this.objects.delete(field);
      this.objects.set(field, put ? (value as Buffer) : null);
      return;
    }
    const op = { state: 'S', chunk: 'C', split: 'P' }[kind];
    this.args.push(put ? op : op.toLowerCase(), field, value);
    this.count++;
  }

  finish(): this {
    for (const [field, bytes] of this.objects) this.args.push(bytes === null ? 'o' : 'O', field, '');
    this.count += this.objects.size;
    return this;
  }
}

export interface SeriesStoreOptions {
  /** Where sealed split bytes go; absent: in Redis. */
  objects?: SplitObjects;
  /** Told of failures that are left to the janitor (deleting objects nothing references any more). */
  onError?: (err: unknown) => void;
}

/** Loads again when a split object was superseded (and deleted) between reading the index and the object; past this, give up for now. */
const LOAD_ATTEMPTS = 5;

export class RedisSeriesStore implements SeriesStore {
  /**
   * Each metric's revision as this store last loaded or committed it ('':
   * none yet). Its commits are checked against it, since processing
   * commits what it computed from its latest load of the metric.
   */
  private readonly revisions = new Map<string, string>();

  private readonly objects: SplitObjects | undefined;

  constructor(
    private readonly client: Redis,
    readonly shards: number,
    private readonly options: SeriesStoreOptions = {},
  ) {
    this.objects = options.objects;
  }

  async load(metricIds: readonly string[], splits: readonly SeriesRange[] = []): Promise<SeriesSnapshot> {
    const objects = this.objects;
    if (objects === undefined) return new RedisSnapshot(await this.loadRecords(metricIds, splits));
    for (let attempt = 1; ; attempt++) {
      // Redis answers the index only; the splits in range are then fetched by name.
      const metrics = await this.loadRecords(metricIds, []);
      const wanted = new Map<string, { records: MetricRecords; metricId: string; field: string; revision: string }>();
      for (const range of splits) {
        const records = metrics.get(range.metricId);
        if (records === undefined) continue;
        const shard = shardOfMetric(range.metricId, this.shards);
        for (const key of records.splitKeys) {
          if (!inRange(key, range)) continue;
          const field = seriesField(key[1], key[2]);
          const revision = records.indexed.get(field)!;
          wanted.set(splitObjectName(shard, range.metricId, field, revision), { records, metricId: range.metricId, field, revision });
        }
      }
      const got = await objects.get([...wanted.keys()]);
      const missing: string[] = [];
      for (const [name, { records, field }] of wanted) {
        const bytes = got.get(name);
        if (bytes === undefined) missing.push(name);
        else records.splits.set(field, bytes);
      }
      if (missing.length === 0) return new RedisSnapshot(metrics);
      const lost = await this.stillCurrent(missing.map((name) => wanted.get(name)!));
      if (lost.length > 0) throw new SplitObjectMissing(lost.map(({ metricId, field, revision }) => splitObjectName(shardOfMetric(metricId, this.shards), metricId, field, revision)));
      if (attempt >= LOAD_ATTEMPTS) throw new EngineUnavailable('object store', `sealed splits were superseded during ${LOAD_ATTEMPTS} loads in a row`);
    }
  }

  /** Of these splits, the ones the index still names at this revision (the others were superseded since they were loaded). */
  private async stillCurrent<T extends { metricId: string; field: string; revision: string }>(splits: readonly T[]): Promise<T[]> {
    const batch = this.client.pipeline();
    for (const { metricId, field } of splits) batch.hget(shardKeys.splitIndex(shardOfMetric(metricId, this.shards), metricId), field);
    const replies = (await guard(batch.exec()))!;
    return splits.filter((split, i) => {
      const [err, revision] = replies[i]!;
      if (err !== null) throw unavailable(err);
      return revision === split.revision;
    });
  }

  private async loadRecords(metricIds: readonly string[], splits: readonly SeriesRange[]): Promise<Map<string, MetricRecords>> {
    const byShard = new Map<Shard, string[]>();
    for (const id of new Set(metricIds)) {
      const shard = shardOfMetric(id, this.shards);
      const ids = byShard.get(shard);
      if (ids === undefined) byShard.set(shard, [id]);
      else ids.push(id);
    }
    const metrics = new Map<string, MetricRecords>();
    if (byShard.size === 0) return metrics;
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
    return metrics;
  }

  private records(metricId: string, [state, revision, chunkReply, indexReply, splitReply]: LoadedMetric): MetricRecords {
    this.revisions.set(metricId, revision?.toString('latin1') ?? '');
    const chunks: MetricRecords['chunks'] = [];
    for (let j = 0; j < chunkReply.length; j += 2) chunks.push({ key: [metricId, ...parseSeriesField(chunkReply[j]!.toString('latin1'))], value: chunkReply[j + 1]! });
    chunks.sort((a, b) => byGranularityThenKey(a.key, b.key));
    const indexed = new Map<string, string>();
    const splitKeys: SplitKeyTuple[] = [];
    const index = indexReply.length === 0 ? [] : indexReply.toString('latin1').split('\n');
    for (let j = 0; j < index.length; j += 2) {
      const field = index[j]!;
      indexed.set(field, index[j + 1]!);
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
    /** Per metric, the objects it uploads: name → bytes. */
    const uploads: Map<string, Buffer>[] = [];
    for (const { metricId, writes } of batch) {
      if (shardOfMetric(metricId, this.shards) !== shard) throw new Error(`Metric ${metricId} is not of shard ${shard}`);
      const collected = new ScriptWrites(metricId, this.objects !== undefined);
      writes.apply(collected);
      collected.finish();
      // Unique: it also names the sealed splits this commit writes, which are never overwritten.
      const revision = `${fence}-${randomBytes(8).toString('hex')}`;
      revisions.push(revision);
      const mine = new Map<string, Buffer>();
      for (const [field, bytes] of collected.objects) if (bytes !== null) mine.set(splitObjectName(shard, metricId, field, revision), bytes);
      uploads.push(mine);
      keys.push(shardKeys.chunks(shard, metricId), shardKeys.splitIndex(shard, metricId));
      args.push(metricId, this.revisions.get(metricId) ?? '*', revision, shardKeys.splitPrefix(shard, metricId), String(collected.count), ...collected.args);
    }
    const uploaded = uploads.flatMap((mine) => [...mine.keys()]);
    if (uploaded.length > 0) {
      try {
        await this.objects!.put(new Map(uploads.flatMap((mine) => [...mine])));
      } catch (err) {
        await this.discard(uploaded);
        throw err;
      }
      if (FAILPOINTS_ARMED) await failpoint('process.uploaded');
    }
    // Failing here (Redis unreachable), the script may or may not have run: the uploads stay, for the janitor to judge.
    const [status, detail, , superseded] = (await guard(runScript(this.client, COMMIT, keys, args))) as [number, Buffer | number[] | undefined, number, (Buffer | number)[]];
    if (status < 0) {
      await this.discard(uploaded);
      if (status === -1) throw new FencedCommit(shard, fence, 'the shard\'s lease is no longer held under this fence');
      throw new FencedCommit(shard, fence, `metric ${String(detail)} changed since it was loaded`);
    }
    batch.forEach(({ metricId }, i) => this.revisions.set(metricId, revisions[i]!));
    if (this.objects === undefined) return;
    // A deleted metric's uploads, and the objects of the revisions the index no longer names.
    const garbage = (detail as number[]).flatMap((position) => [...uploads[position - 1]!.keys()]);
    for (let j = 0; j < superseded.length; j += 3) {
      const metricId = batch[(superseded[j] as number) - 1]!.metricId;
      garbage.push(splitObjectName(shard, metricId, superseded[j + 1]!.toString(), superseded[j + 2]!.toString()));
    }
    await this.discard(garbage);
  }

  /** Deletes objects nothing references, reporting a failure rather than throwing it: the janitor deletes them later. */
  private async discard(names: readonly string[]): Promise<void> {
    if (names.length === 0) return;
    try {
      await this.objects!.delete(names);
    } catch (err) {
      this.options.onError?.(err);
    }
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
    // Every object of the metric, uploads of commits still on their way included; those landing after this listing are deleted by their commit (the metric is dropped there) or by the janitor.
    const objects = this.objects;
    if (objects === undefined) return;
    try {
      await objects.list(metricObjectPrefix(shard, metricId), (names) => objects.delete(names));
    } catch (err) {
      this.options.onError?.(err);
    }
  }
}
