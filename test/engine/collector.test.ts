import { describe, expect, it } from 'vitest';
import { CollectorBatch, type BatchPoints } from '../../engine/collector.js';
import { MetricSlot, ResourceSlot } from '../../engine/series-cache.js';

const resource = (key: string) => new ResourceSlot(key, key, key);

/** Each metric's timestamps or values. */
const pointsOf = (points: BatchPoints, column: 'timestamps' | 'values') =>
  Array.from(points.start, (start, m) => [...points[column].subarray(start, start + points.count[m]!)]);

describe('CollectorBatch', () => {
  it('lays out the points of each metric in the order added, resources and metrics in order of first appearance', () => {
    const [a, b] = [resource('a'), resource('b')];
    const [b1, a1, a2] = [new MetricSlot(b, 'b1'), new MetricSlot(a, 'a1'), new MetricSlot(a, 'a2')];
    // Fewer points expected than added: the arrays grow.
    const batch = new CollectorBatch(1);
    batch.resource(a);
    const points: [MetricSlot, number][] = [[b1, 1], [a1, 2], [b1, 3], [a2, 4], [a1, 5], ...Array.from({ length: 40 }, (_, i): [MetricSlot, number] => [a2, 10 + i])];
    for (const [slot, v] of points) batch.add(batch.metric(slot), v * 1000, v);
    expect(batch.resources).toEqual([a, b]);
    expect(batch.metrics).toEqual([b1, a1, a2]);
    const { start, order } = batch.metricsByResource();
    expect([...start]).toEqual([0, 2, 3]);
    expect([...order]).toEqual([1, 2, 0]);
    const series = batch.series();
    expect(pointsOf(series, 'values')).toEqual([[1, 3], [2, 5], [4, ...Array.from({ length: 40 }, (_, i) => 10 + i)]]);
    expect(pointsOf(series, 'timestamps')).toEqual(pointsOf(series, 'values').map((vs) => vs.map((v) => v * 1000)));
  });

  it('on columns, takes each metric\'s last run of them as its points, metrics in order of first appearance (the last remote write series of a name)', () => {
    const [r, s] = [resource('r'), resource('s')];
    const [m, n, o] = [new MetricSlot(r, 'm'), new MetricSlot(s, 'n'), new MetricSlot(r, 'o')];
    const values = Float64Array.from([0, 1, 2, 3, 4, 5, 6, 7]);
    const timestamps = values.map((v) => v * 1000);
    // Fewer metrics expected than given: the run arrays grow.
    const batch = new CollectorBatch(8, { resources: 1, metrics: 1 }, { timestamps, values });
    batch.run(batch.metric(m), 0, 2);
    batch.run(batch.metric(n), 2, 3);
    batch.run(batch.metric(o), 3, 3);
    batch.run(batch.metric(m), 4, 7);
    expect(batch.metrics).toEqual([m, n, o]);
    expect(batch.resources).toEqual([r, s]);
    const series = batch.series();
    expect(series.values).toBe(values);
    expect(pointsOf(series, 'values')).toEqual([[4, 5, 6], [2], []]);
    expect(pointsOf(series, 'timestamps')).toEqual([[4000, 5000, 6000], [2000], []]);
  });

  it('takes either points or runs of columns, never both', () => {
    const m = new MetricSlot(resource('r'), 'm');
    const columns = new CollectorBatch(8, undefined, { timestamps: new Float64Array(8), values: new Float64Array(8) });
    expect(() => columns.add(columns.metric(m), 1, 1)).toThrow(/runs/);
    const points = new CollectorBatch(8);
    expect(() => points.run(points.metric(m), 0, 1)).toThrow(/columns/);
  });

  it.each<[string, { resources: number; metrics: number } | undefined]>([
    ['reserving as many as expected', { resources: 2, metrics: 3 }],
    ['reserving fewer than there are', { resources: 1, metrics: 1 }],
    ['reserving more than there are', { resources: 50, metrics: 50 }],
    ['reserving by the points expected', undefined],
  ])('lists exactly the resources and metrics added, %s', (_case, expected) => {
    const [a, b] = [resource('a'), resource('b')];
    const [a1, a2, b1] = [new MetricSlot(a, 'a1'), new MetricSlot(a, 'a2'), new MetricSlot(b, 'b1')];
    const batch = new CollectorBatch(40, expected);
    expect(batch.resources).toEqual([]);
    batch.add(batch.metric(a1), 1, 1);
    expect(batch.metrics).toEqual([a1]);
    batch.add(batch.metric(b1), 2, 2);
    batch.add(batch.metric(a2), 3, 3);
    batch.add(batch.metric(a1), 4, 4);
    expect(batch.resources).toEqual([a, b]);
    expect(batch.metrics).toEqual([a1, b1, a2]);
    expect(pointsOf(batch.series(), 'values')).toEqual([[1, 4], [2], [3]]);
  });

  it('is left empty once released, the batches after it listing exactly their own resources and metrics in the arrays it gave back', () => {
    const [a, b, c] = [resource('a'), resource('b'), resource('c')];
    const [a1, b1, c1, c2] = [new MetricSlot(a, 'a1'), new MetricSlot(b, 'b1'), new MetricSlot(c, 'c1'), new MetricSlot(c, 'c2')];
    const released = new CollectorBatch(4, { resources: 2, metrics: 3 });
    for (const m of [a1, b1, c1]) released.add(released.metric(m), 1, 1);
    released.release();
    expect([released.resources, released.metrics]).toEqual([[], []]);
    const writes: [MetricSlot[], { resources: number; metrics: number }, ResourceSlot[]][] = [
      [[c2], { resources: 1, metrics: 1 }, [c]],
      [[b1, a1, c2, c1], { resources: 3, metrics: 4 }, [b, a, c]],
      [[c1, c2], { resources: 2, metrics: 3 }, [c]],
    ];
    for (const [metrics, expected, resources] of writes) {
      const batch = new CollectorBatch(4, expected);
      for (const m of metrics) batch.add(batch.metric(m), 2, 2);
      expect([batch.resources, batch.metrics]).toEqual([resources, metrics]);
      batch.release();
    }
  });

  it('counts a slot again in a new batch', () => {
    const r = resource('r');
    const m = new MetricSlot(r, 'm');
    const first = new CollectorBatch(4);
    first.add(first.metric(m), 1, 1);
    const second = new CollectorBatch(4);
    second.resource(resource('other'));
    expect(second.metric(m)).toBe(0);
    expect(second.resources).toEqual([second.resources[0], r]);
  });
});
