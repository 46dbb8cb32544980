// Open splits and raw tails in chunks: a metric fed in many small pushes, in
// order or with points arriving out of order inside the back window (some
// reaching rows already frozen into chunks), reads exactly as the same
// points pushed at once; chunks exist while a split is open (or the tail
// long) and are gone once the split is sealed (the tail moved on) or the
// metric is deleted; a later push replacing frozen points is read back as
// replaced. One update spanning several splits seals all but the
// newest at once, and drops those the retention already expired. An open
// split's only chunk stays in its state while small (a settled quiet
// metric: one record), and becomes a record once it grows or another
// follows. A state keeps the key of its open split's newest chunk record
// (which a freeze grows with a get, not a range read); one kept without it
// (format 7) reads and grows the same.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { random } from '../../bench/split-codec.bench.js';
import { Engine } from '../../engine/engine.js';
import type { MetricRecord } from '../../engine/index.js';
import { decodeMetricState, encodeMetricState } from '../../engine/metric-state.js';
import { SETTLE_LEAST_ROWS } from '../../engine/processor.js';
import { encodeRawSplit, isRawSplit, rawRowCount } from '../../engine/split.js';
import { CHUNK_BYTES, CHUNK_ROWS, decodeChunk, INLINE_CHUNK_BYTES, MAX_CHUNK_ROWS, TAIL_CHUNK_POINTS } from '../../engine/state-chunks.js';
import { processJobs } from './job-batches.js';

const S = 1_000_000;
const T0 = Date.UTC(2024, 0, 1) * 1000;
const METHODS = ['mean', 'min', 'max', 'count', 'last'];
/** The embedded mode's one shard, always held. */
const LEASE = { shard: 0, fence: 0 };

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function openEngine(): Promise<Engine> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-open-split-'));
  dirs.push(dataDir);
  const engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: METHODS, workers: 0, processingIntervalMs: 1e9 });
  await engine.processor.stop();
  // Back window 0 with a 1 h block: points of the newest hour may still arrive in any order.
  await engine.index.createPolicy({
    name: 'p',
    backWindow: 0,
    definition: [
      { granularity: S, points: 7200, timespan: 7200 * S },
      { granularity: 60 * S, points: 600, timespan: 36000 * S },
      { granularity: 3600 * S, points: 100, timespan: 360000 * S },
    ],
    aggregationMethods: METHODS,
  });
  return engine;
}

const newMetric = (engine: Engine) =>
  engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null });

async function push(engine: Engine, metric: MetricRecord, points: [number, number][]): Promise<void> {
  const timestamps = Float64Array.from(points, ([t]) => T0 + t * S);
  const values = Float64Array.from(points, ([, v]) => v);
  await engine.addMeasures(new Map([[metric.id, { timestamps, values }]]));
  await engine.processor.refresh([metric.id]);
}

async function readAll(engine: Engine, metric: MetricRecord): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const method of METHODS) {
    for (const s of await engine.getMeasures(metric, { method })) out.push(method, s.granularity, [...s.timestamps], [...s.values]);
  }
  return out;
}

/** The inline chunk of the open split of `granularity`. */
const inlineChunk = (engine: Engine, metric: MetricRecord, granularity = S) => {
  const bytes = engine.storage.states.get(metric.id);
  return bytes === undefined ? undefined : decodeMetricState(bytes).granularities.find((g) => g.granularity === granularity)?.open?.inline;
};

/** Chunk records of the 1 s open split, or with granularity 0, of the tail. */
const chunkRecords = (engine: Engine, metric: MetricRecord, granularity = S) =>
  engine.storage.stateChunks.getKeysCount({ start: [metric.id, granularity, -Number.MAX_VALUE], end: [metric.id, granularity, Number.MAX_VALUE] });

/** Chunks of the 1 s open split (records and inline), or with granularity 0, of the tail. */
const chunkCount = (engine: Engine, metric: MetricRecord, granularity = S) =>
  chunkRecords(engine, metric, granularity) + (granularity !== 0 && inlineChunk(engine, metric, granularity) !== undefined ? 1 : 0);

/** Per open split with chunk records (of `granularity`, when given): the newest chunk key its state keeps, and the first timestamp of its last record. */
const newestKeys = (engine: Engine, metric: MetricRecord, granularity?: number): [number | undefined, number | undefined][] =>
  decodeMetricState(engine.storage.states.get(metric.id)!)
    .granularities.filter((g) => g.open !== null && g.open.frozen > 0 && (granularity === undefined || g.granularity === granularity))
    .map((g) => {
      const [last] = engine.storage.stateChunks.getKeys({ start: [metric.id, g.granularity, Number.MAX_VALUE], end: [metric.id, g.granularity, -Number.MAX_VALUE], reverse: true, limit: 1 });
      return [g.open!.newest, last?.[2]];
    });

/** The metric's state as one written before states kept their newest chunk key. */
async function forgetNewest(engine: Engine, metric: MetricRecord): Promise<void> {
  const state = decodeMetricState(engine.storage.states.get(metric.id)!);
  for (const g of state.granularities) if (g.open !== null) g.open.newest = undefined;
  await engine.storage.states.put(metric.id, encodeMetricState(state, METHODS.length));
}

/** Seconds 0..n-1 with random values, cut into pushes hour by hour; within an hour shuffled when `shuffle`. */
function pushes(n: number, rand: () => number, shuffle: boolean): [number, number][][] {
  const out: [number, number][][] = [];
  for (let hour = 0; hour * 3600 < n; hour++) {
    const points: [number, number][] = [];
    for (let t = hour * 3600; t < Math.min(n, (hour + 1) * 3600); t++) points.push([t, Math.round(rand() * 1e6) / 100]);
    if (shuffle) {
      for (let i = points.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [points[i], points[j]] = [points[j]!, points[i]!];
      }
    }
    for (let i = 0; i < points.length; ) {
      const size = 1 + Math.floor(rand() * 300);
      out.push(points.slice(i, i + size));
      i += size;
    }
  }
  return out;
}

describe('open splits kept in chunks', () => {
  it.each([
    ['in order', false, 1],
    ['shuffled within each hour', true, 2],
    ['shuffled, another seed', true, 3],
  ])('read the same as one push when fed in small pushes %s', async (_name, shuffle, seed) => {
    const engine = await openEngine();
    const incremental = await newMetric(engine);
    const whole = await newMetric(engine);
    const rand = random(seed);
    const all = pushes(9000, rand, shuffle);
    let sawChunks = false;
    let sawTailChunks = false;
    for (const points of all) {
      await push(engine, incremental, points);
      sawChunks ||= chunkCount(engine, incremental) > 0;
      sawTailChunks ||= chunkCount(engine, incremental, 0) > 0;
      for (const [kept, last] of newestKeys(engine, incremental)) expect(kept).toBe(last);
    }
    await push(engine, whole, all.flat());
    expect(sawChunks, 'the open split was chunked at some point').toBe(true);
    expect(sawTailChunks, 'the tail was chunked at some point').toBe(true);
    expect(await readAll(engine, incremental)).toEqual(await readAll(engine, whole));
    await engine.close();
  });

  it('a state kept without its newest chunk key grows the same chunks, and keeps the key again from its next freeze', async () => {
    const engine = await openEngine();
    const forgetful = await newMetric(engine);
    const kept = await newMetric(engine);
    const rand = random(5);
    const points = Array.from({ length: 3000 }, (_, t): [number, number] => [t, Math.round(rand() * 1e6) / 100]);
    for (let at = 0; at < points.length; at += 100) {
      for (const metric of [forgetful, kept]) await push(engine, metric, points.slice(at, at + 100));
      await forgetNewest(engine, forgetful);
    }
    expect(newestKeys(engine, forgetful).length).toBeGreaterThan(0);
    expect(newestKeys(engine, forgetful).every(([newest]) => newest === undefined)).toBe(true);
    // Enough for the 1 s split to freeze again; the coarser ones freeze later.
    for (const metric of [forgetful, kept]) await push(engine, metric, Array.from({ length: 2 * CHUNK_ROWS }, (_, i): [number, number] => [3000 + i, i]));
    expect(newestKeys(engine, forgetful, S)).toEqual(newestKeys(engine, kept, S));
    expect(newestKeys(engine, forgetful, S)[0]![0]).toBeDefined();
    expect(chunkRecordsOf(engine, forgetful).map(({ key, value }) => [key[2], [...value]])).toEqual(chunkRecordsOf(engine, kept).map(({ key, value }) => [key[2], [...value]]));
    expect(await readAll(engine, forgetful)).toEqual(await readAll(engine, kept));
    await engine.close();
  });

  it('freeze rows past CHUNK_ROWS (tail points past TAIL_CHUNK_POINTS), drop the chunks when the split is sealed, the tail moves on and the metric is deleted', async () => {
    const engine = await openEngine();
    const metric = await newMetric(engine);
    const seconds = (from: number, to: number) => Array.from({ length: to - from }, (_, i): [number, number] => [from + i, i]);
    await push(engine, metric, seconds(0, CHUNK_ROWS - 1));
    expect(chunkCount(engine, metric)).toBe(0);
    expect(chunkCount(engine, metric, 0)).toBe(0);
    await push(engine, metric, seconds(CHUNK_ROWS - 1, 2 * CHUNK_ROWS));
    expect(chunkCount(engine, metric)).toBeGreaterThan(0);
    expect(chunkCount(engine, metric, 0)).toBe(0);
    await push(engine, metric, seconds(2 * CHUNK_ROWS, 3 * TAIL_CHUNK_POINTS));
    expect(chunkCount(engine, metric, 0)).toBeGreaterThan(0);
    // The next 1 s split and the next 1 h block start at 3600 s: the first
    // split is sealed and the tail holds only the new hour, chunks deleted.
    await push(engine, metric, seconds(3 * TAIL_CHUNK_POINTS, 3610));
    expect(chunkCount(engine, metric)).toBe(0);
    expect(chunkCount(engine, metric, 0)).toBe(0);
    const [fine] = (await engine.getMeasures(metric, { method: 'count', granularity: S }));
    expect(fine!.timestamps.length).toBe(3610);
    await push(engine, metric, seconds(3610, 3610 + 2 * TAIL_CHUNK_POINTS));
    expect(chunkCount(engine, metric)).toBeGreaterThan(0);
    expect(chunkCount(engine, metric, 0)).toBeGreaterThan(0);
    await engine.deleteMetric(metric.id);
    expect(chunkCount(engine, metric)).toBe(0);
    expect(chunkCount(engine, metric, 0)).toBe(0);
    await engine.close();
  });

  it('a later push replacing frozen raw points reads as the replaced values pushed at once, also once a later update reads the tail back', async () => {
    const engine = await openEngine();
    const replaced = await newMetric(engine);
    const whole = await newMetric(engine);
    const seconds = Array.from({ length: 3 * TAIL_CHUNK_POINTS }, (_, t): [number, number] => [t, t]);
    await push(engine, replaced, seconds);
    expect(chunkCount(engine, replaced, 0)).toBeGreaterThan(0);
    await push(engine, replaced, [[5, 1000]]);
    // Second 6 shares its minute with second 5: recomputing that minute reads second 5 back from the stored tail.
    await push(engine, replaced, [[6, 50]]);
    await push(engine, whole, seconds.map(([t, v]): [number, number] => [t, t === 5 ? 1000 : t === 6 ? 50 : v]));
    expect(await readAll(engine, replaced)).toEqual(await readAll(engine, whole));
    await engine.close();
  });

  it('one push over several splits seals all but the newest and drops the ones past the timespan at once', async () => {
    const engine = await openEngine();
    const hourly = await newMetric(engine);
    const atOnce = await newMetric(engine);
    const rand = random(4);
    const points = Array.from({ length: 5 * 3600 }, (_, t): [number, number] => [t, Math.round(rand() * 1e6) / 100]);
    // A chunked open split first, so the big push also seals a split read back from chunks.
    await push(engine, atOnce, points.slice(0, 2 * CHUNK_ROWS));
    expect(chunkCount(engine, atOnce)).toBeGreaterThan(0);
    await push(engine, atOnce, points.slice(2 * CHUNK_ROWS));
    for (let h = 0; h < 5; h++) await push(engine, hourly, points.slice(h * 3600, (h + 1) * 3600));
    // 2 h kept at 1 s: splits before the one holding the oldest kept second
    // (hour 2's) are gone. The big push's rows start after that second, so
    // it never writes hour 2's split, and drops the split it sealed (hour 0's).
    const fineKeys = (m: MetricRecord) => [...engine.storage.splits.getKeys({ start: [m.id, S, -1], end: [m.id, S, Number.MAX_SAFE_INTEGER] })].map((k) => (k[2] - T0) / S);
    expect(fineKeys(atOnce)).toEqual([10800]);
    expect(fineKeys(hourly)).toEqual([7200, 10800]);
    expect(await readAll(engine, atOnce)).toEqual(await readAll(engine, hourly));
    await engine.close();
  });
});

const chunkRecordsOf = (engine: Engine, metric: MetricRecord) => [...engine.storage.stateChunks.getRange({ start: [metric.id, S, 0], end: [metric.id, S, Number.MAX_VALUE] })];

/** The 1 s open split's chunks, the inline one first. */
const openSplitChunks = (engine: Engine, metric: MetricRecord) => {
  const inline = inlineChunk(engine, metric);
  return [...(inline === undefined ? [] : [{ key: [metric.id, S, inline.first] as [string, number, number], value: inline.bytes }]), ...chunkRecordsOf(engine, metric)];
};

const inlineRows = (engine: Engine, metric: MetricRecord) =>
  decodeMetricState(engine.storage.states.get(metric.id)!).granularities.map((g) => (g.open === null ? 0 : rawRowCount(g.open.raw)));

describe('frozen rows, encoded', () => {
  const seconds = (from: number, to: number, rand = random(from + 1)) =>
    Array.from({ length: to - from }, (_, i): [number, number] => [from + i, Math.round(rand() * 1e4) / 100]);

  it('are stored in the compact codec form, each chunk growing to CHUNK_BYTES or MAX_CHUNK_ROWS rows', async () => {
    const engine = await openEngine();
    const metric = await newMetric(engine);
    for (let t = 0; t < 3000; t += 100) await push(engine, metric, seconds(t, t + 100));
    const chunks = openSplitChunks(engine, metric);
    expect(chunks.length).toBeGreaterThan(1);
    expect(inlineChunk(engine, metric), 'grown out of the state').toBeUndefined();
    for (const { key, value } of chunks) {
      expect(isRawSplit(value)).toBe(false);
      const rows = decodeChunk(value, key, METHODS.length).timestamps.length;
      expect(rows).toBeLessThanOrEqual(MAX_CHUNK_ROWS);
    }
    // Every chunk but the newest was closed because it had grown past the byte or row bound.
    for (const { key, value } of chunks.slice(0, -1)) {
      const rows = decodeChunk(value, key, METHODS.length).timestamps.length;
      expect(value.length >= CHUNK_BYTES || rows === MAX_CHUNK_ROWS, `chunk at ${key[2]}: ${value.length} bytes, ${rows} rows`).toBe(true);
    }
    const whole = await newMetric(engine);
    await push(engine, whole, seconds(0, 3000).map((_, i) => seconds(Math.floor(i / 100) * 100, Math.floor(i / 100) * 100 + 100)[i % 100]!));
    expect(await readAll(engine, metric)).toEqual(await readAll(engine, whole));
    await engine.close();
  });

  it('raw chunks written before chunks were encoded still read, are extended and are sealed', async () => {
    const engine = await openEngine();
    const legacy = await newMetric(engine);
    const whole = await newMetric(engine);
    // Rows enough for chunk records (past INLINE_CHUNK_BYTES), as formats before encoded chunks had.
    const first = seconds(0, 12 * CHUNK_ROWS);
    await push(engine, legacy, first);
    const chunks = openSplitChunks(engine, legacy);
    expect(chunks.length).toBeGreaterThan(0);
    expect(inlineChunk(engine, legacy)).toBeUndefined();
    for (const { key, value } of chunks) await engine.storage.stateChunks.put(key, encodeRawSplit(decodeChunk(value, key, METHODS.length)));
    expect(openSplitChunks(engine, legacy).every(({ value }) => isRawSplit(value))).toBe(true);
    await push(engine, whole, first);
    expect(await readAll(engine, legacy)).toEqual(await readAll(engine, whole));
    // More rows: frozen into a new, encoded chunk after the raw ones; then a point among the raw rows; then the seal.
    for (const more of [seconds(12 * CHUNK_ROWS, 15 * CHUNK_ROWS), [[7, 12.5]] as [number, number][], seconds(15 * CHUNK_ROWS, 3601)]) {
      await push(engine, legacy, more);
      await push(engine, whole, more);
      expect(await readAll(engine, legacy)).toEqual(await readAll(engine, whole));
    }
    expect(openSplitChunks(engine, legacy)).toEqual([]);
    await engine.close();
  });

  it('a settle job freezes the loose inline rows but the last, when there are at least as many as it asks, and reads the same', async () => {
    const engine = await openEngine();
    const metric = await newMetric(engine);
    // The most rows an update leaves inline: one fewer would be frozen.
    const loose = CHUNK_ROWS - 2;
    await push(engine, metric, seconds(0, loose + 1));
    const before = await readAll(engine, metric);
    const policy = (await engine.index.getPolicy('p'))!;
    const settle = (least: number) => processJobs(engine.drivers, [{ metricId: metric.id, policy, refs: [], settle: least }], LEASE);
    const state = engine.storage.states.get(metric.id)!;
    expect(await settle(loose + 1)).toEqual([expect.objectContaining({ metricId: metric.id, consumed: 0, looseRows: loose })]);
    expect(engine.storage.states.get(metric.id)).toEqual(state);
    expect(await settle(loose)).toEqual([expect.objectContaining({ looseRows: 0 })]);
    expect(inlineRows(engine, metric)).toEqual([1, 1, 1]);
    // A quiet metric's frozen rows: in its state, no record of their own.
    expect(openSplitChunks(engine, metric)).toHaveLength(1);
    expect(chunkRecordsOf(engine, metric)).toEqual([]);
    expect(inlineChunk(engine, metric)!.bytes.length).toBeLessThanOrEqual(INLINE_CHUNK_BYTES);
    engine.readCache.invalidate([metric.id]);
    expect(await readAll(engine, metric)).toEqual(before);
    await engine.close();
  });
});

describe('the processor settles quiet metrics', () => {
  it.each([
    ['with enough loose rows, once quiet', CHUNK_ROWS - 1, 1],
    ['not with fewer loose rows than SETTLE_LEAST_ROWS', SETTLE_LEAST_ROWS, 0],
  ])('%s', async (_name, points, settled) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-settle-'));
    dirs.push(dataDir);
    const engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 10, settleAfterMs: 50 });
    await engine.index.createPolicy({ name: 'm', backWindow: 0, definition: [{ granularity: S, points: 7200, timespan: 7200 * S }], aggregationMethods: ['mean'] });
    const metric = await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'm', creator: 'x', resourceId: null });
    await engine.addMeasures(new Map([[metric.id, { timestamps: Float64Array.from({ length: points }, (_, i) => T0 + i * S), values: new Float64Array(points).fill(2) }]]));
    await engine.processor.drained();
    // drained() waits for measures, not for settling, which is due later.
    expect(engine.activity.metricsSettled).toBe(0);
    const before = await engine.getMeasures(metric, { method: 'mean' });
    for (let waited = 0; waited < 5000 && engine.activity.metricsSettled < settled; waited += 20) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 200));
    expect(engine.activity.metricsSettled).toBe(settled);
    expect(inlineRows(engine, metric)).toEqual([settled === 1 ? 1 : points]);
    engine.readCache.invalidate([metric.id]);
    expect(await engine.getMeasures(metric, { method: 'mean' })).toEqual(before);
    await engine.close();
  });
});

describe('settling between updates', () => {
  it.each([1, 2, 3])('reads the same as never settling, pushes in any order within the hour (seed %i)', async (seed) => {
    const engine = await openEngine();
    const settled = await newMetric(engine);
    const plain = await newMetric(engine);
    const rand = random(seed);
    const policy = (await engine.index.getPolicy('p'))!;
    const all = pushes(7300, rand, seed > 1);
    let settles = 0;
    for (const points of all) {
      await push(engine, settled, points);
      await push(engine, plain, points);
      if (rand() < 0.5) settles += (await processJobs(engine.drivers, [{ metricId: settled.id, policy, refs: [], settle: 1 + Math.floor(rand() * 20) }], LEASE)).length;
    }
    expect(settles).toBeGreaterThan(all.length / 3);
    engine.readCache.invalidate([settled.id, plain.id]);
    expect(await readAll(engine, settled)).toEqual(await readAll(engine, plain));
    await engine.close();
  });
});
