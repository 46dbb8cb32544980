import { describe, expect, it } from 'vitest';
import { BURST_MEASURES, fullCollection, IdleCollection } from '../../engine/idle-collection.js';

describe('IdleCollection', () => {
  // Each case: the running total of work and whether the backlog is empty at each look, and the looks that collect.
  const cases: { name: string; looks: [work: number, idle: boolean][]; collects: number[] }[] = [
    { name: 'a burst, then a quiet look', looks: [[BURST_MEASURES, true], [BURST_MEASURES, true]], collects: [1] },
    { name: 'no collection while the work goes on', looks: [[BURST_MEASURES, true], [2 * BURST_MEASURES, true], [3 * BURST_MEASURES, true]], collects: [] },
    { name: 'none while a backlog waits, then once it is done', looks: [[BURST_MEASURES, false], [BURST_MEASURES, false], [BURST_MEASURES, true], [BURST_MEASURES, true]], collects: [2] },
    { name: 'none for less work than a burst', looks: [[BURST_MEASURES - 1, true], [BURST_MEASURES - 1, true]], collects: [] },
    { name: 'once per burst', looks: [[BURST_MEASURES, true], [BURST_MEASURES, true], [BURST_MEASURES, true], [2 * BURST_MEASURES, true], [2 * BURST_MEASURES, true]], collects: [1, 4] },
    { name: 'small writes add up to a burst', looks: [[BURST_MEASURES / 2, true], [BURST_MEASURES / 2, true], [BURST_MEASURES, true], [BURST_MEASURES, true]], collects: [3] },
  ];

  it.each(cases)('$name', ({ looks, collects }) => {
    let at = 0;
    const collected: number[] = [];
    const idle = new IdleCollection({ work: () => (at === 0 ? 0 : looks[at - 1]![0]), idle: () => looks[at - 1]![1], collect: () => collected.push(at - 1) });
    for (at = 1; at <= looks.length; at++) idle.look();
    expect(collected).toEqual(collects);
  });
});

describe('fullCollection', () => {
  it("gives V8's gc without exposing it to contexts made later", async () => {
    const gc = fullCollection();
    expect(gc).toBeTypeOf('function');
    gc();
    const { runInNewContext } = await import('node:vm');
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });
});
