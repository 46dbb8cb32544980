// Order independence: the same set of measures (distinct timestamps) gives
// the same aggregates whether pushed sorted in one batch or shuffled across
// several batches, as long as none is late (back_window covers them all).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../formats/timestamp.js';
import { createMetric, createPolicy, pushMeasures, readMeasures, startTestApp, type TestApp } from '../server/helpers.js';

const POLICY = 'order-policy';
const AGGREGATIONS = ['mean', 'min', 'max', 'sum', 'count'] as const;
const BASE = Date.UTC(2024, 1, 29, 22, 0, 0) * 1000; // crosses midnight
const SPAN = 4 * 3600 * 1_000_000; // a few hours, in microseconds

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ workers: 0 });
  await createPolicy(t.app, {
    name: POLICY,
    back_window: 100,
    aggregation_methods: [...AGGREGATIONS],
    definition: [
      { granularity: 60, points: 1440 },
      { granularity: 3600, points: 240 },
    ],
  });
});
afterAll(async () => {
  await t?.close();
});

type Measure = { timestamp: string; value: number };
type Point = [string, number, number];

const measureSet = fc
  .uniqueArray(fc.integer({ min: 0, max: SPAN - 1 }), { minLength: 1, maxLength: 60 })
  .chain((offsets) =>
    fc.tuple(
      fc.array(
        fc.oneof(
          fc.integer({ min: -1_000_000, max: 1_000_000 }),
          fc.double({ min: -1e9, max: 1e9, noNaN: true, noDefaultInfinity: true }),
        ),
        { minLength: offsets.length, maxLength: offsets.length },
      ),
      fc.constant(offsets),
    ),
  )
  .map(([values, offsets]) => offsets.map((o, i) => ({ micros: BASE + o, value: values[i]! })));

/** A permutation of the measures and cut points splitting it into batches. */
const pushPlan = (n: number) =>
  fc.tuple(
    fc.array(fc.nat(), { minLength: n, maxLength: n }),
    fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, n - 1) }), { maxLength: Math.min(5, Math.max(0, n - 1)) }),
  );

async function aggregates(metric: string): Promise<Record<string, Point[]>> {
  const out: Record<string, Point[]> = {};
  for (const agg of AGGREGATIONS) {
    const res = await readMeasures(t.app, metric, `aggregation=${agg}`);
    if (res.status !== 200) throw new Error(`read ${agg}: ${res.status} ${res.text}`);
    out[agg] = res.body as Point[];
  }
  return out;
}

function expectSame(actual: Record<string, Point[]>, expected: Record<string, Point[]>): void {
  for (const agg of AGGREGATIONS) {
    const got = actual[agg]!;
    const want = expected[agg]!;
    expect(got.map(([ts, g]) => [ts, g]), agg).toEqual(want.map(([ts, g]) => [ts, g]));
    got.forEach(([ts, g, v], i) => {
      const w = want[i]![2];
      const tol = 1e-9 * Math.max(1, Math.abs(w));
      if (!(Math.abs(v - w) <= tol)) throw new Error(`${agg} at ${ts} (${g}s): ${v} shuffled vs ${w} sorted`);
    });
  }
}

describe('order independence', () => {
  it('shuffled, batched pushes aggregate like one sorted push', async () => {
    await fc.assert(
      fc.asyncProperty(
        measureSet.chain((ms) => fc.tuple(fc.constant(ms), pushPlan(ms.length))),
        async ([ms, [keys, cuts]]) => {
          const toMeasure = (m: { micros: number; value: number }): Measure => ({ timestamp: formatTimestamp(m.micros), value: m.value });
          const sorted = [...ms].sort((a, b) => a.micros - b.micros).map(toMeasure);
          const shuffled = ms
            .map((m, i) => ({ m, k: keys[i]! }))
            .sort((a, b) => a.k - b.k)
            .map(({ m }) => toMeasure(m));
          const bounds = [0, ...[...cuts].sort((a, b) => a - b).filter((c) => c < shuffled.length), shuffled.length];
          const batches: Measure[][] = [];
          for (let i = 0; i + 1 < bounds.length; i++) if (bounds[i]! < bounds[i + 1]!) batches.push(shuffled.slice(bounds[i], bounds[i + 1]));

          const a = await createMetric(t.app, { archive_policy_name: POLICY });
          const b = await createMetric(t.app, { archive_policy_name: POLICY });
          await pushMeasures(t.app, a, sorted);
          for (const batch of batches) {
            await pushMeasures(t.app, b, batch);
            // Let the background processor see some batches separately.
            if (batch.length % 2 === 0) await readMeasures(t.app, b);
          }
          const want = await aggregates(a);
          const got = await aggregates(b);
          // Sanity: every measure was counted in the sorted push.
          const total = want.count!.filter(([, g]) => g === 3600).reduce((s, [, , v]) => s + v, 0);
          expect(total).toBe(ms.length);
          expectSame(got, want);
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});
