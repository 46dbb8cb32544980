// The contract every driver set keeps, run alike against each implementation
// (LMDB, the embedded default; Redis, for clusters, with sealed splits in it
// or in an object store: Ceph RGW, Swift's s3api): incoming records come
// back in seq order and seqs never go back, series records round-trip through
// load and commit, a deleted metric is never written again, and a snapshot is
// one consistent view.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IncomingLog, SeriesRange, SeriesSnapshot, Shard } from '../../../engine/drivers/types.js';
import { WriteQueue } from '../../../engine/record-writes.js';
import { IMPLEMENTATIONS, type Subject } from './subjects.js';

const G = 60_000_000;
const SPAN = G * 3600;
const MAX = Number.MAX_SAFE_INTEGER;

const bytes = (text: string) => Buffer.from(text);
const text = (value: Uint8Array | undefined) => (value === undefined ? undefined : Buffer.from(value).toString());

/** A fresh metric id whose shard is `shard`. */
function idInShard(incoming: IncomingLog, shard: Shard): string {
  for (;;) {
    const id = randomUUID();
    if (incoming.shardOf(id) === shard) return id;
  }
}

async function scanned(incoming: IncomingLog, shard: Shard, after?: number): Promise<[number, string][]> {
  const out: [number, string][] = [];
  await incoming.scan(shard, (seq, value) => out.push([seq, text(value)!]), after);
  return out;
}

const whole = (metricId: string, granularity: number): SeriesRange => ({ metricId, granularity, start: -Number.MAX_VALUE, end: MAX });

/** What a snapshot holds of a metric at two granularities, as text. */
function contents(snapshot: SeriesSnapshot, id: string) {
  return {
    state: text(snapshot.state(id)),
    tail: snapshot.chunks(whole(id, 0)).map(({ key, value }) => [key[2], text(value)]),
    splits: [...snapshot.splitKeys(whole(id, G))].map((key) => [key[2], text(snapshot.split(key))]),
  };
}

for (const impl of IMPLEMENTATIONS) {
  describe.skipIf(impl.missing !== undefined)(impl.missing ?? `${impl.name} drivers`, { timeout: 60_000 }, () => {
    let s: Subject;
    // Opening a subject may start an object store first (Ceph: ~20 s, more on a busy machine).
    beforeEach(async () => {
      s = await impl.open();
    }, 180_000);
    afterEach(async () => {
      await s.close();
    });
    afterAll(async () => {
      await impl.shutdown?.();
    });

    it('give records back in seq order, by scan and by fetch, until dropped', async () => {
      const shards = Math.min(2, s.incoming.shards);
      const pushes = [];
      for (const name of ['a', 'b', 'c']) {
        pushes.push(await s.incoming.append(new Map(Array.from({ length: shards }, (_, shard) => [shard, bytes(`${name}${shard}`)]))));
      }
      for (let shard = 0; shard < shards; shard++) {
        const [a, b, c] = pushes.map((seqs) => seqs.get(shard)!);
        expect(a).toBeLessThan(b!);
        expect(b).toBeLessThan(c!);
        expect(await scanned(s.incoming, shard)).toEqual([[a, `a${shard}`], [b, `b${shard}`], [c, `c${shard}`]]);
        expect(await scanned(s.incoming, shard, a)).toEqual([[b, `b${shard}`], [c, `c${shard}`]]);
        expect(await scanned(s.incoming, shard, c)).toEqual([]);
        expect(await s.incoming.head(shard)).toBeGreaterThanOrEqual(c!);
        await s.incoming.drop(shard, b!);
        expect(await scanned(s.incoming, shard)).toEqual([[a, `a${shard}`], [c, `c${shard}`]]);
        const fetched: [number, string][] = [];
        await s.incoming.fetch(shard, [a!, b!, c!], (seq, value) => fetched.push([seq, text(value)!]));
        expect(fetched).toEqual([[a, `a${shard}`], [c, `c${shard}`]]);
      }
    });

    it('keep the greatest seq a shard\'s holder was hurried to', async () => {
      const shards = Math.min(2, s.incoming.shards);
      expect(await s.incoming.hurried()).toEqual(new Map());
      await s.incoming.hurry(0, 5);
      await s.incoming.hurry(0, 3);
      await s.incoming.hurry(shards - 1, 9);
      expect(await s.incoming.hurried()).toEqual(new Map([[0, shards === 1 ? 9 : 5], [shards - 1, 9]]));
    });

    it('never give a seq again after a restart', async () => {
      const before = (await s.incoming.append(new Map([[0, bytes('before')]]))).get(0)!;
      await s.incoming.drop(0, before);
      await s.restart();
      const after = (await s.incoming.append(new Map([[0, bytes('after')]]))).get(0)!;
      expect(after).toBeGreaterThan(before);
      expect(await scanned(s.incoming, 0)).toEqual([[after, 'after']]);
    });

    it('find a range\'s last chunk, its bounds as chunkKeys has them, other granularities and metrics aside', async () => {
      const id = idInShard(s.incoming, 0);
      const other = idInShard(s.incoming, 0);
      await s.createMetric(id);
      await s.createMetric(other);
      const lease = await s.lease(0);
      const w = new WriteQueue();
      for (const at of [SPAN, SPAN + 10 * G, 2 * SPAN]) w.put('chunk', [id, G, at], bytes(`chunk ${at / G}`));
      w.put('chunk', [id, 5 * G, SPAN + 20 * G], bytes('coarser'));
      w.put('chunk', [id, 0, SPAN + 30 * G], bytes('tail'));
      const o = new WriteQueue();
      o.put('chunk', [other, G, SPAN + 40 * G], bytes('other'));
      await s.series.commit(lease, [{ metricId: id, writes: w }, { metricId: other, writes: o }]);
      const snapshot = await s.series.load([id, other]);
      const last = (start: number, end: number) => {
        const found = snapshot.lastChunk({ metricId: id, granularity: G, start, end });
        return found === undefined ? undefined : [found.key, text(found.value)];
      };
      const cases: [number, number, unknown][] = [
        [SPAN, 2 * SPAN, [[id, G, SPAN + 10 * G], 'chunk 3610']],
        [SPAN, SPAN + 10 * G, [[id, G, SPAN], 'chunk 3600']],
        [SPAN + 10 * G, 2 * SPAN + 1, [[id, G, 2 * SPAN], 'chunk 7200']],
        [SPAN + 11 * G, 2 * SPAN, undefined],
        [0, SPAN, undefined],
      ];
      for (const [start, end, expected] of cases) expect(last(start, end)).toEqual(expected);
      snapshot.release();
    });

    it('round-trip states, chunks and sealed splits through commit and load', async () => {
      const id = idInShard(s.incoming, 0);
      await s.createMetric(id);
      const lease = await s.lease(0);
      const first = new WriteQueue();
      first.put('state', id, bytes('state 1'));
      first.put('chunk', [id, 0, 200], bytes('tail 200'));
      first.put('chunk', [id, 0, 100], bytes('tail 100'));
      first.put('chunk', [id, G, 5 * SPAN], bytes('open'));
      first.put('split', [id, G, 2 * SPAN], bytes('split 2'));
      first.put('split', [id, G, SPAN], bytes('split 1'));
      first.put('split', [id, 5 * G, SPAN], bytes('coarse'));
      await s.series.commit(lease, [{ metricId: id, writes: first }]);

      let snapshot = await s.series.load([id], [whole(id, G)]);
      expect(contents(snapshot, id)).toEqual({ state: 'state 1', tail: [[100, 'tail 100'], [200, 'tail 200']], splits: [[SPAN, 'split 1'], [2 * SPAN, 'split 2']] });
      expect([...snapshot.chunkKeys({ metricId: id, granularity: G, start: 5 * SPAN, end: 6 * SPAN })]).toEqual([[id, G, 5 * SPAN]]);
      expect(text(snapshot.chunk([id, G, 5 * SPAN]))).toBe('open');
      expect(snapshot.chunk([id, G, 4 * SPAN])).toBeUndefined();
      expect([...snapshot.splitKeys(whole(id, G), 1)]).toEqual([[id, G, SPAN]]);
      expect([...snapshot.splitKeys({ metricId: id, granularity: G, start: 2 * SPAN, end: MAX })]).toEqual([[id, G, 2 * SPAN]]);
      expect(snapshot.split([id, G, 3 * SPAN])).toBeUndefined();
      snapshot.release();

      const second = new WriteQueue();
      second.remove('state', id);
      second.put('state', id, bytes('state 2'));
      second.remove('chunk', [id, 0, 100]);
      second.remove('split', [id, G, SPAN]);
      second.put('split', [id, G, 2 * SPAN], bytes('split 2 merged'));
      await s.series.commit(lease, [{ metricId: id, writes: second }]);
      snapshot = await s.series.load([id], [whole(id, G)]);
      expect(contents(snapshot, id)).toEqual({ state: 'state 2', tail: [[200, 'tail 200']], splits: [[2 * SPAN, 'split 2 merged']] });
      snapshot.release();

      const third = new WriteQueue();
      third.remove('state', id);
      await s.series.commit(lease, [{ metricId: id, writes: third }]);
      snapshot = await s.series.load([id]);
      expect(snapshot.state(id)).toBeUndefined();
      snapshot.release();
    });

    it('commit a batch of several metrics whole', async () => {
      const ids = [idInShard(s.incoming, 0), idInShard(s.incoming, 0), idInShard(s.incoming, 0)];
      for (const id of ids) await s.createMetric(id);
      const batch = ids.map((id, i) => {
        const writes = new WriteQueue();
        writes.put('state', id, bytes(`state ${i}`));
        writes.put('split', [id, G, SPAN], bytes(`split ${i}`));
        return { metricId: id, writes };
      });
      await s.series.commit(await s.lease(0), batch);
      const snapshot = await s.series.load(ids, ids.map((id) => whole(id, G)));
      expect(ids.map((id) => contents(snapshot, id))).toEqual(ids.map((_, i) => ({ state: `state ${i}`, tail: [], splits: [[SPAN, `split ${i}`]] })));
      snapshot.release();
    });

    it('drop the writes of a metric deleted after its load, and write the others', async () => {
      const [gone, kept] = [idInShard(s.incoming, 0), idInShard(s.incoming, 0)];
      const lease = await s.lease(0);
      const writesOf = (id: string, value: string) => {
        const writes = new WriteQueue();
        writes.put('state', id, bytes(value));
        writes.put('chunk', [id, 0, 1], bytes(value));
        writes.put('split', [id, G, SPAN], bytes(value));
        return { metricId: id, writes };
      };
      for (const id of [gone, kept]) await s.createMetric(id);
      await s.series.commit(lease, [writesOf(gone, 'v1'), writesOf(kept, 'v1')]);
      (await s.series.load([gone, kept])).release();
      await s.deleteMetric(gone);
      await s.series.commit(lease, [writesOf(gone, 'v2'), writesOf(kept, 'v2')]);
      const snapshot = await s.series.load([gone, kept], [whole(gone, G), whole(kept, G)]);
      expect(contents(snapshot, gone)).toEqual({ state: undefined, tail: [], splits: [] });
      expect(contents(snapshot, kept)).toEqual({ state: 'v2', tail: [[1, 'v2']], splits: [[SPAN, 'v2']] });
      snapshot.release();
    });

    it('show every write of a commit in the next snapshot, or none', async () => {
      const id = idInShard(s.incoming, 0);
      await s.createMetric(id);
      const lease = await s.lease(0);
      const commits: Promise<void>[] = [];
      for (let v = 1; v <= 20; v++) {
        const writes = new WriteQueue();
        writes.put('state', id, bytes(`v${v}`));
        writes.put('chunk', [id, 0, 1], bytes(`v${v}`));
        writes.put('split', [id, G, SPAN], bytes(`v${v}`));
        commits.push(s.series.commit(lease, [{ metricId: id, writes }]));
      }
      const seen: ReturnType<typeof contents>[] = [];
      while (seen.length < 20) {
        const snapshot = await s.series.load([id], [whole(id, G)]);
        seen.push(contents(snapshot, id));
        snapshot.release();
      }
      await Promise.all(commits);
      for (const view of seen) {
        if (view.state === undefined) expect(view).toEqual({ state: undefined, tail: [], splits: [] });
        else expect(view).toEqual({ state: view.state, tail: [[1, view.state]], splits: [[SPAN, view.state]] });
      }
    });
  });
}
