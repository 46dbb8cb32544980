// The reorder window's rule: which pending pushes of a metric a processing
// round may take, and the cutoff that pushes still being handled move back.
// Times are ms; a push's points are given as [oldest, newest] timestamps.
import { describe, expect, it } from 'vitest';
import { PATIENCE_WINDOWS, RECEIVING_HOLD_MS, takeable, windowCutoff, worthSweeping, worthTaking, type WindowRef } from '../../engine/reorder-window.js';
import { prng } from '../reliability/harness.js';

const W = 100;
const NOW = 1_000;

/** Refs in seq order from [points, notedAt]: points one timestamp or [oldest, newest]. */
const refs = (...pushes: [number | [number, number], number][]): WindowRef[] =>
  pushes.map(([points, notedAt], i) => {
    const [oldest, newest] = typeof points === 'number' ? [points, points] : points;
    return { seq: i + 1, oldest, newest, notedAt };
  });

describe('takeable', () => {
  it.each<[string, WindowRef[], number, number]>([
    ['a push younger than the window waits', refs([10, 950]), NOW - W, 0],
    ['a push that has waited the window goes', refs([10, 900]), NOW - W, 1],
    ['the oldest push\'s age decides: a younger one with no newer point goes with it', refs([10, 800], [5, 990]), NOW - W, 2],
    ['a younger push with a newer point waits, with those after it', refs([10, 850], [20, 990], [5, 995]), NOW - W, 0],
    ['a push left behind holds no point older than those taken', refs([14, 800], [16, 850], [17, 880], [18, 950], [15, 990]), NOW - W, 1],
    ['a push spanning older points counts by its oldest', refs([10, 850], [20, 950], [[5, 25], 990]), NOW - W, 0],
    ['a point of the same timestamp may be left behind', refs([10, 800], [20, 950], [10, 990]), NOW - W, 1],
    ['with no such cut, the metric waits...', refs([17, 850], [18, 950], [15, 990]), NOW - W, 0],
    ['...until its oldest push has waited twice the window', refs([17, 800], [18, 950], [15, 990]), NOW - W, 1],
    ['a refresh takes every push', refs([17, 850], [18, 950], [15, 990]), Infinity, 3],
  ])('%s', (_name, pending, cutoff, taken) => {
    expect(takeable(pending, cutoff, W)).toBe(taken);
  });

  it('without a window, takes every push noted', () => {
    expect(takeable(refs([17, 850], [18, 950], [15, 990]), NOW, 0)).toBe(3);
  });

  it('takes none past the records followed', () => {
    expect(takeable(refs([10, 800], [11, 810], [12, 820]), Infinity, W, 2)).toBe(2);
    expect(takeable(refs([10, 800], [11, 810], [12, 820]), NOW - W, W, 0)).toBe(0);
  });
});

describe('worthTaking', () => {
  const P = PATIENCE_WINDOWS * W;
  it.each<[string, WindowRef[], number, number]>([
    ['every push takeable: all go', refs([10, 800], [11, 850]), 2, 2],
    ['none takeable: none go', refs([10, 950]), 0, 0],
    ['a newer push still in the window: the older ones wait for it', refs([10, 800], [11, 950]), 1, 0],
    ['...until the oldest was noted the patience before the cutoff', refs([10, NOW - W - P], [11, 950]), 1, 1],
    ['...not a moment sooner', refs([10, NOW - W - P + 1], [11, 950]), 1, 0],
  ])('%s', (_name, pending, taken, worth) => {
    expect(worthTaking(pending, taken, NOW - W, W)).toBe(worth);
  });

  it('without a window, takes what takeable gives', () => {
    expect(worthTaking(refs([10, 990], [11, 995]), 1, NOW, 0)).toBe(1);
  });
});

describe('worthSweeping', () => {
  const P = PATIENCE_WINDOWS * W;
  const CUTOFF = NOW - W;
  it.each<[string, number, number, boolean]>([
    ['every record has left the window', CUTOFF - 50, CUTOFF, true],
    ['the newest is in the window, the oldest waited less than the patience', CUTOFF - P + 1, CUTOFF + 1, false],
    ['the newest is in the window, the oldest waited the patience', CUTOFF - P, CUTOFF + 1, true],
    ['nothing pending', Infinity, -Infinity, true],
  ])('%s', (_name, oldest, newest, due) => {
    expect(worthSweeping(oldest, newest, CUTOFF, W)).toBe(due);
  });
});

describe('windowCutoff', () => {
  it.each<[string, number, number, number]>([
    ['no push being handled: the window back from now', W, Infinity, NOW - W],
    ['a push being handled: the window back from its receipt', W, NOW - 30, NOW - 30 - W],
    ['a push handled for longer than the hold: the hold and the window back from now', W, NOW - RECEIVING_HOLD_MS - 1, NOW - RECEIVING_HOLD_MS - W],
    ['no window: now, pushes being handled or not', 0, NOW - 30, NOW],
  ])('%s', (_name, windowMs, oldestReceiving, cutoff) => {
    expect(windowCutoff(NOW, windowMs, oldestReceiving)).toBe(cutoff);
  });
});


interface Simulated {
  /** Batches that left behind a point older than their latest, and of those the ones taken before their oldest push had waited twice the window. */
  unclean: number;
  uncleanEarly: number;
  /** The longest a push waited, ms. */
  longestWait: number;
  taken: number;
  /** Rounds that took something: the metric's updates. */
  updates: number;
}

/**
 * One metric's pushes of one point each, timestamps 0..n-1, noted `gap` ms
 * apart (give or take) in an order where each may overtake up to `spread`
 * others; rounds every `interval` ms take what takeable allows, as the
 * processor does.
 */
function simulate(seed: number, n: number, spread: number, gap: number, interval: number, patient = false): Simulated {
  const next = prng(seed);
  const keys = Array.from({ length: n }, (_, t) => t + spread * next());
  const order = Array.from({ length: n }, (_, t) => t).sort((a, b) => keys[a]! - keys[b]!);
  const noted = order.map((t, i) => ({ seq: i + 1, oldest: t, newest: t, notedAt: i * gap + gap * next() }));
  let pending: WindowRef[] = [];
  let at = 0;
  const result: Simulated = { unclean: 0, uncleanEarly: 0, longestWait: 0, taken: 0, updates: 0 };
  for (let now = 0; at < noted.length || pending.length > 0; now += interval) {
    while (at < noted.length && noted[at]!.notedAt <= now) pending.push(noted[at++]!);
    const takeableNow = takeable(pending, now - W, W);
    const taken = patient ? worthTaking(pending, takeableNow, now - W, W) : takeableNow;
    if (taken === 0) continue;
    result.updates++;
    const batch = pending.slice(0, taken);
    pending = pending.slice(taken);
    result.taken += taken;
    for (const ref of batch) result.longestWait = Math.max(result.longestWait, now - ref.notedAt);
    const latest = Math.max(...batch.map((r) => r.newest));
    if (pending.some((r) => r.oldest < latest)) {
      result.unclean++;
      if (batch[0]!.notedAt > now - 2 * W) result.uncleanEarly++;
    }
  }
  return result;
}

describe('a metric whose pushes overtake each other', () => {
  it.each([
    ['8 in flight, a push every 5 ms', 8, 5],
    ['8 in flight, a push every 30 ms', 8, 30],
    ['30 in flight, a push every 2 ms', 30, 2],
  ])('%s: every push taken within twice the window, none left behind older than a batch before that', (_name, spread, gap) => {
    for (let seed = 1; seed <= 20; seed++) {
      const { uncleanEarly, longestWait, taken } = simulate(seed, 500, spread, gap, 10);
      expect(taken, `seed ${seed}`).toBe(500);
      expect(uncleanEarly, `seed ${seed}`).toBe(0);
      expect(longestWait, `seed ${seed}`).toBeLessThanOrEqual(2 * W + 10);
    }
  });
});

describe('a metric pushed to every few ms, its rounds patient (worthTaking)', () => {
  it.each([
    ['one push every 5 ms, in order', 1, 5],
    ['8 in flight, a push every 5 ms', 8, 5],
    ['8 in flight, a push every 30 ms', 8, 30],
  ])('%s: fewer updates, every push taken within the patience, none left behind early', (_name, spread, gap) => {
    for (let seed = 1; seed <= 20; seed++) {
      const eager = simulate(seed, 500, spread, gap, 10);
      const patient = simulate(seed, 500, spread, gap, 10, true);
      expect(patient.taken, `seed ${seed}`).toBe(500);
      expect(patient.uncleanEarly, `seed ${seed}`).toBe(0);
      expect(patient.longestWait, `seed ${seed}`).toBeLessThanOrEqual((2 + PATIENCE_WINDOWS) * W + 10);
      expect(patient.updates, `seed ${seed}`).toBeLessThan(eager.updates / 2);
    }
  });
});
