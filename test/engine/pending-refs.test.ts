// The processor's packed pending refs: each metric's refs stay in seq order
// whatever order they are noted in, a release drops a prefix and reports the
// seqs of the records it emptied, and slots freed are used again.
import { describe, expect, it } from 'vitest';
import type { IncomingEntries } from '../../engine/incoming-batch.js';
import { KEPT_SLOTS, PendingRefs } from '../../engine/pending-refs.js';

/** A record's entries: [metric id, offset, count, oldest, newest] each. */
function entries(...refs: [metricId: string, offset: number, count: number, oldest: number, newest: number][]): IncomingEntries {
  return {
    metricIds: refs.map((r) => r[0]),
    offsets: Uint32Array.from(refs, (r) => r[1]),
    counts: Uint32Array.from(refs, (r) => r[2]),
    oldest: Float64Array.from(refs, (r) => r[3]),
    newest: Float64Array.from(refs, (r) => r[4]),
  };
}

/** Notes one point of `metricId` in record `seq` (offset = seq, oldest = newest = 10 * seq, notedAt = seq). */
function note(pending: PendingRefs, metricId: string, seq: number): void {
  pending.add(seq, seq, entries([metricId, seq, 1, 10 * seq, 10 * seq]));
}

/** Notes records of one ref each. */
function noted(...refs: [metricId: string, seq: number][]): PendingRefs {
  const pending = new PendingRefs();
  for (const [id, seq] of refs) note(pending, id, seq);
  return pending;
}

/** A metric's first `n` refs as copyRefs writes them into a job's columns, read back as objects. */
function refsOf(pending: PendingRefs, id: string, n = Infinity): { seq: number; offset: number; count: number }[] {
  // Room before and after the refs: copyRefs must write only its own.
  const at = 3;
  const out = new Float64Array(3 * (pending.window(id).length + 2)).fill(-1);
  const copied = pending.copyRefs(id, n, out, at);
  expect([out[at - 1], out[at + 3 * copied]]).toEqual([-1, -1]);
  return Array.from({ length: copied }, (_, r) => ({ seq: out[at + 3 * r]!, offset: out[at + 3 * r + 1]!, count: out[at + 3 * r + 2]! }));
}

const seqsOf = (pending: PendingRefs, id: string) => refsOf(pending, id).map((r) => r.seq);

describe('PendingRefs', () => {
  it.each<[string, number[], number[]]>([
    ['in order', [1, 2, 3], [1, 2, 3]],
    ['before the first', [5, 6, 2], [2, 5, 6]],
    ['in the middle', [1, 4, 9, 3, 5], [1, 3, 4, 5, 9]],
    ['equal seqs after those noted', [1, 3, 3, 2], [1, 2, 3, 3]],
  ])('keeps a metric\'s refs in seq order when noted %s', (_case, order, expected) => {
    const pending = noted(...order.map((seq): [string, number] => ['m', seq]), ['other', 4]);
    expect(seqsOf(pending, 'm')).toEqual(expected);
    expect(pending.window('m').map((r) => [r.seq, r.oldest, r.newest, r.notedAt])).toEqual(expected.map((s) => [s, 10 * s, 10 * s, s]));
    expect(seqsOf(pending, 'other')).toEqual([4]);
  });

  // Rows of metrics whose refs are all released stay for their next refs (up to a bound, past which they go): never seen as pending.
  it.each<[string, number]>([
    ['a few', 5],
    ['more than the idle rows kept', 70_000],
  ])('answers only the metrics with refs once %s metrics were released and some noted again', (_case, n) => {
    const ids = Array.from({ length: n }, (_, i) => `m${i}`);
    const pending = new PendingRefs();
    pending.add(1, 1, entries(...ids.map((id): [string, number, number, number, number] => [id, 1, 1, 10, 10])));
    pending.add(2, 2, entries([ids[0]!, 2, 1, 20, 20]));
    for (const id of ids) pending.release(id, 1);
    expect([pending.size, pending.has(ids[0]!), pending.has(ids[1]!), [...pending.metricIds()]]).toEqual([1, true, false, [ids[0]]]);
    for (const id of ids.slice(1)) pending.release(id);
    pending.add(3, 3, entries([ids[1]!, 3, 2, 30, 31], [ids[2]!, 3, 1, 30, 30]));
    expect([pending.size, pending.measures, [...pending.metricIds()].sort()]).toEqual([3, 4, [ids[0], ids[1], ids[2]].sort()]);
    expect(pending.window(ids[1]!).map((r) => [r.seq, r.oldest, r.newest])).toEqual([[3, 30, 31]]);
    expect(seqsOf(pending, ids[0]!)).toEqual([2]);
    expect(pending.release(ids[n - 1]!)).toBe(0);
    for (const id of ids.slice(0, 3)) pending.release(id);
    expect([pending.size, pending.measures, [...pending.metricIds()], pending.has(ids[1]!)]).toEqual([0, 0, [], false]);
    pending.add(4, 4, entries([ids[1]!, 4, 1, 40, 40]));
    expect([pending.size, seqsOf(pending, ids[1]!)]).toEqual([1, [4]]);
  });

  // The arrays window answers are kept per length (and one shared past a bound): asked in turn, each answers its own metric's refs.
  it('answers each metric its own window, metrics of different numbers of refs asked in turn', () => {
    const counts: Record<string, number> = { one: 1, three: 3, many: 200, none: 0, two: 2 };
    const pending = new PendingRefs();
    for (const [id, n] of Object.entries(counts)) for (let seq = 1; seq <= n; seq++) note(pending, id, seq);
    for (const id of ['three', 'one', 'many', 'two', 'three', 'none', 'many', 'one', 'two']) {
      const window = pending.window(id);
      expect(window.map((r) => [r.seq, r.notedAt]), id).toEqual(Array.from({ length: counts[id]! }, (_, i) => [i + 1, i + 1]));
    }
  });

  // Records of a collector name the same metrics in the same order: each entry's row is tried first from the record before.
  it.each<[string, string[][]]>([
    ['the same metrics in the same order', [['a', 'b', 'c'], ['a', 'b', 'c'], ['a', 'b', 'c']]],
    ['the metrics in another order', [['a', 'b', 'c'], ['c', 'a', 'b'], ['b', 'c', 'a']]],
    ['fewer, then more metrics', [['a', 'b', 'c'], ['b'], ['c', 'b', 'a', 'd', 'e']]],
    ['a metric released between records, its row taken by another', [['a', 'b'], ['release a'], ['c', 'b'], ['a', 'c', 'b']]],
    ['every metric released between records', [['a', 'b'], ['release a'], ['release b'], ['b', 'a'], ['a', 'b']]],
  ])('files each ref under its own metric, records naming %s', (_case, records) => {
    const pending = new PendingRefs();
    const expected = new Map<string, number[]>();
    records.forEach((ids, seq) => {
      const released = /^release (.+)$/.exec(ids[0]!)?.[1];
      if (released !== undefined) {
        pending.release(released);
        expected.delete(released);
        return;
      }
      pending.add(seq, seq, entries(...ids.map((id): [string, number, number, number, number] => [id, seq, 1, seq, seq])));
      for (const id of ids) expected.set(id, [...(expected.get(id) ?? []), seq]);
    });
    expect(Object.fromEntries([...pending.metricIds()].map((id) => [id, seqsOf(pending, id)]))).toEqual(Object.fromEntries(expected));
    expect(pending.size).toBe(expected.size);
  });

  it('gives a metric\'s first refs with their offsets and counts', () => {
    const pending = new PendingRefs();
    pending.add(1, 0, entries(['m', 40, 2, 0, 0]));
    pending.add(2, 0, entries(['m', 80, 3, 0, 0]));
    expect(refsOf(pending, 'm', 1)).toEqual([{ seq: 1, offset: 40, count: 2 }]);
    expect(pending.measuresOf('m')).toBe(5);
    expect(refsOf(pending, 'none')).toEqual([]);
  });

  it('releases a prefix up to a seq, counting the measures and telling each record emptied', () => {
    const pending = noted(['m', 1], ['m', 2], ['m', 5], ['n', 2]);
    const told: number[] = [];
    expect(pending.release('m', 2, (seq) => told.push(seq))).toBe(2);
    expect(told).toEqual([1, 2]);
    expect(seqsOf(pending, 'm')).toEqual([5]);
    expect(pending.measures).toBe(2);
    // Noted after the release: appended behind the new first ref.
    note(pending, 'm', 7);
    expect(seqsOf(pending, 'm')).toEqual([5, 7]);
    expect(pending.release('m')).toBe(2);
    expect(pending.has('m')).toBe(false);
    expect([...pending.metricIds()]).toEqual(['n']);
    expect(pending.release('m')).toBe(0);
  });

  it('tells a record emptied once the last of its metrics releases it', () => {
    const pending = new PendingRefs();
    pending.add(1, 5, entries(['a', 4, 1, 10, 10], ['b', 40, 2, 20, 30]));
    pending.add(2, 6, entries(['a', 4, 1, 40, 40]));
    expect(pending.window('b').map((r) => [r.seq, r.oldest, r.newest, r.notedAt])).toEqual([[1, 20, 30, 5]]);
    expect(pending.window('a').map((r) => [r.seq, r.notedAt])).toEqual([[1, 5], [2, 6]]);
    const told: number[] = [];
    pending.release('a', 1, (seq) => told.push(seq));
    expect(told, 'b still has points in record 1').toEqual([]);
    pending.release('b', Infinity, (seq) => told.push(seq));
    expect(told).toEqual([1]);
    pending.release('a', Infinity, (seq) => told.push(seq));
    expect(told).toEqual([1, 2]);
    expect([pending.size, pending.measures]).toEqual([0, 0]);
  });

  it('grows past its first pages, reuses released slots, and empties', () => {
    const pending = new PendingRefs();
    const n = 10_000;
    const ids = Array.from({ length: n }, (_, i) => `m${i}`);
    for (const [i, id] of ids.entries()) pending.add(i, 0, entries([id, i, 1, 0, 0]));
    for (const id of ids.slice(0, n / 2)) pending.release(id);
    for (const [i, id] of ids.entries()) pending.add(n + i, 0, entries([id, n + i, 1, 0, 0]));
    expect(pending.size).toBe(n);
    expect(pending.measures).toBe(1.5 * n);
    expect(seqsOf(pending, 'm0')).toEqual([n]);
    expect(refsOf(pending, `m${n - 1}`)).toEqual([
      { seq: n - 1, offset: n - 1, count: 1 },
      { seq: 2 * n - 1, offset: 2 * n - 1, count: 1 },
    ]);
    for (const id of ids) pending.release(id);
    expect([pending.size, pending.measures]).toEqual([0, 0]);
    note(pending, 'again', 1);
    expect(seqsOf(pending, 'again')).toEqual([1]);
  });

  it('keeps KEPT_SLOTS once a burst larger than them is released', () => {
    const pending = new PendingRefs();
    const n = 3 * KEPT_SLOTS;
    for (let i = 0; i < n; i++) note(pending, `m${i % 100}`, i);
    expect(pending.capacity).toBeGreaterThanOrEqual(n);
    for (let i = 0; i < 99; i++) pending.release(`m${i}`);
    expect(pending.capacity, 'refs remain').toBeGreaterThanOrEqual(n);
    pending.release('m99');
    expect(pending.capacity).toBe(KEPT_SLOTS);
    note(pending, 'again', 1);
    expect(seqsOf(pending, 'again')).toEqual([1]);
  });
});
