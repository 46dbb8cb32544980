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
import type { ArchivePolicy } from './archive-policy.js';
import { computeUpdate, type GranularityUpdate, type Received } from './compute-update.js';
import { decodeMetricState, emptyMetricState, encodeMetricState, type GranularityState, type MetricState } from './metric-state.js';
import type { Drivers, IncomingLog, Lease, RecordWriter, SeriesSnapshot, Shard, SplitKeyTuple } from './drivers/types.js';
import { copyIncomingSlice, recordView, type IncomingRef } from './incoming-batch.js';
import { failpoint, FAILPOINTS_ARMED } from './failpoints.js';
import { RecordCache } from './record-cache.js';
import { withSnapshot } from './drivers/snapshot-rounds.js';
import { WriteQueue } from './record-writes.js';
import { Float64Scratch } from './scratch.js';
import { dropOpenSplitChunks, extendOpenSplit, looseRows, readOpenSplit, readTail, settleOpenSplit, startOpenSplit, storeTail } from './state-chunks.js';
import { decodeStoredSplit, encodeSealedSplit, mergeSplits, type SplitColumns } from './split.js';

export interface ProcessJob {
  metricId: string;
  policy: ArchivePolicy;
  /** The metric's pending points, oldest record first. */
  refs: IncomingRef[];
  /**
   * Settle the metric (no refs: it is quiet): freeze its open splits'
   * inline rows but the last, where there are at least this many.
   */
  settle?: number;
}

export interface ProcessResult {
  metricId: string;
  /** Incoming measures consumed. */
  consumed: number;
  /** The metric's records up to this one are consumed. */
  lastSeq: number;
  /** The most inline rows of an open split that settling would freeze. */
  looseRows: number;
}

function mostLooseRows(granularities: readonly GranularityState[]): number {
  let most = 0;
  for (const { open } of granularities) if (open !== null) most = Math.max(most, looseRows(open));
  return most;
}

const MAX_KEY = Number.MAX_SAFE_INTEGER;
const NONE_SEALED: readonly number[] = [];

/** Per incoming log this thread fetches from (its drivers live as long as the thread). */
const recordCaches = new WeakMap<IncomingLog, RecordCache>();
/** The same caches, to empty them all: weakly, so that a closed engine's log and cache still go. */
const everyCache = new Set<WeakRef<RecordCache>>();

function recordCache(incoming: IncomingLog): RecordCache {
  let cache = recordCaches.get(incoming);
  if (cache === undefined) {
    recordCaches.set(incoming, (cache = new RecordCache()));
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
 * series per job with where each push ends; each record is looked up once
 * per batch. The series are views into one pair of arrays for the batch: a
 * time-major job's few dozen points took arrays of their own, each with a
 * backing store V8 allocates and tracks outside its heap. The refs are
 * filed by record in flat columns (a counting sort on the record's rank)
 * rather than in an array per record and per job: an influx backlog's
 * batch holds ~50,000 refs, and those arrays' growth was most of what this
 * allocated.
 */
async function pendingPoints(incoming: IncomingLog, shard: Shard, jobs: ProcessJob[], states: (MetricState | null)[]): Promise<(Received | null)[]> {
  let most = 0;
  for (const job of jobs) most += job.refs.length;
  // Each pending ref's record, ranked first seen first; then by seq.
  const seen = new Map<number, number>();
  const seqs: number[] = [];
  const ranks = new Uint32Array(most);
  // Per job, where its pending refs start in the columns; its points, where they start in the series.
  const refStarts = new Uint32Array(jobs.length + 1);
  const starts = new Uint32Array(jobs.length + 1);
  let total = 0;
  for (let i = 0; i < jobs.length; i++) {
    const lastSeq = states[i]?.lastSeq ?? 0;
    let size = 0;
    const refs = jobs[i]!.refs;
    for (let j = 0; j < refs.length; j++) {
      const { seq, count } = refs[j]!;
      if (seq <= lastSeq) continue;
      size += count;
      let rank = seen.get(seq);
      if (rank === undefined) {
        seen.set(seq, (rank = seqs.length));
        seqs.push(seq);
      }
      ranks[total++] = rank;
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
  for (let i = 0, at = 0; i < jobs.length; i++) {
    const lastSeq = states[i]?.lastSeq ?? 0;
    const refs = jobs[i]!.refs;
    for (let j = 0; j < refs.length; j++) {
      const { seq, offset, count } = refs[j]!;
      if (seq <= lastSeq) continue;
      const k = 3 * next[ranks[at++]!]!++;
      slices[k] = i;
      slices[k + 1] = offset;
      slices[k + 2] = count;
    }
  }
  const timestamps = new Float64Array(starts[jobs.length]!);
  const values = new Float64Array(timestamps.length);
  const all: Series = { timestamps, values };
  // Where each job's next point goes, from its start; where each of its pushes ends, from its start.
  const filled = starts.slice(0, jobs.length);
  const ends = new Uint32Array(total);
  const endsFilled = refStarts.slice(0, jobs.length);
  await recordCache(incoming).fetch(incoming, shard, Array.from(order, (r) => seqs[r]!), (seq, bytes) => {
    const record = recordView(bytes);
    const rank = sortedRank[seen.get(seq)!]!;
    for (let k = 3 * byRecord[rank]!; k < 3 * byRecord[rank + 1]!; k += 3) {
      const i = slices[k]!;
      filled[i] = copyIncomingSlice(record, slices[k + 1]!, slices[k + 2]!, all, filled[i]!);
      ends[endsFilled[i]!++] = filled[i]! - starts[i]!;
    }
  });
  return jobs.map((_, i) => {
    const start = starts[i]!;
    const end = filled[i]!;
    if (end === start) return null;
    return { points: { timestamps: timestamps.subarray(start, end), values: values.subarray(start, end) }, ends: ends.subarray(refStarts[i]!, endsFilled[i]!) };
  });
}

/** One metric's update, computed before the write lock is taken. */
interface Planned {
  result: ProcessResult;
  writes: WriteQueue;
}

function putSealed(w: RecordWriter, key: SplitKeyTuple, data: SplitColumns): void {
  w.put('split', key, encodeSealedSplit(key[2], key[1], data));
}

/**
 * The tail and its merge with the new points, the aggregated rows, and the
 * open splits' rows decoded to be frozen: nothing of it outlives a
 * planUpdate call.
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

/** The writes of one metric's update: the new state (with its `lastSeq`), and the splits it seals or touches. */
function planUpdate(snapshot: SeriesSnapshot, job: ProcessJob, stored: MetricState | null, received: Received | null): Planned {
  scratch.reset();
  const state = stored ?? emptyMetricState();
  let lastSeq = state.lastSeq;
  let consumed = 0;
  for (const { seq, count } of job.refs) {
    if (seq > state.lastSeq) consumed += count;
    lastSeq = Math.max(lastSeq, seq);
  }
  const { metricId, policy } = job;
  const ncols = policy.aggregationMethods.length;
  const writes = new WriteQueue();
  if (job.settle !== undefined && received === null) return planSettle(snapshot, writes, metricId, ncols, job.settle, stored, { ...state, lastSeq }, consumed);
  // Nothing to aggregate (a retry whose points the state already holds, or only points too old): just lastSeq moves.
  if (received === null) return finish(writes, metricId, ncols, consumed, { ...state, lastSeq });
  const tail = readTail(snapshot, metricId, state, scratch.take);
  const update = computeUpdate(policy, stored === null ? null : tail.tail, received, scratch.take);
  if (update === null) return finish(writes, metricId, ncols, consumed, { ...state, lastSeq });
  const granularities: GranularityState[] = new Array(update.granularities.length);
  for (let k = 0; k < granularities.length; k++) {
    const g = update.granularities[k]!;
    const gs = stateOf(state, g.granularity) ?? { granularity: g.granularity, open: null, oldestSealedKey: null };
    applyGranularity(snapshot, writes, metricId, ncols, gs, g);
    granularities[k] = gs;
  }
  const newTail = storeTail(snapshot, writes, metricId, tail, state.tailFrozen, update.tail, update.firstChanged);
  return finish(writes, metricId, ncols, consumed, { ...newTail, granularities, lastSeq });
}

/** A quiet metric settled (`state`: as stored but its `lastSeq`); in a function of its own, as its closures would cost planUpdate a context per call. */
function planSettle(snapshot: SeriesSnapshot, writes: WriteQueue, metricId: string, ncols: number, least: number, stored: MetricState | null, state: MetricState, consumed: number): Planned {
  const settled = state.granularities.map((gs) =>
    gs.open === null ? gs : { ...gs, open: settleOpenSplit(snapshot, writes, metricId, gs.granularity, gs.open, least, scratch.take) },
  );
  if (stored === null || settled.every((gs, i) => gs.open === state.granularities[i]!.open)) {
    return { result: { metricId, consumed, lastSeq: state.lastSeq, looseRows: mostLooseRows(state.granularities) }, writes };
  }
  // Settling shrinks a state many times over. LMDB merges a page only when
  // a removal leaves it under a quarter full; a smaller value put in place
  // leaves its page as sparse as it became: so remove, then put.
  writes.remove('state', metricId);
  return finish(writes, metricId, ncols, consumed, { ...state, granularities: settled });
}

function stateOf(state: MetricState, granularity: number): GranularityState | undefined {
  for (const gs of state.granularities) if (gs.granularity === granularity) return gs;
  return undefined;
}

/** The update planned, its new state queued last (not a closure in planUpdate, for the same reason). */
function finish(writes: WriteQueue, metricId: string, ncols: number, consumed: number, next: MetricState): Planned {
  writes.put('state', metricId, encodeMetricState(next, ncols));
  return { result: { metricId, consumed, lastSeq: next.lastSeq, looseRows: mostLooseRows(next.granularities) }, writes };
}

/** What processing reads and writes through. */
export type ProcessingDrivers = Pick<Drivers, 'incoming' | 'series'>;

/** Processes the pending measures of `jobs`, all of the lease's shard, and commits the results under its fence. */
export async function processMetrics({ incoming, series }: ProcessingDrivers, jobs: ProcessJob[], lease: Lease): Promise<ProcessResult[]> {
  // Fetched in the first round only: a metric's states are the same in the
  // next (the lease keeps other commits out), and so are its pending points.
  let points: (Received | null)[] | undefined;
  // The snapshot is released after planning, everything read copied out by
  // then: an open LMDB read transaction would keep LMDB from reusing the
  // pages this commit frees.
  const planned = await withSnapshot(series, jobs.map((job) => job.metricId), [], async (snapshot) => {
    const states = jobs.map((job) => {
      const stored = snapshot.state(job.metricId);
      // Its open splits stay views into the bytes, which must outlive the next read.
      return stored === undefined ? null : decodeMetricState(Buffer.from(stored));
    });
    points ??= await pendingPoints(incoming, lease.shard, jobs, states);
    return jobs.map((job, i) => planUpdate(snapshot, job, states[i] ?? null, points![i]!));
  });
  if (FAILPOINTS_ARMED) await failpoint('process.computed');
  await series.commit(lease, planned.map(({ result, writes }) => ({ metricId: result.metricId, writes })));
  if (FAILPOINTS_ARMED) await failpoint('process.committed');
  return planned.map(({ result }) => result);
}
