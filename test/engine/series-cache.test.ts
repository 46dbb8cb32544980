import { describe, expect, it } from 'vitest';
import { ByteMap, CollectorScope, hashBytes, namedResource, SeriesCache } from '../../engine/series-cache.js';

const bytes = (s: string) => Buffer.from(s, 'latin1');

describe('ByteMap', () => {
  it('finds keys by a range of any buffer, through growth and colliding hashes', () => {
    const map = new ByteMap<number>();
    const keys = Array.from({ length: 1000 }, (_, i) => `series-${i}\u00ff`);
    // Every key under the same hash as well as its own: equal hashes must not confuse keys.
    for (const [i, key] of keys.entries()) map.add(bytes(key), 0, key.length, i % 2 === 0 ? 7 : hashBytes(bytes(key), 0, key.length), i);
    expect(map.size).toBe(1000);
    for (const [i, key] of keys.entries()) {
      const framed = bytes(`<<${key}>>`);
      expect(map.value(map.find(framed, 2, 2 + key.length, i % 2 === 0 ? 7 : hashBytes(framed, 2, 2 + key.length)))).toBe(i);
    }
    const missing = bytes('series-1');
    expect(map.find(missing, 0, missing.length, hashBytes(missing, 0, missing.length))).toBe(-1);
    expect(map.find(missing, 0, missing.length, 7)).toBe(-1);
  });
});

describe('SeriesCache', () => {
  const maps = () => ({ names: new Map<string, number>() });

  it('takes entries up to its capacity (scopes counted), then none until it starts over', () => {
    const cache = new SeriesCache(4);
    const scope = cache.scope('a', maps);
    expect(cache.scope('a', maps)).toBe(scope);
    expect([1, 2, 3].map(() => cache.room(scope))).toEqual([true, true, true]);
    expect(cache.room(scope)).toBe(false);
    // A scope the full cache did not take still takes its caller's entries, without counting.
    const detached = cache.scope('b', maps);
    expect(cache.scope('b', maps)).not.toBe(detached);
    expect(cache.room(detached)).toBe(true);
    // 10 misses per entry held (3 so far): the cache starts over, and the old scope is no longer its.
    for (let i = 0; i < 36; i++) expect(cache.room(scope)).toBe(false);
    expect(cache.scope('a', maps)).toBe(scope);
    expect(cache.room(scope)).toBe(false);
    expect(cache.scope('a', maps)).not.toBe(scope);
    expect(cache.room(scope)).toBe(true);
  });
});

describe('CollectorScope', () => {
  it('gives one slot per resource key and metric identity, from the cache or, when it is full, from its own', () => {
    for (const capacity of [1000, 1]) {
      const cache = new SeriesCache(capacity);
      const a = new CollectorScope<string>(cache, 'scope');
      const r = a.resource('host', () => namedResource('host', 'host', 'admin'));
      expect(a.resource('host', () => namedResource('host', 'host', 'admin'))).toBe(r);
      expect(a.metric(r, 'cpu')).toBe(a.metric(r, 'cpu'));
      expect(a.metric(r, 'cpu')).not.toBe(a.metric(r, 'mem'));
      // Another write sees the cache's slots only.
      const b = new CollectorScope<string>(cache, 'scope');
      expect(b.resource('host', () => namedResource('host', 'host', 'admin')) === r).toBe(capacity > 1);
    }
  });

  it('remembers series by their bytes while the cache has room', () => {
    const cache = new SeriesCache(3);
    const scope = new CollectorScope<string>(cache, 'scope');
    for (const key of ['a', 'b', 'c']) scope.rememberSeries(bytes(key), 0, 1, hashBytes(bytes(key), 0, 1), key.toUpperCase());
    expect(['a', 'b', 'c'].map((key) => scope.seriesEntry(bytes(key), 0, 1, hashBytes(bytes(key), 0, 1)))).toEqual([0, 1, -1]);
  });
});

describe('CollectorScope.expected', () => {
  const remember = (scope: CollectorScope<string>, key: string) => {
    const b = bytes(key);
    const hash = hashBytes(b, 0, b.length);
    const entry = scope.seriesEntry(b, 0, b.length, hash);
    return entry === -1 ? scope.rememberSeries(b, 0, b.length, hash, key) : entry;
  };
  /** One write seeing `keys` in order; answers the key expected before each. */
  const write = (cache: SeriesCache, keys: string[]) => {
    const scope = new CollectorScope<string>(cache, 'scope');
    return keys.map((key) => {
      const expected = scope.expected();
      scope.seen(key === '?' ? -1 : remember(scope, key));
      return expected === -1 ? null : scope.seriesAt(expected);
    });
  };

  it('expects the series that followed the one before when a write last saw it', () => {
    const cache = new SeriesCache();
    expect(write(cache, ['a', 'b', 'c'])).toEqual([null, null, null]);
    expect(write(cache, ['a', 'b', 'c'])).toEqual(['a', 'b', 'c']);
    expect(write(cache, ['a', 'c', 'b', 'c'])).toEqual(['a', 'b', null, 'c']);
    expect(write(cache, ['a', 'c', 'b'])).toEqual(['a', 'c', 'b']);
    // After a series not remembered, nothing is expected.
    expect(write(cache, ['a', '?', 'c'])).toEqual(['a', 'c', null]);
  });

  it('finds an entry\'s key at the start of bytes only when it ends before their end', () => {
    const cache = new SeriesCache();
    const scope = new CollectorScope<string>(cache, 'scope');
    const entry = remember(scope, 'ab');
    const cases: [string, number, number, number][] = [
      ['ab c', 0, 4, 2],
      ['xab c', 1, 5, 3],
      ['ab', 0, 2, -1],
      ['ab c', 0, 2, -1],
      ['ac c', 0, 4, -1],
      ['a', 0, 1, -1],
    ];
    for (const [text, start, end, found] of cases) expect(scope.keyEndAt(entry, bytes(text), start, end)).toBe(found);
  });
});

describe('namedResource', () => {
  it('derives the id as Gnocchi does, or keeps the error for the write that gets to it', () => {
    expect(namedResource('foobar', 'foobar', 'admin').id).toBe('b4d568e4-7af1-5aec-ac3f-9c09fa3685a9');
    const bad = namedResource('a/b', 'a/b', 'admin');
    expect(bad.id).toBeInstanceOf(Error);
    expect((bad.id as Error).message).toBe("'/' is not supported in resource id");
  });
});
