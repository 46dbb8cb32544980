// Decoded sealed splits kept for reads (engine/decoded-splits.ts): an entry
// serves only a read that finds exactly the bytes it was decoded from, so a
// split rewritten after it was decoded (a late point merged into it) reads
// afresh; random entries go once the budget is spent.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DecodedSplitCache } from '../../engine/decoded-splits.js';
import { Engine } from '../../engine/engine.js';
import type { Series } from '../../engine/aggregation.js';

const split = (n: number): Series => ({ timestamps: new Float64Array(n), values: new Float64Array(n) });
const bytes = (...b: number[]) => Uint8Array.from(b);

describe('DecodedSplitCache', () => {
  it('serves an entry only for the very bytes it was decoded from', () => {
    const cache = new DecodedSplitCache(1024 ** 2);
    const data = split(3);
    cache.set('a', bytes(1, 2, 3), data);
    expect(cache.get('a', bytes(1, 2, 3))).toBe(data);
    expect(cache.get('a', bytes(1, 2, 4))).toBeUndefined();
    expect(cache.get('a', bytes(1, 2))).toBeUndefined();
    expect(cache.get('b', bytes(1, 2, 3))).toBeUndefined();
  });

  it('keeps its own copy of the bytes (read buffers are reused)', () => {
    const cache = new DecodedSplitCache(1024 ** 2);
    const encoded = bytes(1, 2, 3);
    cache.set('a', encoded, split(1));
    encoded[0] = 9;
    expect(cache.get('a', bytes(1, 2, 3))).toBeDefined();
  });

  it('evicts random entries past its budget, as many as a larger entry needs, and keeps nothing with a budget of 0', () => {
    const one = 3 + 16 * 10 + 1;
    const picks = [0.99, 0];
    const cache = new DecodedSplitCache(3 * one, () => picks.shift() ?? 0);
    for (const id of ['a', 'b', 'c']) cache.set(id, bytes(1, 2, 3), split(10));
    // Room for one more: the entry drawn (the last slot) goes.
    cache.set('d', bytes(1, 2, 3), split(10));
    const kept = () => ['a', 'b', 'c', 'd', 'e'].filter((id) => cache.get(id, bytes(1, 2, 3)) !== undefined);
    expect(kept()).toEqual(['a', 'b', 'd']);
    expect(cache.bytes).toBe(3 * one);
    // Twice the size: two go (slot 0 each time).
    cache.set('e', bytes(1, 2, 3), split(20));
    expect(kept()).toEqual(['b', 'e']);
    expect(cache.bytes).toBe(2 * one + 16 * 10);
    const none = new DecodedSplitCache(0);
    none.set('a', bytes(1), split(1));
    expect(none.get('a', bytes(1))).toBeUndefined();
  });

  it('keeps its byte count exact through replacements and evictions', () => {
    const cache = new DecodedSplitCache(10_000);
    for (let i = 0; i < 500; i++) cache.set(`k${i % 37}`, bytes(i % 7), split(1 + (i % 13)));
    let expected = 0;
    for (let k = 0; k < 37; k++) {
      for (let b = 0; b < 7; b++) {
        const hit = cache.get(`k${k}`, bytes(b));
        if (hit !== undefined) expected += 1 + 16 * hit.timestamps.length + `k${k}`.length;
      }
    }
    expect(cache.bytes).toBe(expected);
    expect(cache.bytes).toBeLessThanOrEqual(10_000);
  });
});

const S = 1_000_000;
const T0 = Date.UTC(2024, 0, 1) * 1000;

describe('reads through the decoded split cache', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('see a late point merged into a split they decoded before', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-decoded-'));
    dirs.push(dataDir);
    const engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9, splitCacheSize: 1024 ** 2 });
    await engine.processor.stop();
    // A back window of one 1 h block: points up to an hour late are merged into sealed splits.
    await engine.index.createPolicy({
      name: 'p',
      backWindow: 1,
      definition: [{ granularity: S, points: 100_000, timespan: 100_000 * S }, { granularity: 3600 * S, points: 10, timespan: 36_000 * S }],
      aggregationMethods: ['mean'],
    });
    const metric = await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null });
    const push = async (seconds: number[]) => {
      const timestamps = Float64Array.from(seconds, (s) => T0 + s * S);
      await engine.addMeasures(new Map([[metric.id, { timestamps, values: Float64Array.from(seconds) }]]));
      await engine.refresh([metric.id]);
    };
    const firstHour = async () => {
      const [fine] = await engine.getMeasures(metric, { method: 'mean', granularity: S, stop: T0 + 3600 * S });
      return [...fine!.values];
    };
    // Even seconds of the first hour and a bit of the second: the first split is sealed.
    await push(Array.from({ length: 1900 }, (_, i) => 2 * i));
    expect(await firstHour()).toHaveLength(1800);
    expect(await firstHour()).toHaveLength(1800);
    expect(engine.decodedSplits.bytes).toBeGreaterThan(0);
    await push([101]);
    const after = await firstHour();
    expect(after).toHaveLength(1801);
    expect(after).toContain(101);
    await engine.close();
  });
});
