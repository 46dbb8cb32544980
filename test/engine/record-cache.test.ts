// A thread's cache of incoming records: each batch of a push's metrics used
// to read the whole record again. Records kept are answered in seq order
// without the log, copied out of the log's short-lived buffer, within a
// byte bound that pushes out the least recently used, never one the same
// fetch needs.
import { describe, expect, it } from 'vitest';
import type { IncomingLog } from '../../engine/drivers/types.js';
import { encodeIncomingPoints } from '../../engine/incoming-batch.js';
import { packRecordPoints } from '../../engine/packed-record.js';
import { RecordCache, recordCacheBytes, STALE_FETCHES, type Packing } from '../../engine/record-cache.js';

/** A log of records of `size` bytes filled with their seq, answered through one buffer reused at every visit. */
function fakeLog(size: (seq: number) => number): { log: IncomingLog; reads: number[] } {
  const reads: number[] = [];
  const shared = Buffer.alloc(1024);
  const fetch: IncomingLog['fetch'] = async (_shard, seqs, visit) => {
    for (const seq of seqs) {
      reads.push(seq);
      const bytes = shared.subarray(0, size(seq)).fill(seq);
      visit(seq, bytes);
      bytes.fill(0);
    }
  };
  return { log: { fetch } as IncomingLog, reads };
}

async function fetched(cache: RecordCache, log: IncomingLog, seqs: number[]): Promise<[number, number[]][]> {
  const out: [number, number[]][] = [];
  await cache.fetch(log, 0, seqs, (seq, bytes) => out.push([seq, [...new Set(bytes)]]));
  return out;
}

describe('RecordCache', () => {
  it('reads a record once, answers it again in seq order, with bytes that outlive the log\'s buffer', async () => {
    const { log, reads } = fakeLog(() => 10);
    const cache = new RecordCache(100);
    expect(await fetched(cache, log, [2])).toEqual([[2, [2]]]);
    expect(await fetched(cache, log, [1, 2, 3])).toEqual([[1, [1]], [2, [2]], [3, [3]]]);
    expect(reads).toEqual([2, 1, 3]);
    expect(cache.size).toBe(30);
  });

  it.each<[string, number[][], number[]]>([
    // 10-byte records in a 40-byte bound: four fit.
    ['the least recently used goes first', [[1, 2, 3, 4], [1], [5], [1, 2]], [1, 2, 3, 4, 5, 2]],
    ['a fetch past the bound keeps its first records, pushing out none of its own', [[1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6]], [1, 2, 3, 4, 5, 6, 5, 6]],
    ['a record above a quarter of the bound is never kept', [[9], [9]], [9, 9]],
  ])('%s', async (_case, rounds, expectedReads) => {
    const { log, reads } = fakeLog((seq) => (seq === 9 ? 11 : 10));
    const cache = new RecordCache(40);
    for (const seqs of rounds) await fetched(cache, log, seqs);
    expect(reads).toEqual(expectedReads);
    expect(cache.size).toBeLessThanOrEqual(40);
  });

  it('visits a record it cannot keep while the log\'s bytes are valid, in seq order among the kept ones', async () => {
    const { log, reads } = fakeLog((seq) => (seq === 9 ? 11 : 10));
    const cache = new RecordCache(40);
    await fetched(cache, log, [1, 8]);
    expect(await fetched(cache, log, [1, 5, 8, 9, 10])).toEqual([[1, [1]], [5, [5]], [8, [8]], [9, [9]], [10, [10]]]);
    expect(reads).toEqual([1, 8, 5, 9, 10]);
    expect(cache.size).toBe(40);
  });

  it('lets go of a record no fetch asked for in STALE_FETCHES', async () => {
    const { log, reads } = fakeLog(() => 10);
    const cache = new RecordCache(100);
    await fetched(cache, log, [1, 2]);
    for (let i = 1; i < STALE_FETCHES; i++) await fetched(cache, log, [2]);
    expect(cache.size).toBe(20);
    await fetched(cache, log, [2]);
    expect(cache.size).toBe(10);
    await fetched(cache, log, [1]);
    expect(reads).toEqual([1, 2, 1]);
  });

  it('keeps shards apart', async () => {
    const { log, reads } = fakeLog(() => 10);
    const cache = new RecordCache(100);
    await cache.fetch(log, 0, [1], () => undefined);
    await cache.fetch(log, 1, [1], () => undefined);
    await cache.fetch(log, 1, [1], () => undefined);
    expect(reads).toEqual([1, 1]);
  });

  it('never overwrites the records a fetch still under way found, to keep those of another', async () => {
    const { log, reads } = fakeLog(() => 10);
    const cache = new RecordCache(40);
    await fetched(cache, log, [1, 2, 3, 4]);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = {
      fetch: async (shard, seqs, visit) => {
        await held;
        await log.fetch(shard, seqs, visit);
      },
    } as IncomingLog;
    // The first fetch finds 1 and 2 kept, then waits on the log for 5; the
    // second makes room for 6 and 7 by pushing out 3 and 4 only.
    const first = fetched(cache, slow, [1, 2, 5]);
    expect(await fetched(cache, log, [6, 7, 8])).toEqual([[6, [6]], [7, [7]], [8, [8]]]);
    release();
    expect(await first).toEqual([[1, [1]], [2, [2]], [5, [5]]]);
    expect(reads).toEqual([1, 2, 3, 4, 6, 7, 8, 5]);
    expect(await fetched(cache, log, [1, 2, 6, 7])).toHaveLength(4);
    expect(reads).toHaveLength(8);
  });

  it('keeps one copy of a record two fetches under way both missed', async () => {
    const { log, reads } = fakeLog(() => 10);
    const later = { fetch: async (shard, seqs, visit) => (await null, log.fetch(shard, seqs, visit)) } as IncomingLog;
    const cache = new RecordCache(40);
    const both = await Promise.all([fetched(cache, later, [1]), fetched(cache, later, [1])]);
    expect(both).toEqual([[[1, [1]]], [[1, [1]]]]);
    expect(reads).toEqual([1, 1]);
    expect(cache.size).toBe(10);
    // Its room is given back with it: four more fit once it is pushed out.
    await fetched(cache, log, [2, 3, 4, 5]);
    expect(cache.size).toBe(40);
  });

  it('lets every record go on release, and reads them from the log again after', async () => {
    const { log, reads } = fakeLog(() => 10);
    const cache = new RecordCache(100);
    await fetched(cache, log, [1, 2]);
    expect(cache.release()).toBe(true);
    expect(cache.size).toBe(0);
    expect(await fetched(cache, log, [1, 2])).toEqual([[1, [1]], [2, [2]]]);
    expect(reads).toEqual([1, 2, 1, 2]);
    expect(cache.size).toBe(20);
  });

  it('keeps its records on release while a fetch is under way', async () => {
    const { log } = fakeLog(() => 10);
    const cache = new RecordCache(100);
    await fetched(cache, log, [1]);
    let resume!: () => void;
    const held = new Promise<void>((resolve) => (resume = resolve));
    const slow = { fetch: async (shard, seqs, visit) => (await held, log.fetch(shard, seqs, visit)) } as IncomingLog;
    const under = fetched(cache, slow, [1, 2]);
    expect(cache.release()).toBe(false);
    resume();
    expect(await under).toEqual([[1, [1]], [2, [2]]]);
    expect(cache.size).toBe(20);
  });

  it('skips records the log no longer holds', async () => {
    const log = { fetch: async () => undefined } as unknown as IncomingLog;
    const cache = new RecordCache(100);
    expect(await fetched(cache, log, [1, 2])).toEqual([]);
    expect(cache.size).toBe(0);
  });
});

describe('RecordCache with a packing', () => {
  // Packed to their first 4 bytes: processing keeps a record's points without its ids.
  const firstFour: Packing = (record) => ({ length: 4, write: (into) => into.set(record.subarray(0, 4)) });

  it('looks at a record it keeps once to pack it (finding its layout walks all its entries)', async () => {
    const { log } = fakeLog(() => 10);
    const looked: number[] = [];
    const cache = new RecordCache(16, (record) => (looked.push(record[0]!), firstFour(record)));
    await cache.fetch(log, 0, [1, 2, 3], () => undefined);
    await cache.fetch(log, 0, [1, 2, 3], () => undefined);
    expect(looked).toEqual([1, 2, 3]);
  });

  it('keeps records packed, counts their packed bytes against the bound, and says which bytes a visit gets', async () => {
    // 10-byte records, 4 packed, in a 16-byte bound: four kept where only one fits as read.
    const { log, reads } = fakeLog(() => 10);
    const cache = new RecordCache(16, firstFour);
    const visits: [number, number, boolean][] = [];
    const visit = (seq: number, bytes: Uint8Array, packed: boolean) => visits.push([seq, bytes.length, packed]);
    await cache.fetch(log, 0, [1, 2, 3, 4], visit);
    await cache.fetch(log, 0, [1, 2, 3, 4], visit);
    expect(reads).toEqual([1, 2, 3, 4]);
    expect(cache.size).toBe(16);
    expect(visits).toEqual([1, 2, 3, 4, 1, 2, 3, 4].map((seq) => [seq, 4, true]));
  });

  it('visits a record it cannot keep as read, unpacked', async () => {
    const { log } = fakeLog(() => 10);
    // Four packed records fill the bound: the fetch's fifth pushes none of them out.
    const cache = new RecordCache(16, firstFour);
    const visits: [number, number, number[], boolean][] = [];
    await cache.fetch(log, 0, [1, 2, 3, 4, 5], (seq, bytes, packed) => visits.push([seq, bytes.length, [...new Set(bytes)], packed]));
    expect(visits).toEqual([[1, 4, [1], true], [2, 4, [2], true], [3, 4, [3], true], [4, 4, [4], true], [5, 10, [5], false]]);
  });
});

describe('RecordCache sized for the backlog', () => {
  it.each<[string, number, number]>([
    ['the default --max-backlog: 5M measures at 8 bytes, a time-major push\'s packed value each', 5_000_000, 40_000_000],
    ['a smaller bound', 100_000, 800_000],
    ['no bound: as for the default', 0, 40_000_000],
  ])('%s', (_case, maxBacklog, bytes) => {
    expect(recordCacheBytes(maxBacklog)).toBe(bytes);
  });

  it('holds a time-major backlog of 300 pushes of 10,000 metrics: each push read once however many batches need it', async () => {
    // One push's record, answered for every seq: 10,000 metrics of one point at one time.
    const n = 10_000;
    const { bytes } = encodeIncomingPoints({
      metricIds: Array.from({ length: n }, (_, i) => `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`),
      start: Uint32Array.from({ length: n }, (_, i) => i),
      count: new Uint32Array(n).fill(1),
      timestamps: new Float64Array(n).fill(1.7e15),
      values: Float64Array.from({ length: n }, (_, i) => i),
    });
    const reads: number[] = [];
    const log = {
      fetch: async (_shard, seqs, visit) => {
        for (const seq of seqs) {
          reads.push(seq);
          visit(seq, bytes);
        }
      },
    } as IncomingLog;
    const cache = new RecordCache(recordCacheBytes(5_000_000), packRecordPoints);
    const backlog = Array.from({ length: 300 }, (_, i) => i + 1);
    // The 40 batches of 256 metrics of a pass over the backlog, each fetching every push.
    for (let batch = 0; batch < 40; batch++) await cache.fetch(log, 0, backlog, () => undefined);
    expect(reads).toEqual(backlog);
    expect(cache.size).toBe(300 * packRecordPoints(bytes).length);
  });
});
