/**
 * The background processor (Gnocchi's metricd, in process): tracks which
 * metrics have pending measures, hands them in batches to a runner (the
 * worker pool, or inline), and lets readers wait for a metric to be
 * processed (`refresh=true`). It also knows which incoming records still
 * hold unprocessed points, and deletes a record once none does.
 *
 * It processes the shards whose leases it holds: those the coordinator
 * says it owns, locked, renewed every third of the lease, released when no
 * longer owned. Taking a shard finds its pending points again in its
 * incoming records (as at start-up); losing one forgets them, as they are
 * then another holder's. A batch is of one shard and its commit carries
 * that lease's fence.
 *
 * When other processes append to the log too (cluster nodes), a holder
 * follows its shards' records past the last seq it saw, and a `refresh` of
 * a metric another node holds waits for that node to process every record
 * acknowledged before it.
 */
import type { Activity } from './activity.js';
import { EngineUnavailable, FencedCommit } from './errors.js';
import type { Drivers, Fence, Lease, Shard } from './drivers/types.js';
import { filterEntries, incomingEntries, type IncomingEntries } from './incoming-batch.js';
import type { IndexStore } from './drivers/index-store.js';
import type { ArchivePolicy } from './archive-policy.js';
import { lastSeqOf } from './metric-state.js';
import { PendingRefs } from './pending-refs.js';
import { JobBatchBuilder, resultLastSeq, resultLooseRows, type JobBatch, type PackedResults } from './job-batch.js';
import { RECEIVING_HOLD_MS, sweepCutoff, takeable, windowCutoff, worthSweeping, worthTaking } from './reorder-window.js';

/** Processes a batch under a lease: its results packed, in job order. */
export type JobRunner = (batch: JobBatch, lease: Lease) => Promise<PackedResults>;

/**
 * A held shard: its lease's fence, its incoming records some metric still
 * has points in, with when each was noted (ms, monotonic), in the order
 * noted (the first is the oldest), the newest seq its records were scanned
 * up to (see follow), and the greatest seq a refresh on another node
 * asked to be processed now (see awaitProcessedElsewhere): `hurrySeen` as
 * last read, `hurry` until no record up to it is left.
 */
interface HeldShard {
  fence: Fence;
  live: Map<number, number>;
  cursor: number;
  hurrySeen: number;
  hurry: number;
}

/**
 * A refresh waiting for another node's holder polls the shard this often,
 * from the least, doubling up to the most: each poll reads the shard's
 * whole stream, which a backlog makes megabytes, and a long wait is a long
 * backlog.
 */
const POLL_LEAST_MS = 20;
const POLL_MOST_MS = 320;

/** The least wait before retrying after a failed batch. */
const FAILED_RETRY_MS = 1000;

/** Shard leases last this long unless renewed (ProcessorOptions.leaseMs). */
export const DEFAULT_LEASE_MS = 30_000;

/** How long a refresh waits on a live holder that makes no progress (ProcessorOptions.busyHolderPatienceMs). */
export const DEFAULT_BUSY_HOLDER_PATIENCE_MS = 60_000;

/**
 * Loose rows worth settling a metric for: settling re-encodes its newest
 * chunk, so a metric that receives a point now and then is settled once
 * per this many points rather than after each. Below CHUNK_ROWS - 1
 * (engine/state-chunks.ts), which an update freezes anyway.
 */
export const SETTLE_LEAST_ROWS = 4;

export interface ProcessorOptions {
  drivers: Drivers;
  index: IndexStore;
  runner: JobRunner;
  /** How many runner calls may be in flight (the worker count). */
  parallelism: number;
  /** Milliseconds between processing rounds when idle. */
  intervalMs: number;
  /**
   * Milliseconds a push waits before background processing takes it, so that
   * pushes overtaking each other (collectors with requests in flight, agents
   * racing, a push slowed by creating its resources: see receiving) are
   * aggregated together, sorted by timestamp, instead of the older points
   * arriving after a newer one was processed and falling out of the back
   * window (engine/reorder-window.ts). Reads with `refresh=true` take every
   * pending measure at once. 0 or absent: no wait.
   */
  reorderWindowMs?: number;
  /**
   * Milliseconds after its last batch that a metric with at least
   * SETTLE_LEAST_ROWS loose inline rows is settled (engine/state-chunks.ts),
   * in the time no batch needs the workers. 0 or absent: never.
   */
  settleAfterMs?: number;
  /** Metrics per runner call. */
  batchSize: number;
  onError?: (err: unknown) => void;
  /** Called as this thread's reads start to see what a batch committed for these metrics. */
  onCommitted?: (metricIds: string[]) => void;
  /** Told of every batch run. */
  activity?: Activity;
  /** Milliseconds a shard lease lasts unless renewed; absent: DEFAULT_LEASE_MS. */
  leaseMs?: number;
  /**
   * Milliseconds a refresh waits, without progress, on another node that
   * keeps the shard's lease (alive: it renews it), at least two leases;
   * absent: DEFAULT_BUSY_HOLDER_PATIENCE_MS. One batch of a backlog may take
   * longer than two leases on a loaded machine.
   */
  busyHolderPatienceMs?: number;
}

export interface BacklogStatus {
  metrics: number;
  measures: number;
  perMetric: Record<string, number>;
}

export class Processor {
  /** Per metric, where its pending points are, oldest record first. */
  private readonly pending = new PendingRefs();
  private readonly inflight = new Map<string, Promise<void>>();
  /** Pending metric ids in id order, consumed from `sweepAt` (see nextBatch). */
  private sweep: string[] = [];
  private sweepAt = 0;
  private running = 0;
  private timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  private timerDelay = 0;
  /** When the timer fires (ms, monotonic). */
  private timerDue = 0;
  private stopped = true;
  private idleWaiters: (() => void)[] = [];

  /** The shards whose leases this processor holds. */
  private readonly held = new Map<Shard, HeldShard>();
  /** Metrics worth settling, by when their last batch finished, oldest first. */
  private readonly unsettled = new Map<string, number>();
  /** The lease upkeep under way: one at a time. */
  private leases: Promise<void> = Promise.resolve();
  private renewTimer: NodeJS.Timeout | undefined;
  private followTimer: NodeJS.Timeout | undefined;
  /** The scan of other nodes' records under way: one at a time. */
  private following: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;
  /** Batches whose commit was refused (FencedCommit): their lease lost, or their states changed, meanwhile. */
  private fenced = 0;
  /** Pushes being handled (see receiving), by number, with when each was received (ms, monotonic): the first is the oldest. */
  private readonly receipts = new Map<number, number>();
  private received = 0;
  /** When the last record was noted (ms, monotonic), whether still pending or not. */
  private newestNoted = -Infinity;

  constructor(private readonly options: ProcessorOptions) {}

  /** Takes the leases of the shards this process owns, and keeps them until close(). */
  async open(): Promise<void> {
    this.unsubscribe = this.options.drivers.coordinator.onChange(() => void this.keepLeases());
    this.renewTimer = setInterval(() => void this.keepLeases(), this.leaseMs() / 3).unref();
    if (this.options.drivers.incoming.shared) this.followTimer = setInterval(() => void this.follow(), this.options.intervalMs).unref();
    await this.keepLeases();
  }

  /** Stops, and gives the leases back. */
  async close(): Promise<void> {
    await this.stop();
    clearInterval(this.renewTimer);
    clearInterval(this.followTimer);
    await this.following;
    this.unsubscribe?.();
    await this.leases;
    const { coordinator } = this.options.drivers;
    for (const [shard, { fence }] of this.held) await coordinator.release(shard, fence);
    this.held.clear();
  }

  private leaseMs(): number {
    return this.options.leaseMs ?? DEFAULT_LEASE_MS;
  }

  /** Brings the leases held in line with the shards owned; failures are reported and retried at the next renewal. */
  private keepLeases(): Promise<void> {
    this.leases = this.leases
      .then(async () => {
        const { coordinator } = this.options.drivers;
        const ttl = this.leaseMs();
        const owned = new Set(coordinator.owned());
        for (const [shard, { fence }] of this.held) {
          if (owned.has(shard) && (await coordinator.renew(shard, fence, ttl))) continue;
          this.lose(shard);
          if (owned.has(shard)) continue;
          await coordinator.release(shard, fence);
        }
        for (const shard of owned) {
          if (this.held.has(shard)) continue;
          const fence = await coordinator.lock(shard, ttl);
          if (fence !== null) await this.takeOver(shard, fence);
        }
      })
      .catch((err: unknown) => this.options.onError?.(err));
    return this.leases;
  }

  /**
   * Finds a shard's pending points again: measures acknowledged are still in
   * its records, unless the metric's state says it consumed them or the
   * metric is gone.
   */
  private async takeOver(shard: Shard, fence: Fence): Promise<void> {
    const { incoming, series } = this.options.drivers;
    const records: [seq: number, entries: IncomingEntries][] = [];
    await incoming.scan(shard, (seq, bytes) => records.push([seq, incomingEntries(bytes)]));
    const metricIds = new Set(records.flatMap(([, entries]) => entries.metricIds));
    const lastSeqs = new Map<string, number>();
    const ids = [...metricIds];
    const found = await this.options.index.getMetrics(ids);
    const existing = new Set(ids.filter((_, i) => found[i] !== undefined));
    const snapshot = await series.load([...metricIds]);
    try {
      for (const id of metricIds) {
        if (!existing.has(id)) continue;
        const state = snapshot.state(id);
        lastSeqs.set(id, state === undefined ? 0 : lastSeqOf(state));
      }
    } finally {
      snapshot.release();
    }
    this.held.set(shard, { fence, live: new Map(), cursor: records.at(-1)?.[0] ?? 0, hurrySeen: 0, hurry: 0 });
    for (const [seq, entries] of records) {
      const pending = filterEntries(entries, (metricId) => seq > (lastSeqs.get(metricId) ?? Infinity));
      if (pending.metricIds.length === 0) this.drop(shard, seq);
      else this.noteIncoming(shard, seq, pending);
    }
  }

  /**
   * Notes the records other nodes appended to the held shards since the
   * last scan. Seqs are given in the order records are added, so none
   * can appear behind the cursor later. A record this node appended is
   * noted already, or even consumed and on its way out: noting it again
   * costs a job that skips what the state holds.
   */
  private follow(): Promise<void> {
    this.following ??= (async () => {
      const { incoming } = this.options.drivers;
      // The shards' scans at once: a refresh waits for this, and one round trip after another added up per shard held.
      await Promise.all(
        [...this.held].map(async ([shard, held]) => {
          const found: [number, IncomingEntries][] = [];
          const seen = (seq: number, bytes: Uint8Array) => {
            held.cursor = Math.max(held.cursor, seq);
            if (!held.live.has(seq)) found.push([seq, incomingEntries(bytes)]);
          };
          const before = held.cursor;
          await incoming.scan(shard, seen, held.cursor);
          if (this.held.get(shard) !== held) return;
          for (const [seq, entries] of found) this.noteIncoming(shard, seq, entries);
          if (held.cursor > before) this.schedule(0);
        }),
      );
      // Without a window, every record noted is taken at once anyway.
      if ((this.options.reorderWindowMs ?? 0) <= 0) return;
      for (const [shard, mark] of await incoming.hurried()) {
        const held = this.held.get(shard);
        if (held === undefined || mark <= held.hurrySeen) continue;
        held.hurrySeen = held.hurry = mark;
        this.schedule(0);
      }
    })()
      .catch((err: unknown) => this.options.onError?.(err))
      .finally(() => (this.following = undefined));
    return this.following;
  }

  /** Lets a shard go: its metrics' pending points are another holder's now. */
  private lose(shard: Shard): void {
    this.held.delete(shard);
    const { incoming } = this.options.drivers;
    for (const id of [...this.pending.metricIds()]) if (incoming.shardOf(id) === shard) this.pending.release(id);
    for (const id of this.unsettled.keys()) if (incoming.shardOf(id) === shard) this.unsettled.delete(id);
  }

  /** Records the points of incoming record `seq` of `shard`, once it is durably stored; another holder's shard is left to it. */
  noteIncoming(shard: Shard, seq: number, entries: IncomingEntries): void {
    const held = this.held.get(shard);
    if (held === undefined) return;
    const notedAt = performance.now();
    this.newestNoted = notedAt;
    held.live.set(seq, notedAt);
    this.pending.add(seq, notedAt, entries);
    this.schedule(0);
  }

  /**
   * Notes a push received: until the release answered is called (once its
   * points are noted, or it failed), the pushes noted after its receipt are
   * not processed, as it may hold points older than theirs (see
   * windowCutoff). A second release does nothing; a push never released
   * stops holding after RECEIVING_HOLD_MS. Without a reorder window, notes
   * nothing.
   */
  receiving(): () => void {
    if ((this.options.reorderWindowMs ?? 0) <= 0) return () => undefined;
    const id = ++this.received;
    this.receipts.set(id, performance.now());
    return () => {
      const wasOldest = this.receipts.keys().next().value === id;
      // The pushes it held back may be due now (its own points, if any, scheduled a round already).
      if (this.receipts.delete(id) && wasOldest && this.pending.size > 0) this.schedule(0);
    };
  }

  forget(metricId: string): void {
    this.unsettled.delete(metricId);
    this.release(metricId);
  }

  /** Drops a metric's refs up to seq `upTo` (all by default); records no metric needs any more are deleted. The measures dropped. */
  private release(metricId: string, upTo = Infinity): number {
    const shard = this.options.drivers.incoming.shardOf(metricId);
    // A shard lost meanwhile: its records are no longer ours to delete.
    if (!this.held.has(shard)) return this.pending.release(metricId, upTo);
    return this.pending.release(metricId, upTo, (seq) => this.drop(shard, seq));
  }

  private drop(shard: Shard, seq: number): void {
    this.held.get(shard)?.live.delete(seq);
    this.options.drivers.incoming.drop(shard, seq).catch((err: unknown) => this.options.onError?.(err));
  }

  /** When the oldest record still needed was noted (ms, monotonic); Infinity when none is. */
  private oldestNoted(): number {
    let oldest = Infinity;
    for (const { live } of this.held.values()) {
      for (const notedAt of live.values()) {
        oldest = Math.min(oldest, notedAt);
        break;
      }
    }
    return oldest;
  }

  /** The shards whose leases this processor holds, ascending. */
  heldShards(): Shard[] {
    return [...this.held.keys()].sort((a, b) => a - b);
  }

  /** Commits refused since start-up: batches computed under a lease another node took, or from states another commit changed. */
  fencedCommits(): number {
    return this.fenced;
  }

  /** Measures acknowledged and not yet processed, all metrics together. */
  pendingMeasureCount(): number {
    return this.pending.measures;
  }

  /**
   * Seconds since the oldest measure still waiting was acknowledged (since
   * start-up for those acknowledged before it); 0 when none waits.
   */
  processingLag(): number {
    const oldest = this.oldestNoted();
    return oldest === Infinity ? 0 : (performance.now() - oldest) / 1000;
  }

  /**
   * Whether the metric may have measures not processed yet: pending here, or, when other nodes append too,
   * anywhere (a record another node appended to a shard held here is noted at the next follow only).
   */
  hasPending(metricId: string): boolean {
    return this.pending.has(metricId) || this.options.drivers.incoming.shared;
  }

  private heldElsewhere(metricId: string): boolean {
    const { incoming } = this.options.drivers;
    return incoming.shared && !this.held.has(incoming.shardOf(metricId));
  }

  /** True from the moment a batch holding the metric is handed to the runner until its results are in. */
  isProcessing(metricId: string): boolean {
    return this.inflight.has(metricId);
  }

  /** Counts; with `perMetric`, each metric's pending measures too (O(metrics pending)). */
  backlog(perMetric = true): BacklogStatus {
    const counts: Record<string, number> = {};
    if (perMetric) for (const id of this.pending.metricIds()) counts[id] = this.pending.measuresOf(id);
    return { metrics: this.pending.size, measures: this.pending.measures, perMetric: counts };
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops scheduling and waits for the batches in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer();
    await Promise.allSettled([...this.inflight.values()]);
  }

  /**
   * Processes the pending measures of these metrics before resolving; for
   * metrics of shards another node holds, waits for it to.
   */
  async refresh(metricIds: string[]): Promise<void> {
    const elsewhere = metricIds.filter((id) => this.heldElsewhere(id));
    if (elsewhere.length > 0) await this.awaitProcessedElsewhere(elsewhere);
    if (this.options.drivers.incoming.shared && elsewhere.length < metricIds.length) {
      // A scan that starts after this call notes every record acknowledged before it, on any node.
      await this.following;
      await this.follow();
    }
    for (;;) {
      const busy = metricIds.map((id) => this.inflight.get(id)).filter((p) => p !== undefined);
      if (busy.length > 0) {
        await Promise.allSettled(busy);
        continue;
      }
      const todo = metricIds.filter((id) => this.pending.has(id) && this.batchable(id, Infinity) > 0);
      if (todo.length === 0) return;
      await this.dispatch(todo);
    }
  }

  /**
   * Waits until the holders of these metrics' shards have processed every
   * record acknowledged before the call: every record up to the shard's
   * head then is gone or consumed by the metrics' states. A holder asked
   * to hurry takes those records at its next follow, without waiting for
   * its reorder window. A shard whose holder died waits for the lease to
   * expire and a new holder (a new fence), for two leases at most; a holder
   * that keeps its lease is alive and waited for as a refresh waits for
   * local processing, however slowly it consumes records (a slow object
   * store, a batch of a long backlog), as long as it makes progress within
   * busyHolderPatienceMs.
   */
  private async awaitProcessedElsewhere(metricIds: string[]): Promise<void> {
    const { incoming, series, coordinator } = this.options.drivers;
    const byShard = new Map<Shard, Set<string>>();
    for (const id of metricIds) {
      const shard = incoming.shardOf(id);
      const ids = byShard.get(shard);
      if (ids === undefined) byShard.set(shard, new Set([id]));
      else ids.add(id);
    }
    const lapseMs = 2 * this.leaseMs();
    const busyMs = Math.max(lapseMs, this.options.busyHolderPatienceMs ?? DEFAULT_BUSY_HOLDER_PATIENCE_MS);
    for (const [shard, ids] of byShard) {
      const head = await incoming.head(shard);
      let hurried = false;
      let progressAt = performance.now();
      let progress = '';
      let pollMs = Math.min(this.options.intervalMs, POLL_LEAST_MS);
      for (;;) {
        const snapshot = await series.load([...ids]);
        const lastSeqs = new Map<string, number>();
        try {
          for (const id of ids) {
            const state = snapshot.state(id);
            lastSeqs.set(id, state === undefined ? 0 : lastSeqOf(state));
          }
        } finally {
          snapshot.release();
        }
        let waiting = false;
        let records = 0;
        await incoming.scan(shard, (seq, bytes) => {
          if (seq > head) return;
          records++;
          if (!waiting) waiting = incomingEntries(bytes).metricIds.some((metricId) => seq > (lastSeqs.get(metricId) ?? Infinity));
        });
        if (!waiting) break;
        if (!hurried) await incoming.hurry(shard, head);
        hurried = true;
        // Progress: another holder took the shard, the holder dropped records it consumed, or these metrics took some.
        const fence = await coordinator.leaseOf(shard);
        const now = `${fence} ${records} ${[...lastSeqs.values()].join(' ')}`;
        if (now !== progress) progressAt = performance.now();
        progress = now;
        const patienceMs = fence === null ? lapseMs : busyMs;
        const deadline = progressAt + patienceMs;
        if (performance.now() > deadline) throw new EngineUnavailable('processing', `shard ${shard} made no progress within ${patienceMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, Math.max(1, deadline - performance.now()))));
        pollMs = Math.min(2 * pollMs, POLL_MOST_MS);
      }
    }
  }

  /** Resolves once no measure is pending (tests and benchmarks). */
  drained(): Promise<void> {
    if (this.pending.size === 0 && this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Runs a round after `delayMs`, or sooner if one is due sooner. A sooner
   * request replaces a waiting timer: a worker that just finished must not
   * idle until the interval (set while every worker was busy) runs out, nor
   * a push wait for a settle due in seconds. Immediate rounds
   * run after the pending I/O callbacks rather than on a 0 ms timer, which
   * Node clamps to 1 ms: a gap per batch that left workers idle.
   */
  private schedule(delayMs: number): void {
    if (this.stopped) return;
    const due = performance.now() + delayMs;
    if (this.timer !== undefined) {
      if (this.timerDelay === 0 || (delayMs > 0 && this.timerDue <= due)) return;
      this.cancelTimer();
    }
    this.timerDelay = delayMs;
    this.timerDue = due;
    const run = () => {
      this.timer = undefined;
      this.round();
    };
    this.timer = delayMs === 0 ? setImmediate(run) : setTimeout(run, delayMs);
  }

  private cancelTimer(): void {
    if (this.timer === undefined) return;
    if (this.timerDelay === 0) clearImmediate(this.timer as NodeJS.Immediate);
    else clearTimeout(this.timer as NodeJS.Timeout);
    this.timer = undefined;
  }

  private round(): void {
    const { parallelism, intervalMs } = this.options;
    const window = this.options.reorderWindowMs ?? 0;
    const cutoff = windowCutoff(performance.now(), window, this.oldestReceiving());
    // Spread the backlog over every worker rather than filling one batch.
    const free = Math.max(1, parallelism - this.running);
    const batchSize = Math.min(this.options.batchSize, Math.max(1, Math.ceil(this.pending.size / free)));
    const due = worthSweeping(this.oldestNoted(), this.newestNoted, cutoff, window) || this.hurrying();
    // One batch more than the workers: a worker done with its batch starts the
    // queued one at once, instead of idling while this thread hears of the
    // result and plans the next (a fifth of a backlog's tail, session 21).
    while (due && this.running < parallelism + 1) {
      const batch = this.nextBatch(batchSize, cutoff);
      if (batch.length === 0) break;
      this.dispatch(batch, cutoff).catch((err: unknown) => this.options.onError?.(err));
    }
    const settleAt = this.settle();
    if (this.pending.size === 0 && settleAt === undefined) return;
    // Come back when a sweep becomes worth it (worthSweeping), if that is sooner than the interval.
    let wait = this.pending.size === 0 ? Infinity : intervalMs;
    const now = performance.now();
    const opens = sweepCutoff(this.oldestNoted(), this.newestNoted, window) + window;
    if (opens > now && opens !== Infinity) wait = Math.min(wait, Math.ceil(opens - now));
    if (settleAt !== undefined) wait = Math.min(wait, Math.max(1, Math.ceil(settleAt - now)));
    this.schedule(wait);
  }

  /**
   * Hands quiet metrics to be settled while a worker is free; when the next
   * one is due (ms, monotonic), if any waits.
   */
  private settle(): number | undefined {
    const { batchSize } = this.options;
    const after = this.options.settleAfterMs ?? 0;
    if (after <= 0) return undefined;
    const due = performance.now() - after;
    while (this.running < this.options.parallelism) {
      const batch: string[] = [];
      for (const [id, at] of this.unsettled) {
        if (at > due || batch.length >= batchSize) break;
        this.unsettled.delete(id);
        if (!this.pending.has(id) && !this.inflight.has(id)) batch.push(id);
      }
      if (batch.length === 0) break;
      this.dispatch(batch, Infinity, SETTLE_LEAST_ROWS).catch((err: unknown) => this.options.onError?.(err));
    }
    for (const at of this.unsettled.values()) return at + after;
    return undefined;
  }

  /**
   * How many of a metric's refs (oldest first) a round with this cutoff may
   * process (engine/reorder-window.ts), and at least those up to the
   * shard's hurry; none past the seq up to which every record of the shard
   * is noted. When other nodes append too, this node notes its own records
   * at once and theirs at the next follow: a record of its own may be noted
   * before an older one of theirs for the same metric, which a state past
   * both would count as consumed.
   */
  private batchable(metricId: string, cutoff: number): number {
    const window = this.options.reorderWindowMs ?? 0;
    const refs = this.pending.window(metricId);
    const { incoming } = this.options.drivers;
    if (!incoming.shared) return worthTaking(refs, takeable(refs, cutoff, window), cutoff, window);
    const held = this.held.get(incoming.shardOf(metricId));
    const followed = held?.cursor ?? -Infinity;
    const taken = takeable(refs, cutoff, window, followed);
    const hurry = Math.min(held?.hurry ?? 0, followed);
    let hurried = taken;
    while (hurried < refs.length && refs[hurried]!.seq <= hurry) hurried++;
    return hurried > taken ? hurried : worthTaking(refs, taken, cutoff, window);
  }

  /** Whether a held shard still has records up to its hurry; forgets the hurries done. */
  private hurrying(): boolean {
    let any = false;
    for (const held of this.held.values()) {
      if (held.hurry === 0) continue;
      let left = false;
      for (const seq of held.live.keys()) {
        if (seq > held.hurry) continue;
        left = true;
        break;
      }
      if (left) any = true;
      else held.hurry = 0;
    }
    return any;
  }

  /** When the oldest push still being handled was received (ms, monotonic); Infinity when none is. Forgets those past the hold. */
  private oldestReceiving(): number {
    const expired = performance.now() - RECEIVING_HOLD_MS;
    for (const [id, at] of this.receipts) {
      if (at > expired) return at;
      this.receipts.delete(id);
    }
    return Infinity;
  }

  /**
   * The next pending metrics in a sweep over the backlog in metric id order.
   * A batch of neighbouring ids shares LMDB pages (states and incoming are
   * keyed by metric id), so its commit writes far fewer pages than a batch of
   * ids scattered over the whole key space; every metric pending when a sweep
   * starts gets its turn before the next sweep.
   */
  private nextBatch(size: number, cutoff: number): string[] {
    // A Set: the second pass starts a new sweep, which meets again the ids the
    // first one took. A metric twice in one batch would be planned twice from
    // the same state, the second commit undoing the first's.
    const batch = new Set<string>();
    for (let pass = 0; pass < 2 && batch.size < size; pass++) {
      if (this.sweepAt >= this.sweep.length) {
        this.sweep = [...this.pending.metricIds()].sort();
        this.sweepAt = 0;
      }
      while (this.sweepAt < this.sweep.length && batch.size < size) {
        const id = this.sweep[this.sweepAt++]!;
        if (this.pending.has(id) && !this.inflight.has(id) && this.batchable(id, cutoff) > 0) batch.add(id);
      }
    }
    return [...batch];
  }

  /**
   * Processes these metrics' refs noted by `cutoff` (all of them by
   * default); with `settle`, settles them instead (they have no refs). A
   * batch per shard.
   */
  private dispatch(metricIds: string[], cutoff = Infinity, settle?: number): Promise<void> {
    const { incoming } = this.options.drivers;
    const byShard = new Map<Shard, string[]>();
    for (const id of metricIds) {
      const shard = incoming.shardOf(id);
      const ids = byShard.get(shard);
      if (ids === undefined) byShard.set(shard, [id]);
      else ids.push(id);
    }
    return Promise.all([...byShard].map(([shard, ids]) => this.dispatchShard(shard, ids, cutoff, settle))).then(() => undefined);
  }

  private dispatchShard(shard: Shard, metricIds: string[], cutoff: number, settle: number | undefined): Promise<void> {
    const held = this.held.get(shard);
    if (held === undefined) return Promise.resolve();
    const lease: Lease = { shard, fence: held.fence };
    // The batch's metrics: only them, its jobs' refs are let go once handed to the runner.
    let jobIds: string[] = [];
    // The metrics count as in flight from now on, through the index lookups.
    this.running++;
    // The worker committed (a failed one may have too): drop what was read
    // before. This thread's next snapshot sees the commit.
    const committed = () => this.options.onCommitted?.(jobIds);
    const started = performance.now();
    const report = (measures: number, failed: boolean) => {
      const seconds = (performance.now() - started) / 1000;
      if (settle === undefined) this.options.activity?.batchDone({ metrics: jobIds.length, measures, seconds, failed });
      else if (!failed) this.options.activity?.settleDone(jobIds.length, seconds);
    };
    // Metrics are kept for settling only when settling is on: a kept one
    // keeps rounds coming for a settle never due.
    const settling = (this.options.settleAfterMs ?? 0) > 0;
    const work = this.batchOf(metricIds, cutoff, settle)
      // Not awaited in the callback, whose frame would keep the batch through the run.
      .then((batch) => {
        jobIds = batch.metricIds;
        return jobIds.length === 0 ? undefined : this.options.runner(batch, lease);
      })
      .then(async (results) => {
        if (results === undefined) return;
        committed();
        let measures = 0;
        const now = performance.now();
        // Those left with many loose rows are settled later, if they still exist.
        const loose = settling ? jobIds.filter((_id, job) => resultLooseRows(results, job) >= SETTLE_LEAST_ROWS) : [];
        const kept = loose.length === 0 ? [] : await this.options.index.getMetrics(loose);
        for (const id of jobIds) this.unsettled.delete(id);
        loose.forEach((id, i) => {
          if (kept[i] !== undefined) this.unsettled.set(id, now);
        });
        // Records pushed while the job ran come after its lastSeq and stay.
        for (let job = 0; job < jobIds.length; job++) measures += this.release(jobIds[job]!, resultLastSeq(results, job));
        report(measures, false);
      });
    let failed = false;
    const tracked: Promise<void> = work
      .catch((err: unknown) => {
        failed = true;
        if (err instanceof FencedCommit) this.fenced++;
        if (jobIds.length > 0) {
          committed();
          report(0, true);
        }
        throw err;
      })
      .finally(() => {
        this.running--;
        for (const id of metricIds) {
          if (this.inflight.get(id) === tracked) this.inflight.delete(id);
        }
        // A failed batch (a full disk, say) is retried after the interval, not in a tight loop.
        if (this.pending.size > 0 || this.unsettled.size > 0) this.schedule(failed ? Math.max(this.options.intervalMs, FAILED_RETRY_MS) : 0);
        // Metrics waiting to be settled hold no measure: drained() does not wait for them.
        if (this.pending.size === 0 && this.running === 0) for (const w of this.idleWaiters.splice(0)) w();
      });
    for (const id of metricIds) this.inflight.set(id, tracked);
    return tracked;
  }

  /** The batch of these metrics: metrics gone (or whose policy is) are forgotten. */
  private async batchOf(metricIds: string[], cutoff: number, settle: number | undefined): Promise<JobBatch> {
    const { index } = this.options;
    const metrics = await index.getMetrics(metricIds);
    // Loops rather than flatMap and entries(): an array or an iterator result per metric, for batches of hundreds.
    const unique = new Set<string>();
    for (const m of metrics) if (m !== undefined) unique.add(m.archivePolicyName);
    const names = [...unique];
    const found = await Promise.all(names.map((name) => index.getPolicy(name)));
    const policies = new Map<string, ArchivePolicy | undefined>(names.map((name, i) => [name, found[i]]));
    const batch = new JobBatchBuilder(metricIds.length, settle);
    for (let i = 0; i < metricIds.length; i++) {
      const id = metricIds[i]!;
      const metric = metrics[i];
      const policy = metric && policies.get(metric.archivePolicyName);
      if (metric === undefined || policy === undefined || (settle === undefined && !this.pending.has(id))) {
        this.forget(id);
        continue;
      }
      const take = settle === undefined ? this.batchable(id, cutoff) : 0;
      if (settle !== undefined || take > 0) batch.add(id, policy, take);
    }
    return batch.build((_job, id, count, refs, at) => this.pending.copyRefs(id, count, refs, at));
  }
}
