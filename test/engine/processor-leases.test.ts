// The processor works the shards its coordinator gives it: it takes a
// shard's lease before processing it (finding the measures pushed meanwhile
// in the shard's incoming records), commits each batch under that lease's
// fence, and lets the shard go when the coordinator takes it away or the
// lease is lost. The engine's own coordinator always holds the one shard;
// a coordinator whose answers the test sets stands in for the others (its
// leases shared with another such coordinator, as nodes share Redis').
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Coordinator, Fence, IncomingLog, Lease, Shard } from '../../engine/drivers/types.js';
import { Engine } from '../../engine/engine.js';
import { EngineUnavailable } from '../../engine/errors.js';
import { encodeIncomingBatch } from '../../engine/incoming-batch.js';
import type { MetricRecord } from '../../engine/index.js';
import { inlineRunner } from '../../engine/pool.js';
import { Processor } from '../../engine/processor.js';

const S = 1_000_000;
const T0 = Date.UTC(2024, 0, 1) * 1000;

class SetCoordinator implements Coordinator {
  constructor(readonly leases = new Map<Shard, Fence>()) {}

  shards: Shard[] = [];
  /** Whether lock() gets the lease. */
  free = true;
  /** Whether renew() keeps it. */
  kept = true;
  private fence = 6;
  readonly released: [Shard, Fence][] = [];
  private readonly listeners = new Set<() => void>();

  owned(): readonly Shard[] {
    return this.shards;
  }

  async lock(shard: Shard): Promise<Fence | null> {
    if (!this.free) return null;
    this.leases.set(shard, ++this.fence);
    return this.fence;
  }

  async renew(shard: Shard): Promise<boolean> {
    if (!this.kept) this.leases.delete(shard);
    return this.kept;
  }

  async release(shard: Shard, fence: Fence): Promise<void> {
    this.released.push([shard, fence]);
    if (this.leases.get(shard) === fence) this.leases.delete(shard);
  }

  async leaseOf(shard: Shard): Promise<Fence | null> {
    return this.leases.get(shard) ?? null;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  give(shards: Shard[]): void {
    this.shards = shards;
    for (const listener of this.listeners) listener();
  }
}

let dataDir: string;
let engine: Engine;
let metric: MetricRecord;
let coordinator: SetCoordinator;
let leases: Lease[];
let processor: Processor;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-leases-'));
  engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });
  // Only the processor under test processes.
  await engine.processor.stop();
  await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: S, points: 60, timespan: 60 * S }], aggregationMethods: ['sum'] });
  metric = await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null });
  coordinator = new SetCoordinator();
  leases = [];
  const run = inlineRunner(engine.drivers);
  processor = new Processor({
    drivers: { ...engine.drivers, coordinator },
    index: engine.index,
    runner: (jobs, lease) => {
      leases.push(lease);
      return run(jobs, lease);
    },
    parallelism: 1,
    intervalMs: 1e9,
    batchSize: 8,
    leaseMs: 60,
  });
});

afterEach(async () => {
  await processor.close();
  await engine.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function push(values: number[]): Promise<void> {
  const timestamps = Float64Array.from(values, (_, i) => T0 + i * S);
  await engine.addMeasures(new Map([[metric.id, { timestamps, values: Float64Array.from(values) }]]));
}

const pendingMetrics = () => processor.backlog(false).metrics;

/** The LMDB log as a cluster node sees Redis': records come from others too, found by following it. */
function sharedLog(): IncomingLog {
  const log = engine.drivers.incoming;
  return {
    shared: true,
    shards: log.shards,
    shardOf: (id) => log.shardOf(id),
    append: (records) => log.append(records),
    scan: (shard, visit, after) => log.scan(shard, visit, after),
    head: (shard) => log.head(shard),
    fetch: (shard, seqs, visit) => log.fetch(shard, seqs, visit),
    drop: (shard, seq) => log.drop(shard, seq),
    hurry: (shard, seq) => log.hurry(shard, seq),
    hurried: () => log.hurried(),
  };
}

describe('shard leases', () => {
  it('processes a shard only once given it, from the records pushed before, under its fence', async () => {
    await processor.open();
    processor.start();
    await push([1, 2]);
    processor.noteIncoming(0, 999, encodeIncomingBatch(new Map([[metric.id, { timestamps: Float64Array.of(T0), values: Float64Array.of(1) }]])).entries);
    expect(pendingMetrics(), 'another holder\'s shard').toBe(0);
    coordinator.give([0]);
    await vi.waitFor(() => expect(leases).toEqual([{ shard: 0, fence: 7 }]));
    await processor.drained();
    const [series] = await engine.getMeasures(metric, { method: 'sum' });
    expect([...series!.values]).toEqual([1, 2]);
  });

  it('forgets a shard\'s measures when the lease is lost at a renewal, and finds them again under a new fence', async () => {
    await push([1]);
    coordinator.give([0]);
    await processor.open();
    expect(pendingMetrics()).toBe(1);
    coordinator.kept = false;
    coordinator.free = false;
    await vi.waitFor(() => expect(pendingMetrics()).toBe(0));
    coordinator.kept = true;
    coordinator.free = true;
    await vi.waitFor(() => expect(pendingMetrics()).toBe(1));
    processor.start();
    await processor.drained();
    expect(leases).toEqual([{ shard: 0, fence: 8 }]);
    const [series] = await engine.getMeasures(metric, { method: 'sum' });
    expect([...series!.values]).toEqual([1]);
  });

  it('gives a shard back once no longer its own, and every shard it holds on close', async () => {
    await push([1]);
    coordinator.give([0]);
    await processor.open();
    coordinator.give([]);
    await vi.waitFor(() => expect(coordinator.released).toEqual([[0, 7]]));
    expect(pendingMetrics()).toBe(0);
    coordinator.give([0]);
    await vi.waitFor(() => expect(pendingMetrics()).toBe(1));
    await processor.close();
    expect(coordinator.released).toEqual([[0, 7], [0, 8]]);
  });

  it('with a log other nodes append to: a refresh of a held shard\'s metric takes a record it was not told of', async () => {
    const node = new Processor({ drivers: { ...engine.drivers, incoming: sharedLog(), coordinator }, index: engine.index, runner: inlineRunner(engine.drivers), parallelism: 1, intervalMs: 1e9, batchSize: 8, leaseMs: 60 });
    coordinator.give([0]);
    await node.open();
    node.start();
    try {
      // Appended after the node took the shard, through the engine (another node, for this one).
      await push([1, 2]);
      expect(node.hasPending(metric.id)).toBe(true);
      await node.refresh([metric.id]);
    } finally {
      await node.close();
    }
    const [series] = await engine.getMeasures(metric, { method: 'sum' });
    expect([...series!.values]).toEqual([1, 2]);
  });

  describe('a refresh of metrics whose shard another node holds (lease 60 ms: two leases are 120 ms)', () => {
    /** A node holding no shard, following the shared log, seeing the holder's lease. */
    const reader = (busyHolderPatienceMs?: number) =>
      new Processor({
        drivers: { ...engine.drivers, incoming: sharedLog(), coordinator: new SetCoordinator(coordinator.leases) },
        index: engine.index,
        runner: inlineRunner(engine.drivers),
        parallelism: 1,
        intervalMs: 1e9,
        batchSize: 8,
        leaseMs: 60,
        ...(busyHolderPatienceMs === undefined ? {} : { busyHolderPatienceMs }),
      });

    /**
     * Six metrics with a measure each, a holder of their shard whose batches take `batchMs` (or, `stuck`,
     * never end while the refresh waits), and a refresh of them through a reader: how long it took.
     */
    async function refreshThroughReader(holderBatchSize: number, batchMs: number, { busyHolderPatienceMs = undefined as number | undefined, stuck = false } = {}): Promise<number> {
      const metrics = [metric];
      for (let i = 0; i < 5; i++) metrics.push(await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null }));
      for (const [i, m] of metrics.entries()) await engine.addMeasures(new Map([[m.id, { timestamps: Float64Array.of(T0), values: Float64Array.of(i) }]]));
      const run = inlineRunner(engine.drivers);
      let unstick: (() => void) | undefined;
      const stuckUntil = stuck ? new Promise<void>((resolve) => (unstick = resolve)) : undefined;
      // One worker: its batches run one after another (the processor queues one more than its workers).
      let worker: Promise<unknown> = Promise.resolve();
      const holder = new Processor({
        drivers: { ...engine.drivers, incoming: sharedLog(), coordinator },
        index: engine.index,
        runner: (jobs, lease) => {
          const batch = worker.then(async () => (await stuckUntil, await new Promise((resolve) => setTimeout(resolve, batchMs)), run(jobs, lease)));
          worker = batch.catch(() => undefined);
          return batch;
        },
        parallelism: 1,
        intervalMs: 1e9,
        batchSize: holderBatchSize,
        leaseMs: 60_000,
      });
      const node = reader(busyHolderPatienceMs);
      await node.open();
      coordinator.give([0]);
      await holder.open();
      holder.start();
      const started = performance.now();
      try {
        await node.refresh(metrics.map((m) => m.id));
      } finally {
        unstick?.();
        await Promise.all([node.close(), holder.close()]);
      }
      const took = performance.now() - started;
      for (const [i, m] of metrics.entries()) expect([...(await engine.getMeasures(m, { method: 'sum' }))[0]!.values]).toEqual([i]);
      return took;
    }

    it.each([
      ['takes longer than two leases but keeps processing (a metric a batch, 60 ms each)', 1, 60, 360],
      ['keeps its lease through one batch longer than two leases (400 ms)', 8, 400, 400],
    ])('waits for a holder that %s', async (_, holderBatchSize, batchMs, least) => {
      expect(await refreshThroughReader(holderBatchSize, batchMs)).toBeGreaterThanOrEqual(least - 20);
    });

    it('answers EngineUnavailable once a holder that keeps its lease makes no progress for busyHolderPatienceMs', async () => {
      await expect(refreshThroughReader(8, 0, { busyHolderPatienceMs: 300, stuck: true })).rejects.toThrow(/shard 0 made no progress within 300 ms/);
    });

    it('answers EngineUnavailable once two leases pass without progress (no holder)', async () => {
      await push([1]);
      const node = reader();
      await node.open();
      try {
        await expect(node.refresh([metric.id])).rejects.toThrow(EngineUnavailable);
        await expect(node.refresh([metric.id])).rejects.toThrow(/shard 0 made no progress within 120 ms/);
      } finally {
        await node.close();
      }
    });
  });
});
