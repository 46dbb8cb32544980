// Repeated single-metric reads are answered from the engine's cache of
// encoded answers (engine/read-cache.ts): an answer must be the one a fresh
// read gives, byte for byte, whatever changed in between (new measures,
// deletion, a policy update), and a cached answer must not skip the checks
// made on every request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineOptions, loadConfig } from '../../server/config.js';
import { ADMIN, createMetric, createPolicy, json, pushMeasures, startTestApp, USER, type JsonResponse, type TestApp } from './helpers.js';

const POLICY = {
  name: 'cached',
  aggregation_methods: ['mean', 'sum', 'max', 'count'],
  definition: [
    { granularity: '1 second', points: 3600 },
    { granularity: '1 minute', points: 60 },
  ],
};

/** `count` points one second apart from 14:33:00 + `from` s, values from `value`. */
function points(from: number, count: number, value = 1): { timestamp: string; value: number }[] {
  return Array.from({ length: count }, (_, i) => ({
    timestamp: new Date(Date.UTC(2015, 2, 6, 14, 33, from + i)).toISOString(),
    value: value + i,
  }));
}

async function startApp(overrides: Parameters<typeof startTestApp>[0] = {}): Promise<TestApp> {
  const t = await startTestApp(overrides);
  await createPolicy(t.app, POLICY);
  return t;
}

/** A read without `refresh`, so that nothing but the cache stands between two reads. */
function read(t: TestApp, metricId: string, query = '', headers = ADMIN): Promise<JsonResponse> {
  return json(t.app, 'GET', `/v1/metric/${metricId}/measures${query === '' ? '' : `?${query}`}`, undefined, headers);
}

/** A metric of POLICY holding `measures`, processed. */
async function metricWith(t: TestApp, measures: ReturnType<typeof points>, headers = ADMIN): Promise<string> {
  const id = await createMetric(t.app, { archive_policy_name: POLICY.name }, headers);
  await pushMeasures(t.app, id, measures);
  await t.engine.processor.drained();
  return id;
}

const startIso = (s: number) => encodeURIComponent(new Date(Date.UTC(2015, 2, 6, 14, 33, s)).toISOString());

/** Reads whose answers all differ on the data of `metricWith(t, points(0, 150))`. */
const QUERIES = [
  '',
  'granularity=1',
  'granularity=60',
  'aggregation=max',
  'aggregation=sum&granularity=60',
  'aggregation=count',
  `start=${startIso(90)}`,
  `stop=${startIso(30)}`,
  `start=${startIso(10)}&stop=${startIso(20)}`,
  `start=${startIso(10)}&stop=${startIso(21)}`,
  'granularity=1&resample=120',
  'granularity=1&resample=10',
  'granularity=60&resample=W',
];

describe('cached single-metric reads', () => {
  let t: TestApp;
  let uncached: TestApp;
  beforeAll(async () => {
    t = await startApp();
    uncached = await startApp({ readCacheSize: 0 });
  });
  afterAll(async () => {
    await t.close();
    await uncached.close();
  });

  it('answer every distinct read with its own answer, the same as without the cache', async () => {
    const id = await metricWith(t, points(0, 150));
    const plain = await metricWith(uncached, points(0, 150));
    const expected = await Promise.all(QUERIES.map(async (q) => (await read(uncached, plain, q)).text));
    expect(new Set(expected).size).toBe(QUERIES.length);
    // The first round is remembered, the second fills the cache, the third is answered from it.
    for (let round = 0; round < 3; round++) {
      for (const [i, q] of QUERIES.entries()) {
        const res = await read(t, id, q);
        expect(res.status, q).toBe(200);
        expect(res.text, q).toBe(expected[i]);
      }
    }
    expect(uncached.engine.readCache.size).toBe(0);
  });

  it('answer a repeated read byte for byte, with the same headers', async () => {
    const id = await metricWith(t, points(0, 5));
    const size = t.engine.readCache.size;
    // Kept from the second time it is asked (ReadCache.admit), served from the third.
    const first = await read(t, id, 'granularity=1');
    expect(t.engine.readCache.size).toBe(size);
    await read(t, id, 'granularity=1');
    expect(t.engine.readCache.size).toBe(size + 1);
    const cached = await read(t, id, 'granularity=1');
    expect(cached.text).toBe(first.text);
    const headers = (r: JsonResponse) => ({ ...r.headers, date: undefined });
    expect(headers(cached)).toEqual(headers(first));
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it("do not share answers between metrics", async () => {
    const a = await metricWith(t, points(0, 3, 1));
    const b = await metricWith(t, points(0, 3, 100));
    const [ra, rb] = [await read(t, a), await read(t, b)];
    expect(ra.body).not.toEqual(rb.body);
    expect((await read(t, a)).text).toBe(ra.text);
    expect((await read(t, b)).text).toBe(rb.text);
  });

  it('keep no error answer, and still check the request every time', async () => {
    const id = await metricWith(t, points(0, 3));
    const size = t.engine.readCache.size;
    expect((await read(t, id, 'aggregation=rate:mean')).status).toBe(404);
    expect((await read(t, id, 'granularity=7')).status).toBe(404);
    expect((await read(t, id, 'resample=60')).status).toBe(400);
    expect(t.engine.readCache.size).toBe(size);

    const ok = await read(t, id);
    expect(ok.status).toBe(200);
    // The cached answer is not given to a caller the policy refuses.
    expect((await read(t, id, '', USER)).status).toBe(403);
    expect((await read(t, id, 'aggregation=rate:mean')).status).toBe(404);
    expect((await read(t, id)).text).toBe(ok.text);
  });

  it.each([
    ['a duration', 'start=-5000%20days'],
    ['now', 'stop=now'],
    ['today, on the aggregation route', 'stop=today'],
  ])('neither keep nor serve reads relative to now (%s): they name a new instant each time', async (_name, query) => {
    const id = await metricWith(t, points(0, 3));
    const size = t.engine.readCache.size;
    const path = query.includes('today') ? `/v1/aggregation/metric?metric=${id}&${query}` : `/v1/metric/${id}/measures?${query}`;
    // Asked twice: a read that may come again is kept from its second asking.
    for (let i = 0; i < 2; i++) {
      const res = await json(t.app, 'GET', path);
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(4);
    }
    expect(t.engine.readCache.size).toBe(size);
    // The same read with an absolute time is kept, once asked twice.
    for (let i = 0; i < 2; i++) expect((await read(t, id, `start=${startIso(0)}`)).status).toBe(200);
    expect(t.engine.readCache.size).toBe(size + 1);
  });

  it('serve a resource\'s named metric through the same cache, dropped when the resource is deleted', async () => {
    const rid = '00000000-0000-4000-8000-0000000000aa';
    const created = await json(t.app, 'POST', '/v1/resource/generic', { id: rid, metrics: { cpu: { archive_policy_name: POLICY.name } } });
    expect(created.status).toBe(201);
    const id = created.body.metrics.cpu as string;
    await pushMeasures(t.app, id, points(0, 4));
    await t.engine.processor.drained();
    const url = `/v1/resource/generic/${rid}/metric/cpu/measures`;
    const first = await json(t.app, 'GET', url);
    expect(first.body).toHaveLength(5);
    expect((await json(t.app, 'GET', url)).text).toBe(first.text);
    expect((await read(t, id)).text).toBe(first.text);

    const size = t.engine.readCache.size;
    expect((await json(t.app, 'DELETE', `/v1/resource/generic/${rid}`)).status).toBe(204);
    expect(t.engine.readCache.size).toBe(size - 1);
    expect((await json(t.app, 'GET', url)).status).toBe(404);
    expect((await read(t, id)).status).toBe(404);
  });

  it('forget a deleted metric: 404 after, and its answers are dropped', async () => {
    const id = await metricWith(t, points(0, 3));
    const other = await metricWith(t, points(0, 3));
    for (let i = 0; i < 2; i++) {
      await read(t, id);
      await read(t, id, 'granularity=1');
      await read(t, other);
    }
    const size = t.engine.readCache.size;
    expect((await json(t.app, 'DELETE', `/v1/metric/${id}`)).status).toBe(204);
    expect(t.engine.readCache.size).toBe(size - 2);
    expect((await read(t, id)).status).toBe(404);
    expect((await read(t, id, 'granularity=1')).status).toBe(404);
    expect((await read(t, other)).status).toBe(200);
  });

  it('follow an archive policy update', async () => {
    await createPolicy(t.app, { name: 'shrinking', definition: [{ granularity: '1 second', points: 10 }] });
    const id = await createMetric(t.app, { archive_policy_name: 'shrinking' });
    await pushMeasures(t.app, id, points(0, 8));
    await t.engine.processor.drained();
    expect((await read(t, id)).body).toHaveLength(8);
    expect((await read(t, id)).body).toHaveLength(8);
    const patched = await json(t.app, 'PATCH', '/v1/archive_policy/shrinking', { definition: [{ granularity: '1 second', points: 3 }] });
    expect(patched.status).toBe(200);
    // Retention is applied as the series is read: the stored points are all still there.
    expect((await read(t, id)).body).toHaveLength(3);
  });

  it('follow the single-metric form of /v1/aggregation/metric', async () => {
    const id = await metricWith(t, points(0, 3));
    const url = `/v1/aggregation/metric?metric=${id}&granularity=1`;
    const first = await json(t.app, 'GET', url);
    expect(first.body).toHaveLength(3);
    expect((await json(t.app, 'GET', url)).text).toBe(first.text);
    await pushMeasures(t.app, id, points(3, 2));
    expect((await json(t.app, 'GET', `${url}&refresh=true`)).body).toHaveLength(5);
    expect((await json(t.app, 'GET', url)).body).toHaveLength(5);
  });
});

describe.each([
  ['on the main thread', 0],
  ['on a worker thread', 1],
])('cached reads of a metric processed %s', (_where, workers) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ workers });
  });
  afterAll(async () => {
    await t.close();
  });

  it('give the new points once the processor has processed them', async () => {
    const id = await metricWith(t, points(0, 3));
    const before = await read(t, id, 'granularity=1');
    expect(before.body).toHaveLength(3);
    expect((await read(t, id, 'granularity=1')).text).toBe(before.text);
    await pushMeasures(t.app, id, points(3, 2));
    await t.engine.processor.drained();
    expect((await read(t, id, 'granularity=1')).body).toHaveLength(5);
  });

  it('give the new points of a read with refresh=true', async () => {
    const id = await metricWith(t, points(0, 3));
    const before = await read(t, id);
    expect((await read(t, id)).text).toBe(before.text);
    // Only the read's refresh may process the new measures.
    await t.engine.processor.stop();
    try {
      await pushMeasures(t.app, id, points(3, 2, 50));
      expect(t.engine.processor.hasPending(id)).toBe(true);
      const refreshed = await read(t, id, 'refresh=true');
      expect(refreshed.body.filter(([, g]: [string, number]) => g === 1)).toHaveLength(5);
      expect((await read(t, id)).text).toBe(refreshed.text);
    } finally {
      t.engine.processor.start();
    }
  });
});

describe('the cache budgets', () => {
  it.each<[string, 'readCacheSize' | 'splitCacheSize', string[], NodeJS.ProcessEnv, number]>([
    ['answers: 64 MB by default', 'readCacheSize', [], {}, 64 * 1024 ** 2],
    ['answers: a flag', 'readCacheSize', ['--read-cache-size', '1000'], {}, 1000],
    ['answers: an environment variable', 'readCacheSize', [], { GNOCCHI_READ_CACHE_SIZE: '0' }, 0],
    ['decoded splits: 64 MB by default', 'splitCacheSize', [], {}, 64 * 1024 ** 2],
    ['decoded splits: a flag', 'splitCacheSize', ['--split-cache-size', '1000'], {}, 1000],
    ['decoded splits: an environment variable', 'splitCacheSize', [], { GNOCCHI_SPLIT_CACHE_SIZE: '0' }, 0],
  ])('%s, passed to the engine', (_how, key, argv, env, bytes) => {
    expect(engineOptions(loadConfig(argv, env))[key]).toBe(bytes);
  });
});
