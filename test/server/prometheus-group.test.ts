// groupRemoteWrite with the series cache of earlier writes: the cache (and
// the order of series it expects, see CollectorScope.expected) saves work
// but never changes how samples are grouped.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SeriesCache } from '../../engine/series-cache.js';
import { encodeWriteRequest, type Label } from '../../formats/prometheus-remote.js';
import { groupRemoteWrite } from '../../server/routes/prometheus.js';
import { grouped } from './grouped-batch.js';

/** A request of series (by their labels) with one sample each, valued by their place. */
function request(series: Label[][]): Buffer {
  const timeseries = series.map((labels, i) => ({ labels, samples: [{ value: i, timestampMs: 1000 * (i + 1) }] }));
  return Buffer.from(encodeWriteRequest({ timeseries }));
}

/** groupRemoteWrite's batch of a request (null when it holds none), or the message it throws. */
function outcome(series: Label[][], cache: SeriesCache): ReturnType<typeof grouped> | null | string {
  try {
    const batch = groupRemoteWrite(request(series), 'admin', cache);
    return batch === null ? null : grouped(batch);
  } catch (err) {
    return (err as Error).message;
  }
}

const label = (name: string, value: string): Label => ({ name, value });
// Label sets whose encodings begin alike (one a prefix of another), or without __name__.
const LABELS: Label[][] = [
  [label('__name__', 'up'), label('job', 'j')],
  [label('__name__', 'up'), label('job', 'j'), label('instance', 'i')],
  [label('__name__', 'up'), label('job', 'jj')],
  [label('__name__', 'down'), label('job', 'j')],
  [label('job', 'j')],
];

describe('groupRemoteWrite', () => {
  const writes: [string, Label[][][]][] = [
    ['series in the same order', [[LABELS[0]!, LABELS[3]!], [LABELS[0]!, LABELS[3]!]]],
    ['a series whose labels begin with the expected ones', [[LABELS[0]!, LABELS[3]!], [LABELS[1]!, LABELS[3]!]]],
    ['series in another order', [[LABELS[0]!, LABELS[2]!, LABELS[3]!], [LABELS[3]!, LABELS[0]!, LABELS[2]!]]],
    ['a series without __name__ after known ones', [[LABELS[0]!, LABELS[3]!], [LABELS[0]!, LABELS[4]!]]],
  ];
  it.each(writes)('groups %s as a fresh cache does', (_, requests) => {
    const warm = new SeriesCache();
    for (const series of requests) expect(outcome(series, warm)).toEqual(outcome(series, new SeriesCache()));
  });

  it('groups any sequence of requests as a fresh cache does, whatever the cache holds', () => {
    const requests = fc.array(fc.array(fc.constantFrom(...LABELS), { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 5 });
    fc.assert(
      fc.property(requests, fc.constantFrom(3, 1000), (series, capacity) => {
        const warm = new SeriesCache(capacity);
        for (const s of series) expect(outcome(s, warm)).toEqual(outcome(s, new SeriesCache()));
      }),
    );
  });
});
