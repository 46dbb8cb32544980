// GET /metrics: a Prometheus text exposition a stock parser reads, whose
// counters move as pushes, processing, reads and refusals happen.
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../server/config.js';
import { ADMIN, createMetric, createPolicy, json, pushMeasures, startTestApp, USER, type TestApp } from './helpers.js';

interface Family {
  name: string;
  type: string;
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Scrape {
  families: Map<string, Family>;
  samples: Sample[];
}

let t: TestApp;
afterEach(async () => {
  await t.close();
});

async function start(overrides: Partial<Config> = {}): Promise<string> {
  t = await startTestApp(overrides);
  await createPolicy(t.app, { name: 'p', aggregation_methods: ['mean', 'count'], definition: [{ granularity: '1 second', points: 1000 }] });
  return createMetric(t.app, { archive_policy_name: 'p' });
}

/**
 * The exposition's metric families as a stock parser reads them, and its
 * samples line by line (that parser folds a histogram's labelled series
 * into one, so counts by label are read from the lines).
 */
async function scrape(headers = ADMIN): Promise<Scrape> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics', headers });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  const families = parsePrometheusTextFormat(res.body) as Family[];
  const samples = res.body
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (m === null) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
      return { name: m[1]!, labels, value: Number(m[3]) };
    });
  return { families: new Map(families.map((f) => [f.name, f])), samples };
}

/** The sample of `name` with these labels (among others); a histogram's name gives its `_count`. */
function value(scraped: Scrape, name: string, labels: Record<string, string> = {}): number {
  const wanted = scraped.families.get(name)?.type === 'HISTOGRAM' ? `${name}_count` : name;
  const sample = scraped.samples.find((m) => m.name === wanted && Object.entries(labels).every(([k, v]) => m.labels[k] === v));
  if (sample === undefined) throw new Error(`no ${wanted}${JSON.stringify(labels)} in the scrape`);
  return sample.value;
}

const points = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ timestamp: new Date(Date.UTC(2024, 0, 1) + (from + i) * 1000).toISOString(), value: i }));

describe('GET /metrics', () => {
  it('is a Prometheus text exposition with process metrics, engine metrics and their types', async () => {
    await start();
    const scraped = await scrape();
    const types: [string, string][] = [
      ['process_cpu_seconds_total', 'COUNTER'],
      ['nodejs_heap_size_used_bytes', 'GAUGE'],
      ['gnocchi_http_request_duration_seconds', 'HISTOGRAM'],
      ['gnocchi_measures_accepted_total', 'COUNTER'],
      ['gnocchi_measure_pushes_refused_total', 'COUNTER'],
      ['gnocchi_backlog_measures', 'GAUGE'],
      ['gnocchi_backlog_metrics', 'GAUGE'],
      ['gnocchi_processing_lag_seconds', 'GAUGE'],
      ['gnocchi_processing_batches_total', 'COUNTER'],
      ['gnocchi_processing_batch_duration_seconds', 'HISTOGRAM'],
      ['gnocchi_read_cache_hits_total', 'COUNTER'],
      ['gnocchi_split_cache_misses_total', 'COUNTER'],
      ['gnocchi_lmdb_used_bytes', 'GAUGE'],
      ['gnocchi_disk_free_bytes', 'GAUGE'],
    ];
    for (const [name, type] of types) expect(scraped.families.get(name)?.type, name).toBe(type);
    expect(value(scraped, 'gnocchi_lmdb_used_bytes')).toBeGreaterThan(0);
    expect(value(scraped, 'gnocchi_disk_free_bytes')).toBeGreaterThan(0);
    expect(value(scraped, 'gnocchi_lmdb_map_size_bytes')).toBe(t.config.mapSize);
  });

  it('counts accepted measures, the backlog, then processing as it happens', async () => {
    const metric = await start();
    await t.engine.processor.stop();
    const before = await scrape();
    await pushMeasures(t.app, metric, points(7));
    const waiting = await scrape();
    expect(value(waiting, 'gnocchi_measures_accepted_total') - value(before, 'gnocchi_measures_accepted_total')).toBe(7);
    expect(value(waiting, 'gnocchi_backlog_measures')).toBe(7);
    expect(value(waiting, 'gnocchi_backlog_metrics')).toBe(1);
    expect(value(waiting, 'gnocchi_processing_lag_seconds')).toBeGreaterThan(0);

    t.engine.processor.start();
    await t.engine.processor.drained();
    const done = await scrape();
    expect(value(done, 'gnocchi_backlog_measures')).toBe(0);
    expect(value(done, 'gnocchi_processing_lag_seconds')).toBe(0);
    expect(value(done, 'gnocchi_processing_measures_total') - value(before, 'gnocchi_processing_measures_total')).toBe(7);
    expect(value(done, 'gnocchi_processing_metrics_total') - value(before, 'gnocchi_processing_metrics_total')).toBe(1);
    const batches = (f: Scrape) => value(f, 'gnocchi_processing_batches_total', { result: 'ok' });
    expect(batches(done) - batches(before)).toBe(1);
    expect(value(done, 'gnocchi_processing_batch_duration_seconds') - value(before, 'gnocchi_processing_batch_duration_seconds')).toBe(1);
  });

  it('counts requests by route pattern, method and status, never by raw path', async () => {
    const metric = await start();
    await pushMeasures(t.app, metric, points(2));
    await pushMeasures(t.app, metric, points(2, 2));
    expect((await json(t.app, 'GET', '/v1/no/such/path/123')).status).toBe(404);
    const scraped = await scrape();
    expect(value(scraped, 'gnocchi_http_request_duration_seconds', { route: '/v1/metric/:id/measures', method: 'POST', status: '202' })).toBe(2);
    expect(value(scraped, 'gnocchi_http_request_duration_seconds', { route: '(unmatched)', method: 'GET', status: '404' })).toBe(1);
    const routes = scraped.samples.map((m) => m.labels.route ?? '');
    expect(routes.some((r) => r.includes(metric) || r.includes('/no/such'))).toBe(false);
  });

  it('counts read cache hits and misses', async () => {
    const metric = await start();
    await pushMeasures(t.app, metric, points(3));
    await t.engine.processor.drained();
    const before = await scrape();
    // Answers are kept from a read's second asking (ReadCache.admit): miss, miss, hit, hit.
    for (let i = 0; i < 4; i++) expect((await json(t.app, 'GET', `/v1/metric/${metric}/measures`)).status).toBe(200);
    const after = await scrape();
    expect(value(after, 'gnocchi_read_cache_misses_total') - value(before, 'gnocchi_read_cache_misses_total')).toBe(2);
    expect(value(after, 'gnocchi_read_cache_hits_total') - value(before, 'gnocchi_read_cache_hits_total')).toBe(2);
  });

  const refusals: [string, Partial<Config>, (metric: string) => Promise<number>][] = [
    ['invalid', {}, async (m) => (await json(t.app, 'POST', `/v1/metric/${m}/measures`, '[{"timestamp": "x", "value": 1}]')).status],
    ['too_large', { bodyLimit: 1000 }, async (m) => (await json(t.app, 'POST', `/v1/metric/${m}/measures`, points(50))).status],
    [
      'backlog',
      { maxBacklog: 1 },
      async (m) => {
        await t.engine.processor.stop();
        await pushMeasures(t.app, m, points(1));
        return (await json(t.app, 'POST', '/v1/batch/metrics/measures', { [m]: points(1, 5) })).status;
      },
    ],
    ['storage_full', { mapSize: 2 * 1024 ** 2 }, async (m) => (await json(t.app, 'POST', `/v1/metric/${m}/measures`, points(200_000))).status],
  ];
  it.each(refusals)('counts a push refused as %s under its reason only', async (reason, overrides, refuse) => {
    const metric = await start(overrides);
    const before = await scrape();
    expect(await refuse(metric)).toBe({ invalid: 400, too_large: 413, backlog: 503, storage_full: 507 }[reason]);
    const after = await scrape();
    for (const r of ['invalid', 'too_large', 'backlog', 'storage_full']) {
      const delta = value(after, 'gnocchi_measure_pushes_refused_total', { reason: r }) - value(before, 'gnocchi_measure_pushes_refused_total', { reason: r });
      expect(delta, r).toBe(r === reason ? 1 : 0);
    }
  });

  it.each([0, 1])('reports the processing pool of %s worker thread(s), its utilisation only when it exists', async (workers) => {
    const metric = await start({ workers });
    await pushMeasures(t.app, metric, points(3));
    await t.engine.processor.drained();
    const scraped = await scrape();
    expect(value(scraped, 'gnocchi_processing_workers')).toBe(workers);
    const utilization = scraped.samples.find((m) => m.name === 'gnocchi_worker_utilization_ratio');
    if (workers === 0) expect(utilization).toBeUndefined();
    else {
      expect(utilization!.value).toBeGreaterThan(0);
      expect(utilization!.value).toBeLessThanOrEqual(1);
    }
  });

  it('is absent with --no-metrics', async () => {
    await start({ metrics: false });
    expect((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
  });

  it.each([
    [false, USER, 200],
    [true, USER, 403],
    [true, ADMIN, 200],
  ])('with admin-only %s, answers %s with %s', async (adminOnly, headers, status) => {
    await start({ metricsAdminOnly: adminOnly });
    expect((await t.app.inject({ method: 'GET', url: '/metrics', headers })).statusCode).toBe(status);
  });

  it('answers a scraper that sends no credentials unless admin-only', async () => {
    await start();
    expect((await t.app.inject({ method: 'GET', url: '/metrics', headers: { accept: 'text/plain' } })).statusCode).toBe(200);
  });
});
