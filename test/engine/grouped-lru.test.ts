// The grouped LRU behind the read cache and PostgreSQL's search answers
// (engine/grouped-lru.ts): its budget, eviction order, and group drops.
import { describe, expect, it } from 'vitest';
import { GroupedLru } from '../../engine/grouped-lru.js';

type Step = ['set', string, string, number] | ['get', string] | ['delete', string] | ['deleteGroup', string] | ['clear'];

/** Runs the steps on an LRU of `budget`; returns its keys (in LRU order, by probing) and cost. */
function run(budget: number, steps: Step[], probe: string[]): { kept: string[]; cost: number; size: number } {
  const lru = new GroupedLru<string>(budget);
  for (const step of steps) {
    if (step[0] === 'set') lru.set(step[1], step[2], `value of ${step[2]}`, step[3]);
    else if (step[0] === 'get') lru.get(step[1]);
    else if (step[0] === 'delete') lru.delete(step[1]);
    else if (step[0] === 'deleteGroup') lru.deleteGroup(step[1]);
    else lru.clear();
  }
  const cost = lru.cost;
  const size = lru.size;
  const kept = probe.filter((key) => lru.get(key) === `value of ${key}`);
  return { kept, cost, size };
}

describe('GroupedLru', () => {
  const cases: { what: string; budget: number; steps: Step[]; kept: string[]; cost: number }[] = [
    { what: 'keeps what fits', budget: 10, steps: [['set', 'g', 'a', 4], ['set', 'h', 'b', 6]], kept: ['a', 'b'], cost: 10 },
    { what: 'evicts the least recently used first', budget: 10, steps: [['set', 'g', 'a', 4], ['set', 'g', 'b', 4], ['set', 'g', 'c', 4]], kept: ['b', 'c'], cost: 8 },
    { what: 'a hit counts as a use', budget: 10, steps: [['set', 'g', 'a', 4], ['set', 'g', 'b', 4], ['get', 'a'], ['set', 'g', 'c', 4]], kept: ['a', 'c'], cost: 8 },
    { what: 'evicts as many as the new cost needs', budget: 10, steps: [['set', 'g', 'a', 3], ['set', 'g', 'b', 3], ['set', 'g', 'c', 3], ['set', 'g', 'd', 8]], kept: ['d'], cost: 8 },
    { what: 'a value costing more than the budget is not kept, nothing evicted', budget: 10, steps: [['set', 'g', 'a', 4], ['set', 'g', 'b', 11]], kept: ['a'], cost: 4 },
    { what: 'a budget of 0 keeps nothing', budget: 0, steps: [['set', 'g', 'a', 0.5]], kept: [], cost: 0 },
    { what: 'setting a key again replaces it, counted once', budget: 10, steps: [['set', 'g', 'a', 4], ['set', 'h', 'a', 6]], kept: ['a'], cost: 6 },
    { what: 'a replaced key leaves its old group', budget: 10, steps: [['set', 'g', 'a', 4], ['set', 'h', 'a', 6], ['deleteGroup', 'g']], kept: ['a'], cost: 6 },
    { what: 'deleteGroup drops every entry of the group and only those', budget: 20, steps: [['set', 'g', 'a', 4], ['set', 'h', 'b', 5], ['set', 'g', 'c', 6], ['deleteGroup', 'g']], kept: ['b'], cost: 5 },
    { what: 'deleteGroup of an unknown group changes nothing', budget: 10, steps: [['set', 'g', 'a', 4], ['deleteGroup', 'x']], kept: ['a'], cost: 4 },
    { what: 'delete drops one key and its cost', budget: 10, steps: [['set', 'g', 'a', 4], ['set', 'g', 'b', 5], ['delete', 'a']], kept: ['b'], cost: 5 },
    { what: 'a group emptied by evictions can be filled again', budget: 4, steps: [['set', 'g', 'a', 4], ['set', 'h', 'b', 4], ['set', 'g', 'c', 4], ['deleteGroup', 'h']], kept: ['c'], cost: 4 },
    { what: 'clear drops everything', budget: 10, steps: [['set', 'g', 'a', 4], ['clear'], ['set', 'g', 'b', 5]], kept: ['b'], cost: 5 },
  ];

  it.each(cases)('$what', ({ budget, steps, kept, cost }) => {
    const after = run(budget, steps, ['a', 'b', 'c', 'd']);
    expect(after).toEqual({ kept, cost, size: kept.length });
  });
});
