// withSnapshot: a computation that reads splits its load did not ask for
// runs again on a snapshot loaded with them, and only a miss does.
import { describe, expect, it } from 'vitest';
import { withSnapshot } from '../../../engine/drivers/snapshot-rounds.js';
import type { SeriesRange, SeriesSnapshot, SeriesStore, SplitKeyTuple } from '../../../engine/drivers/types.js';
import { BadRequest, SnapshotMiss } from '../../../engine/errors.js';

/** A store holding split keys 0..9 of metric m at granularity 1, whose snapshots miss every split outside the ranges loaded. */
function store(): SeriesStore & { loads: (readonly SeriesRange[])[]; released: number } {
  const s = {
    loads: [] as (readonly SeriesRange[])[],
    released: 0,
    async load(_ids: readonly string[], ranges: readonly SeriesRange[] = []): Promise<SeriesSnapshot> {
      s.loads.push(ranges);
      const has = (key: SplitKeyTuple) => ranges.some((r) => r.metricId === key[0] && r.granularity === key[1] && key[2] >= r.start && key[2] < r.end);
      return {
        state: () => undefined,
        chunkKeys: () => [],
        chunks: () => [],
        chunk: () => undefined,
        lastChunk: () => undefined,
        splitKeys: () => [],
        split: (key) => {
          if (!has(key)) throw new SnapshotMiss([key]);
          return Buffer.from(`split ${key[2]}`);
        },
        release: () => void s.released++,
      };
    },
    async commit() {},
    async drop() {},
  };
  return s;
}

const reading = (keys: number[]) => (snapshot: SeriesSnapshot) => keys.map((k) => snapshot.split(['m', 1, k])!.toString()).join(',');

describe('withSnapshot', () => {
  it.each([
    ['everything loaded at once', [{ metricId: 'm', granularity: 1, start: 0, end: 10 }], [2, 3], 1],
    ['one split missed: a second round', [{ metricId: 'm', granularity: 1, start: 0, end: 3 }], [2, 5], 2],
    ['nothing asked: a round per split missed', [], [1, 4, 7], 4],
  ])('%s', async (_name, ranges, keys, rounds) => {
    const s = store();
    expect(await withSnapshot(s, ['m'], ranges, reading(keys))).toBe(keys.map((k) => `split ${k}`).join(','));
    expect(s.loads).toHaveLength(rounds);
    expect(s.released).toBe(rounds);
  });

  it('passes any other error through after one round', async () => {
    const s = store();
    await expect(withSnapshot(s, ['m'], [], () => { throw new BadRequest('no'); })).rejects.toThrow(BadRequest);
    expect(s.loads).toHaveLength(1);
    expect(s.released).toBe(1);
  });

  it('gives up on a computation that misses without end', async () => {
    const s = store();
    let k = 0;
    await expect(withSnapshot(s, ['m'], [], (snapshot) => snapshot.split(['m', 1, 100 + k++]))).rejects.toThrow(SnapshotMiss);
    expect(s.loads).toHaveLength(8);
  });
});
