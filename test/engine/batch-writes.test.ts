// A batch's writes come back per metric as a metric's own queue would
// replay them: its chunk and split writes in order, then its state, the
// bytes encodeMetricState gives, even once the batch's state buffer has
// grown past its first size; a metric that writes nothing replays nothing.
import { describe, expect, it } from 'vitest';
import { BatchWrites } from '../../engine/batch-writes.js';
import type { RecordWriter } from '../../engine/drivers/types.js';
import { encodeMetricState, type MetricState } from '../../engine/metric-state.js';

/** A state whose tail holds `points` points (16 bytes each): sizes past the batch buffer's first 64 KB. */
function state(points: number, lastSeq: number): MetricState {
  return {
    tail: { timestamps: Float64Array.from({ length: points }, (_, i) => i * 1e6), values: Float64Array.from({ length: points }, (_, i) => i / 3) },
    tailFrozen: 0,
    granularities: [{ granularity: 60e6, open: null, oldestSealedKey: lastSeq % 2 === 0 ? null : -60e6 }],
    lastSeq,
  };
}

type Write = [op: 'put' | 'remove', kind: string, key: unknown, value?: number[]];

function recorder(): { writer: RecordWriter; writes: Write[] } {
  const writes: Write[] = [];
  return {
    writes,
    writer: {
      put: (kind, key, value) => void writes.push(['put', kind, key, [...value]]),
      remove: (kind, key) => void writes.push(['remove', kind, key]),
    },
  };
}

/** Per metric: its chunk writes (a removal when the value is absent), then its state's tail size (no state: null). */
type Planned = { chunks: [first: number, value?: number[]][]; tail: number | null }[];

const cases: [string, Planned][] = [
  ['one metric, its state only', [{ chunks: [], tail: 1 }]],
  ['chunk writes before the state, in order', [{ chunks: [[0, [1, 2]], [60], [120, [3]]], tail: 2 }, { chunks: [[0, [9]]], tail: 0 }]],
  ['a metric without writes between two', [{ chunks: [], tail: 3 }, { chunks: [], tail: null }, { chunks: [[5]], tail: 1 }]],
  ['states past the first buffer, grown more than once', Array.from({ length: 12 }, (_, i) => ({ chunks: i % 3 === 0 ? [[i, [i]]] : [], tail: 1500 + 37 * i }))],
];

describe('a batch\'s writes', () => {
  it.each(cases)('replay per metric as written: %s', (_name, planned) => {
    const batch = new BatchWrites(planned.length);
    const ids = planned.map((_, i) => `m${i}`);
    const expected: Write[][] = planned.map(({ chunks, tail }, i) => {
      const own: Write[] = [];
      for (const [first, value] of chunks) {
        const key = [ids[i]!, 60e6, first] as [string, number, number];
        if (value === undefined) {
          batch.remove('chunk', key);
          own.push(['remove', 'chunk', key]);
        } else {
          batch.put('chunk', key, Uint8Array.from(value));
          own.push(['put', 'chunk', key, value]);
        }
      }
      if (tail !== null) {
        batch.putState(state(tail, i + 1), 6);
        own.push(['put', 'state', ids[i], [...encodeMetricState(state(tail, i + 1), 6)]]);
      }
      batch.endMetric();
      return own;
    });
    const replayed = batch.byMetric(ids).map(({ metricId, writes }) => {
      const { writer, writes: got } = recorder();
      writes.apply(writer);
      return [metricId, got];
    });
    expect(replayed).toEqual(ids.map((id, i) => [id, expected[i]]));
  });
});
