// The cache of encoded read answers on its own (engine/read-cache.ts): what
// it keeps and evicts under its byte budget, what an invalidation drops, and
// which reads share a key.
import { describe, expect, it } from 'vitest';
import { ENTRY_OVERHEAD, MAX_SEEN, ReadCache, readKey } from '../../engine/read-cache.js';
import type { ReadOptions } from '../../engine/read-measures.js';

const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';

/** What an entry of `key` holding `text` costs for metric A or B (same id length). */
const cost = (key: string, text: string) => ENTRY_OVERHEAD + A.length + 1 + key.length + text.length;

/** An answer of this ASCII text. */
const answer = (text: string) => Buffer.from(text, 'latin1');

/** What `get` answers, as text. */
const asText = (a: Buffer | undefined) => a?.toString('latin1');

describe('ReadCache', () => {
  it('answers what was stored, per metric and key', () => {
    const cache = new ReadCache(1024 ** 2);
    cache.set(A, 'k1', answer('[1]'));
    cache.set(A, 'k2', answer('[2]'));
    cache.set(B, 'k1', answer('[3]'));
    expect([asText(cache.get(A, 'k1')), asText(cache.get(A, 'k2')), asText(cache.get(B, 'k1')), asText(cache.get(B, 'k2'))]).toEqual(['[1]', '[2]', '[3]', undefined]);
    expect(cache.bytes).toBe(3 * cost('k1', '[1]'));
  });

  it('replaces an answer stored again under the same key, counting it once', () => {
    const cache = new ReadCache(1024 ** 2);
    cache.set(A, 'k', answer('[1]'));
    cache.set(A, 'k', answer('[1, 2]'));
    expect(asText(cache.get(A, 'k'))).toBe('[1, 2]');
    expect([cache.size, cache.bytes]).toEqual([1, cost('k', '[1, 2]')]);
  });

  it('evicts the least recently used answers once the budget is spent, a hit counting as a use', () => {
    const text = 'x'.repeat(100);
    const cache = new ReadCache(3 * cost('k1', text));
    cache.set(A, 'k1', answer(text));
    cache.set(A, 'k2', answer(text));
    cache.set(A, 'k3', answer(text));
    cache.get(A, 'k1');
    cache.set(A, 'k4', answer(text));
    expect(['k1', 'k2', 'k3', 'k4'].map((k) => cache.get(A, k) !== undefined)).toEqual([true, false, true, true]);
    expect(cache.bytes).toBe(3 * cost('k1', text));
  });

  it('evicts as many answers as a larger one needs', () => {
    const cache = new ReadCache(4 * cost('k1', 'x'));
    for (const k of ['k1', 'k2', 'k3', 'k4']) cache.set(A, k, answer('x'));
    const big = 'y'.repeat(2 * cost('k1', 'x') - cost('k5', ''));
    cache.set(B, 'k5', answer(big));
    expect(['k1', 'k2', 'k3', 'k4'].map((k) => cache.get(A, k) !== undefined)).toEqual([false, false, true, true]);
    expect(asText(cache.get(B, 'k5'))).toBe(big);
    expect(cache.bytes).toBeLessThanOrEqual(cache.budget);
  });

  it.each([
    ['a budget of 0 keeps nothing', 0, 'x'],
    ['an answer larger than the budget is not kept', 1000, 'x'.repeat(1000)],
  ])('%s', (_name, budget, text) => {
    const cache = new ReadCache(budget);
    cache.set(A, 'k', answer(text));
    expect([asText(cache.get(A, 'k')), cache.size, cache.bytes]).toEqual([undefined, 0, 0]);
  });

  it('keeps what it holds when an answer larger than the budget comes', () => {
    const cache = new ReadCache(1000);
    cache.set(A, 'k1', answer('x'));
    cache.set(A, 'k2', answer('x'.repeat(1000)));
    expect(asText(cache.get(A, 'k1'))).toBe('x');
  });

  it('admits a read from its second asking on, per metric and key, still after its metric changed', () => {
    const cache = new ReadCache(1024 ** 2);
    expect([cache.admit(A, 'k1'), cache.admit(B, 'k1'), cache.admit(A, 'k2')]).toEqual([false, false, false]);
    expect([cache.admit(A, 'k1'), cache.admit(B, 'k1'), cache.admit(A, 'k2')]).toEqual([true, true, true]);
    cache.invalidate([A]);
    expect(cache.admit(A, 'k1')).toBe(true);
    cache.clear();
    expect(cache.admit(A, 'k1')).toBe(false);
  });

  it('forgets reads asked once when MAX_SEEN of them pile up, and admits none with a budget of 0', () => {
    const cache = new ReadCache(1024 ** 2);
    cache.admit(A, 'first');
    for (let i = 0; i < MAX_SEEN; i++) cache.admit(B, `k${i}`);
    expect(cache.admit(A, 'first')).toBe(false);
    const none = new ReadCache(0);
    expect([none.admit(A, 'k'), none.admit(A, 'k')]).toEqual([false, false]);
  });

  it('drops every answer of an invalidated metric and only those', () => {
    const cache = new ReadCache(1024 ** 2);
    cache.set(A, 'k1', answer('[1]'));
    cache.set(A, 'k2', answer('[2]'));
    cache.set(B, 'k1', answer('[3]'));
    cache.invalidate([A, '00000000-0000-4000-8000-0000000000ff']);
    expect([asText(cache.get(A, 'k1')), asText(cache.get(A, 'k2')), asText(cache.get(B, 'k1'))]).toEqual([undefined, undefined, '[3]']);
    expect([cache.size, cache.bytes]).toEqual([1, cost('k1', '[3]')]);
    cache.set(A, 'k1', answer('[4]'));
    expect(asText(cache.get(A, 'k1'))).toBe('[4]');
  });

  it('drops everything on clear', () => {
    const cache = new ReadCache(1024 ** 2);
    cache.set(A, 'k1', answer('[1]'));
    cache.set(B, 'k1', answer('[2]'));
    cache.clear();
    expect([asText(cache.get(A, 'k1')), asText(cache.get(B, 'k1')), cache.size, cache.bytes]).toEqual([undefined, undefined, 0, 0]);
  });
});

describe('readKey', () => {
  const base: ReadOptions = { method: 'mean', granularities: [60e6, 1e6], start: 1.5e15, stop: 1.6e15 };

  it.each<[string, ReadOptions]>([
    ['the method', { ...base, method: 'max' }],
    ['the granularities', { ...base, granularities: [60e6] }],
    ['the start', { ...base, start: 1.5e15 + 1 }],
    ['no start', { method: 'mean', granularities: [60e6, 1e6], stop: 1.6e15 }],
    ['the stop', { ...base, stop: 1.6e15 + 1 }],
    ['no stop', { method: 'mean', granularities: [60e6, 1e6], start: 1.5e15 }],
    ['a resample', { ...base, resample: 3600e6 }],
    ['a calendar resample', { ...base, resample: 'W' }],
    ['the newest timestamp', { ...base, newest: 1.55e15 }],
  ])('tells reads apart by %s', (_what, read) => {
    expect(readKey(read)).not.toBe(readKey(base));
  });

  it('is the same for the same read', () => {
    expect(readKey({ ...base, granularities: [...base.granularities] })).toBe(readKey(base));
  });
});
