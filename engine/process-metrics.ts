/**
 * The I/O half of processing: for a batch of metrics of one shard, load
 * their states and pending points, compute the updates and every record
 * they write, then commit everything (the new state with its open splits
 * and the `lastSeq` of the records it consumed, sealed splits, expired
 * splits removed) at once, so a crash at any point loses nothing and counts
 * nothing twice. All the computing is done between the loads and the
 * commit, synchronously, from a snapshot: the store is waited for once per
 * batch, never per metric, and LMDB's write lock is held only to apply the
 * writes. Runs in a worker thread, or inline.
 */
import type { Series } from './aggregation.js';
import { computeUpdate, type GranularityUpdate, type Received } from './compute-update.js';
import { decodeMetricState, emptyMetricState, lastSeqOf, type GranularityState, type MetricState } from './metric-state.js';
import type { Drivers, IncomingLog, Lease, RecordWriter, SeriesSnapshot, Shard, SplitKeyTuple } from './drivers/types.js';
import { packRecordPoints, RecordPoints } from './packed-record.js';
import { BatchWrites } from './batch-writes.js';
import { packedResults, policyOf, setResult, type JobBatch, type PackedResults } from './job-batch.js';
import { failpoint, FAILPOINTS_ARMED } from './failpoints.js';
import { RecordCache, recordCacheBytes, type Packing } from './record-cache.js';
import { withSnapshot } from './drivers/snapshot-rounds.js';
import { Float64Scratch, type Float64Alloc } from './scratch.js';
import { dropOpenSplitChunks, extendOpenSplit, looseRows, readOpenSplit, readTail, settleOpenSplit, startOpenSplit, storeTail } from './state-chunks.js';
import { decodeStoredSplit, encodeSealedSplit, mergeSplits, type SplitColumns } from './split.js';

function mostLooseRows(granularities: readonly GranularityState[]): number {
  let most = 0;
  for (const { open } of granularities) if (open !== null) most = Math.max(most, looseRows(open));
  return most;
}

const MAX_KEY = Number.MAX_SAFE_INTEGER;
const EMPTY = new Float64Array(0);
/** Counts of pushes of a job up to which PendingPoints keeps an ends array each. */
const MAX_KEPT_ENDS = 64;
const NONE_SEALED: readonly number[] = [];

/** Processing reads only the points of a record: its records are kept without their ids. */
const POINTS_ONLY: Packing = packRecordPoints;

/** Per incoming log this thread fetches from (its drivers live as long as the thread). */
const recordCaches = new WeakMap<IncomingLog, RecordCache>();
/** The same caches, to empty them all: weakly, so that a closed engine's log and cache still go. */
const everyCache = new Set<WeakRef<RecordCache>>();

/** The thread's cache of `incoming`'s records, of `bytes` (record-cache.ts recordCacheBytes) when this makes it. */
function recordCache(incoming: IncomingLog, bytes: number): RecordCache {
  let cache = recordCaches.get(incoming);
  if (cache === undefined) {
    recordCaches.set(incoming, (cache = new RecordCache(bytes, POINTS_ONLY)));
    everyCache.add(new WeakRef(cache));
  }
  return cache;
}

/** Empties this thread's record caches (the backlog is processed); whether they all let their records go. */
export function releaseRecordCaches(): boolean {
  let released = true;
  for (const ref of everyCache) {
    const cache = ref.deref();
    if (cache === undefined) everyCache.delete(ref);
    else released = cache.release() && released;
  }
  return released;
}

/**
 * Each job's pending points that its state does not hold yet (a retry after
 * a crash must not count them twice), in record order, copied into one
 * pair of arrays for the batch with where each push ends; each record is
 * looked up once per batch. A job's points are handed out as views when it
 * is planned (`of`): a time-major job's few dozen points took arrays of
 * their own, each with a backing store V8 allocates and tracks outside its
 * heap, and views made up front lived as long as the batch. The refs are
 * filed by record in flat columns (a counting sort on the record's rank)
 * rather than in an array per record and per job: an influx backlog's
 * batch holds ~50,000 refs, and those arrays' growth was most of what this
 * allocated.
 */
class PendingPoints {
  private constructor(
    private readonly timestamps: Float64Array,
    private readonly values: Float64Array,
    /** Per job, where its points start; filled[i]: where they end. */
    private readonly starts: Uint32Array,
    private readonly filled: Uint32Array,
    /** Where each push of each job ends, from the job's first point; job i's from refStarts[i] to endsFilled[i]. */
    private readonly ends: Uint32Array,
    private readonly refStarts: Uint32Array,
    private readonly endsFilled: Uint32Array,
  ) {}

  /**
   * Job i's points, or null when it has none: copied into views from
   * `alloc`, with where its pushes end, into one Received object that the
   * next call reuses. Time-major jobs of one batch have the same few points
   * each, so the scratch's views and the ends array of the previous job
   * serve again: three views and two objects per update were half of what
   * the planning of one allocated.
   */
  of(i: number, alloc: Float64Alloc): Received | null {
    const start = this.starts[i]!;
    const end = this.filled[i]!;
    if (end === start) return null;
    const timestamps = alloc(end - start);
    const values = alloc(end - start);
    for (let k = start; k < end; k++) {
      timestamps[k - start] = this.timestamps[k]!;
      values[k - start] = this.values[k]!;
    }
    const from = this.refStarts[i]!;
    const pushes = this.endsFilled[i]! - from;
    let ends = this.endsOfLength[pushes];
    if (ends === undefined) {
      ends = new Uint32Array(pushes);
      if (pushes < MAX_KEPT_ENDS) this.endsOfLength[pushes] = ends;
    }
    for (let k = 0; k < pushes; k++) ends[k] = this.ends[from + k]!;
    const received = this.received;
    received.points.timestamps = timestamps;
    received.points.values = values;
    received.ends = ends;
    return received;
  }

  /** Per count of pushes, the array `of` hands their ends in. */
  private readonly endsOfLength: Uint32Array[] = [];
  private readonly received: { points: Series; ends: Uint32Array } = { points: { timestamps: EMPTY, values: EMPTY }, ends: new Uint32Array(0) };

  static async fetch(incoming: IncomingLog, cacheBytes: number, shard: Shard, batch: JobBatch, lastSeqs: Float64Array): Promise<PendingPoints> {
    const { refs, refStarts: jobRefs } = batch;
    const jobs = batch.metricIds.length;
    const most = jobRefs[jobs]!;
    // Each pending ref's record, ranked first seen first; then by seq.
    const seen = new Map<number, number>();
    const seqs: number[] = [];
    const ranks = new Uint32Array(most);
    // Per job, where its pending refs start in the columns; its points, where they start in the series.
    const refStarts = new Uint32Array(jobs + 1);
    const starts = new Uint32Array(jobs + 1);
    let total = 0;
    for (let i = 0; i < jobs; i++) {
      const lastSeq = lastSeqs[i]!;
      let size = 0;
      // Jobs mostly have the same records in the same order (a metric's point in each push): the record after the
      // previous ref's is the guess, which spares the map a lookup per ref (~77,000 a time-major batch of 300 pushes).
      // The guess is checked in bounds and the rank never undefined: reading past the end of seqs, and a rank that
      // may be the map's undefined, had V8 box the seqs compared and the rank: two heap numbers per ref, ~100 MB over
      // a time-major backlog of 300 pushes, and filing a batch's refs took 2.4 times as long.
      let guess = 0;
      for (let r = 3 * jobRefs[i]!; r < 3 * jobRefs[i + 1]!; r += 3) {
        const seq = refs[r]!;
        if (seq <= lastSeq) continue;
        size += refs[r + 2]!;
        let rank = guess;
        if (!(guess < seqs.length && seqs[guess] === seq)) {
          const known = seen.get(seq);
          if (known !== undefined) rank = known;
          else {
            seen.set(seq, (rank = seqs.length));
            seqs.push(seq);
          }
        }
        ranks[total++] = rank;
        guess = rank + 1;
      }
      refStarts[i + 1] = total;
      starts[i + 1] = starts[i]! + size;
    }
    const order = Uint32Array.from(seqs.keys()).sort((a, b) => seqs[a]! - seqs[b]!);
    const sortedRank = new Uint32Array(seqs.length);
    for (let r = 0; r < order.length; r++) sortedRank[order[r]!] = r;
    // The refs by record in seq order (within a record, in job order), as job, offset and count.
    const byRecord = new Uint32Array(seqs.length + 1);
    for (let k = 0; k < total; k++) byRecord[(ranks[k] = sortedRank[ranks[k]!]!) + 1]!++;
    for (let r = 0; r < seqs.length; r++) byRecord[r + 1]! += byRecord[r]!;
    const slices = new Uint32Array(3 * total);
    const next = byRecord.slice(0, seqs.length);
    for (let i = 0, at = 0; i < jobs; i++) {
      const lastSeq = lastSeqs[i]!;
      for (let r = 3 * jobRefs[i]!; r < 3 * jobRefs[i + 1]!; r += 3) {
        if (refs[r]! <= lastSeq) continue;
        const k = 3 * next[ranks[at++]!]!++;
        slices[k] = i;
        slices[k + 1] = refs[r + 1]!;
        slices[k + 2] = refs[r + 2]!;
      }
    }
    const timestamps = new Float64Array(starts[jobs]!);
    const values = new Float64Array(timestamps.length);
    const all: Series = { timestamps, values };
    const filled = starts.slice(0, jobs);
    const ends = new Uint32Array(total);
    const endsFilled = refStarts.slice(0, jobs);
    const record = new RecordPoints();
    await recordCache(incoming, cacheBytes).fetch(incoming, shard, Array.from(order, (r) => seqs[r]!), (seq, bytes, packed) => {
      record.of(bytes, packed);
      const rank = sortedRank[seen.get(seq)!]!;
      for (let k = 3 * byRecord[rank]!; k < 3 * byRecord[rank + 1]!; k += 3) {
        const i = slices[k]!;
        filled[i] = record.copy(slices[k + 1]!, slices[k + 2]!, all, filled[i]!);
        ends[endsFilled[i]!++] = filled[i]! - starts[i]!;
      }
    });
    return new PendingPoints(timestamps, values, starts, filled, ends, refStarts, endsFilled);
  }
}

/**
 * The batch's stored states, copied out of the snapshot into one buffer
 * (a read's bytes are valid until the next read) and decoded one at a time
 * as each metric is planned: decoded up front, each state's objects lived
 * as long as the batch.
 */
class StoredStates {
  private bytes = Buffer.allocUnsafeSlow(FIRST_STATE_BYTES);
  /** Metric i's state is bytes starts[i] to starts[i + 1]; none when they are equal. */
  private readonly starts: Uint32Array;
  /** Per metric, its state's lastSeq (0 without a state). */
  readonly lastSeqs: Float64Array;

  constructor(snapshot: SeriesSnapshot, metricIds: readonly string[]) {
    this.starts = new Uint32Array(metricIds.length + 1);
    this.lastSeqs = new Float64Array(metricIds.length);
    let used = 0;
    for (let i = 0; i < metricIds.length; i++) {
      const stored = snapshot.state(metricIds[i]!);
      if (stored !== undefined) {
        if (used + stored.length > this.bytes.length) {
          const grown = Buffer.allocUnsafeSlow(Math.max(2 * this.bytes.length, used + stored.length));
          this.bytes.copy(grown, 0, 0, used);
          this.bytes = grown;
        }
        this.bytes.set(stored, used);
        used += stored.length;
        this.lastSeqs[i] = lastSeqOf(stored);
      }
      this.starts[i + 1] = used;
    }
  }

  /** Metric i's state, its open splits views into the batch's copy (which outlives the commit's writes of them), its tail from `alloc`. */
  decode(i: number, alloc: Float64Alloc): MetricState | null {
    const start = this.starts[i]!;
    const end = this.starts[i + 1]!;
    return end === start ? null : decodeMetricState(this.bytes, start, end, alloc);
  }
}

/** Bytes of states a batch's copy starts with: a time-major batch's 256 states of ~150 bytes. */
const FIRST_STATE_BYTES = 64 * 1024;

function putSealed(w: RecordWriter, key: SplitKeyTuple, data: SplitColumns): void {
  w.put('split', key, encodeSealedSplit(key[2], key[1], data));
}

/**
 * The stored tail, its merge with the new points, the aggregated rows, and
 * the open splits' rows decoded to be frozen: nothing of it outlives a
 * metric's planUpdate call.
 */
const scratch = new Float64Scratch();

/**
 * Applies one granularity's recomputed rows to its open and sealed splits.
 * Every read here sees the records as they were before this update (its
 * writes are queued), so a split is read at most once and never after it
 * was written: only the newest split of the update stays open, any earlier
 * one is sealed at once.
 */
function applyGranularity(snapshot: SeriesSnapshot, w: RecordWriter, metricId: string, ncols: number, gs: GranularityState, g: GranularityUpdate): void {
  // Runs for every granularity of every metric update, which almost never seals: no closure, no array until a seal.
  let sealedNow: number[] | null = null;
  const granularity = g.granularity;
  for (let i = 0; i < g.splits.length; i++) {
    const { key, rows } = g.splits[i]!;
    const newest = i === g.splits.length - 1;
    const open = gs.open;
    let sealKey: number | null = null;
    let sealData: SplitColumns = rows;
    if (open !== null && key < open.key) {
      // Rare: the back window reaches into an already sealed split.
      const existing = snapshot.split([metricId, granularity, key]);
      sealKey = key;
      if (existing !== undefined) sealData = mergeSplits(decodeStoredSplit(existing, key, granularity, ncols), rows);
    } else {
      let data = rows;
      if (open !== null) {
        if (key === open.key && newest) {
          gs.open = extendOpenSplit(snapshot, w, metricId, granularity, open, rows, scratch.take);
          continue;
        }
        // A newer split starts: the open one is complete and gets encoded, once.
        const stored = readOpenSplit(snapshot, metricId, granularity, open);
        dropOpenSplitChunks(snapshot, w, metricId, granularity, open);
        gs.open = null;
        if (key === open.key) data = mergeSplits(stored, rows);
        else {
          putSealed(w, [metricId, granularity, open.key], stored);
          (sealedNow ??= []).push(open.key);
        }
      }
      if (newest) gs.open = startOpenSplit(snapshot, w, metricId, granularity, key, data, scratch.take);
      else {
        sealKey = key;
        sealData = data;
      }
    }
    if (sealKey !== null) {
      putSealed(w, [metricId, granularity, sealKey], sealData);
      (sealedNow ??= []).push(sealKey);
    }
  }
  const sealed: readonly number[] = sealedNow ?? NONE_SEALED;
  for (const k of sealed) if (gs.oldestSealedKey === null || k < gs.oldestSealedKey) gs.oldestSealedKey = k;
  if (g.deleteBefore !== null && gs.oldestSealedKey !== null && gs.oldestSealedKey < g.deleteBefore) {
    const before = g.deleteBefore;
    const range = (start: number, end: number, limit?: number) => snapshot.splitKeys({ metricId, granularity, start, end }, limit);
    for (const k of range(-1, before)) w.remove('split', k);
    for (const k of sealed) if (k < before) w.remove('split', [metricId, granularity, k]);
    let oldest: number | null = null;
    for (const k of range(before, MAX_KEY, 1)) oldest = k[2];
    for (const k of sealed) if (k >= before && (oldest === null || k < oldest)) oldest = k;
    gs.oldestSealedKey = oldest;
  }
}

/**
 * Of the refs (seq, offset, count each) from index `from` to `to`: the
 * measures of those whose seq is after `after`. Counted in planUpdate's own
 * loop, its seqs (doubles past 2^31) were boxed, heap numbers for ~200 MB
 * of a time-major backlog's ~560 MB of allocations on the processing
 * thread; a loop of its own keeps them unboxed.
 */
function measuresAfter(refs: Float64Array, from: number, to: number, after: number): number {
  let measures = 0;
  for (let r = from; r < to; r += 3) if (refs[r]! > after) measures += refs[r + 2]!;
  return measures;
}

/**
 * The newest of `seq` and the seqs of the refs from index `from` to `to`
 * (as measuresAfter). `seq` joins at the end: started from the argument, a
 * boxed number, the running maximum was boxed again at each new one.
 */
function newestSeq(refs: Float64Array, from: number, to: number, seq: number): number {
  let newest = Number.NEGATIVE_INFINITY;
  for (let r = from; r < to; r += 3) {
    const s = refs[r]!;
    if (s > newest) newest = s;
  }
  return newest > seq ? newest : seq;
}

/**
 * Job i's update: its writes (the new state, with its `lastSeq`, last;
 * the splits it seals or touches) into `writes`, its result into `results`.
 */
function planUpdate(snapshot: SeriesSnapshot, batch: JobBatch, i: number, stored: MetricState | null, received: Received | null, writes: BatchWrites, results: PackedResults): void {
  const state = stored ?? emptyMetricState();
  const { refs, refStarts } = batch;
  const consumed = measuresAfter(refs, 3 * refStarts[i]!, 3 * refStarts[i + 1]!, state.lastSeq);
  const lastSeq = newestSeq(refs, 3 * refStarts[i]!, 3 * refStarts[i + 1]!, state.lastSeq);
  const metricId = batch.metricIds[i]!;
  const policy = policyOf(batch, i);
  const ncols = policy.aggregationMethods.length;
  if (batch.settle !== undefined && received === null) {
    planSettle(snapshot, writes, metricId, ncols, batch.settle, stored !== null, state, lastSeq);
    setResult(results, i, consumed, state.lastSeq, mostLooseRows(state.granularities));
    return;
  }
  // Nothing to aggregate (a retry whose points the state already holds, or only points too old): just lastSeq moves.
  let next = state;
  if (received !== null) {
    const tail = readTail(snapshot, metricId, state, scratch.take);
    const update = computeUpdate(policy, stored === null ? null : tail.tail, received, scratch.take);
    if (update !== null) {
      const granularities: GranularityState[] = new Array(update.granularities.length);
      for (let k = 0; k < granularities.length; k++) {
        const g = update.granularities[k]!;
        const gs = stateOf(state, g.granularity) ?? { granularity: g.granularity, open: null, oldestSealedKey: null };
        applyGranularity(snapshot, writes, metricId, ncols, gs, g);
        granularities[k] = gs;
      }
      const newTail = storeTail(snapshot, writes, metricId, tail, state.tailFrozen, update.tail, update.firstChanged);
      next = { tail: newTail.tail, tailFrozen: newTail.tailFrozen, granularities, lastSeq };
    }
  }
  next.lastSeq = lastSeq;
  writes.putState(next, ncols);
  setResult(results, i, consumed, lastSeq, mostLooseRows(next.granularities));
}

/**
 * A quiet metric settled: its state's open splits replaced by the settled
 * ones and its `lastSeq` moved; its new state written when settling froze
 * rows. In a function of its own, as its closures would cost planUpdate a
 * context per call.
 */
function planSettle(snapshot: SeriesSnapshot, writes: BatchWrites, metricId: string, ncols: number, least: number, stored: boolean, state: MetricState, lastSeq: number): void {
  const settled = state.granularities.map((gs) =>
    gs.open === null ? gs : { ...gs, open: settleOpenSplit(snapshot, writes, metricId, gs.granularity, gs.open, least, scratch.take) },
  );
  const changed = stored && settled.some((gs, i) => gs.open !== state.granularities[i]!.open);
  state.lastSeq = lastSeq;
  if (!changed) return;
  state.granularities = settled;
  // Settling shrinks a state many times over. LMDB merges a page only when
  // a removal leaves it under a quarter full; a smaller value put in place
  // leaves its page as sparse as it became: so remove, then put.
  writes.remove('state', metricId);
  writes.putState(state, ncols);
}

function stateOf(state: MetricState, granularity: number): GranularityState | undefined {
  for (const gs of state.granularities) if (gs.granularity === granularity) return gs;
  return undefined;
}

/** What processing reads and writes through. */
export type ProcessingDrivers = Pick<Drivers, 'incoming' | 'series'>;

/**
 * Processes the pending measures of the batch's jobs, all of the lease's
 * shard, and commits the results under its fence; the results packed, in job
 * order (a worker receives the batch as it is). `cacheBytes`: the bound of
 * the thread's record cache (record-cache.ts recordCacheBytes, by default
 * for the default backlog), set by the first batch the thread processes.
 */
export async function processBatch({ incoming, series }: ProcessingDrivers, batch: JobBatch, lease: Lease, cacheBytes = recordCacheBytes(0)): Promise<PackedResults> {
  const { metricIds } = batch;
  const results = packedResults(metricIds.length);
  // Fetched in the first round only: a metric's states are the same in the
  // next (the lease keeps other commits out), and so are its pending points.
  let points: PendingPoints | undefined;
  // The snapshot is released after planning, everything read copied out by
  // then: an open LMDB read transaction would keep LMDB from reusing the
  // pages this commit frees.
  const writes = await withSnapshot(series, metricIds, [], async (snapshot) => {
    const states = new StoredStates(snapshot, metricIds);
    points ??= await PendingPoints.fetch(incoming, cacheBytes, lease.shard, batch, states.lastSeqs);
    const out = new BatchWrites(metricIds.length);
    for (let i = 0; i < metricIds.length; i++) {
      scratch.reset();
      planUpdate(snapshot, batch, i, states.decode(i, scratch.take), points.of(i, scratch.take), out, results);
      out.endMetric();
    }
    return out;
  });
  if (FAILPOINTS_ARMED) await failpoint('process.computed');
  await series.commit(lease, writes.byMetric(metricIds));
  if (FAILPOINTS_ARMED) await failpoint('process.committed');
  return results;
}
