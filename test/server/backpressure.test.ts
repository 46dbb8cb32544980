// Backpressure: past --max-backlog measures waiting to be processed, every
// measure push answers 503 with Retry-After; once processing has brought the
// backlog under the bound pushes are accepted again, and every measure that
// was acknowledged is processed.
import { compress } from 'snappyjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeWriteRequest } from '../../formats/prometheus-remote.js';
import { ADMIN, createMetric, createPolicy, json, startTestApp, type TestApp } from './helpers.js';

const BOUND = 5;

let t: TestApp;
let metric: string;
beforeEach(async () => {
  t = await startTestApp({ maxBacklog: BOUND });
  await createPolicy(t.app, { name: 'low', aggregation_methods: ['count'], definition: [{ granularity: '1 second', points: 100000 }] });
  expect((await json(t.app, 'POST', '/v1/archive_policy_rule', { name: 'all', metric_pattern: '*', archive_policy_name: 'low' })).status).toBe(201);
  metric = await createMetric(t.app, { archive_policy_name: 'low' });
  expect((await json(t.app, 'POST', '/v1/resource/generic', { id: 'r', metrics: { m: { archive_policy_name: 'low' } } })).status).toBe(201);
  expect((await json(t.app, 'POST', '/v1/influxdb/query?q=create+database+db1')).status).toBe(204);
});
afterEach(async () => {
  await t.close();
});

/** `n` measures one second apart, starting at `from` seconds past 2024-01-01. */
const measures = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => ({ timestamp: new Date(Date.UTC(2024, 0, 1) + (from + i) * 1000).toISOString(), value: i }));

interface Push {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

/** One push per endpoint that accepts measures; `from` keeps timestamps distinct. */
const PUSHES: [string, (from: number) => Promise<Push>][] = [
  ['POST /v1/metric/:id/measures', (from) => inject('POST', `/v1/metric/${metric}/measures`, 'application/json', JSON.stringify(measures(from, 2)))],
  ['POST /v1/resource/generic/r/metric/m/measures', (from) => inject('POST', '/v1/resource/generic/r/metric/m/measures', 'application/json', JSON.stringify(measures(from, 2)))],
  ['POST /v1/batch/metrics/measures', (from) => inject('POST', '/v1/batch/metrics/measures', 'application/json', JSON.stringify({ [metric]: measures(from, 2) }))],
  [
    'POST /v1/batch/resources/metrics/measures',
    (from) => inject('POST', '/v1/batch/resources/metrics/measures', 'application/json', JSON.stringify({ r: { m: measures(from, 2) } })),
  ],
  ['POST /v1/influxdb/write', (from) => inject('POST', '/v1/influxdb/write?db=db1', 'text/plain', `cpu,host=h value=1 ${(1_704_067_200 + from) * 1e9}\ncpu,host=h value=2 ${(1_704_067_201 + from) * 1e9}`)],
  [
    'POST /v1/prometheus/write',
    (from) =>
      inject(
        'POST',
        '/v1/prometheus/write',
        'application/x-protobuf',
        Buffer.from(
          compress(
            encodeWriteRequest({
              timeseries: [{ labels: [{ name: '__name__', value: 'up' }, { name: 'job', value: 'j' }, { name: 'instance', value: 'i' }], samples: [{ timestampMs: (1_704_067_200 + from) * 1000, value: 1 }, { timestampMs: (1_704_067_201 + from) * 1000, value: 1 }] }],
            }),
          ),
        ),
        { 'content-encoding': 'snappy' },
      ),
  ],
];

async function inject(method: 'POST', url: string, type: string, payload: string | Buffer, extra: Record<string, string> = {}): Promise<Push> {
  const res = await t.app.inject({ method, url, headers: { ...ADMIN, accept: 'application/json', 'content-type': type, ...extra }, payload });
  return { status: res.statusCode, headers: res.headers, body: res.body };
}

async function backlog(): Promise<number> {
  return (await json(t.app, 'GET', '/v1/status?details=false')).body.storage.summary.measures;
}

/** Measures stored under all the metrics, after processing everything. */
async function processedCount(): Promise<number> {
  await t.engine.processor.drained();
  let total = 0;
  for (const m of (await json(t.app, 'GET', '/v1/metric')).body as { id: string }[]) {
    const res = await json(t.app, 'GET', `/v1/metric/${m.id}/measures?aggregation=count&refresh=true`);
    total += (res.body as [string, number, number][]).reduce((n, [, , c]) => n + c, 0);
  }
  return total;
}

describe('backpressure', () => {
  it.each(PUSHES)('%s answers 503 with Retry-After past the bound, 2xx again once drained', async (_name, push) => {
    await t.engine.processor.stop();
    let acknowledged = 0;
    let from = 0;
    // Fill the backlog past the bound: the push that crosses it is accepted.
    while ((await backlog()) < BOUND) {
      const res = await push(from);
      expect(res.status).toBeLessThan(300);
      acknowledged += 2;
      from += 2;
    }
    const refused = await push(from);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(JSON.parse(refused.body)).toEqual({
      code: 503,
      title: 'Service Unavailable',
      description: `Too many measures waiting to be processed (${acknowledged}, limit ${BOUND}): retry later`,
    });
    expect(await backlog()).toBe(acknowledged);

    t.engine.processor.start();
    await t.engine.processor.drained();
    expect(await backlog()).toBe(0);
    const accepted = await push(from);
    expect(accepted.status).toBeLessThan(300);
    acknowledged += 2;
    expect(await processedCount()).toBe(acknowledged);
  });

  it('answers the plain-text page with Retry-After to clients that do not ask for JSON', async () => {
    await t.engine.processor.stop();
    const body = JSON.stringify(measures(0, BOUND));
    const headers = { ...ADMIN, 'content-type': 'application/json' };
    expect((await t.app.inject({ method: 'POST', url: `/v1/metric/${metric}/measures`, headers, payload: body })).statusCode).toBe(202);
    const res = await t.app.inject({ method: 'POST', url: `/v1/metric/${metric}/measures`, headers, payload: body });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body).toMatch(/^503 Service Unavailable\n/);
  });

  it('accepts a single batch larger than the bound when nothing is waiting', async () => {
    await t.engine.processor.stop();
    expect((await json(t.app, 'POST', `/v1/metric/${metric}/measures`, measures(0, BOUND * 4))).status).toBe(202);
    expect(await backlog()).toBe(BOUND * 4);
  });

  it('stops counting the measures of a deleted metric', async () => {
    await t.engine.processor.stop();
    expect((await json(t.app, 'POST', `/v1/metric/${metric}/measures`, measures(0, BOUND))).status).toBe(202);
    const other = await createMetric(t.app, { archive_policy_name: 'low' });
    expect((await json(t.app, 'POST', `/v1/metric/${other}/measures`, measures(0, 1))).status).toBe(503);
    expect((await json(t.app, 'DELETE', `/v1/metric/${metric}`)).status).toBe(204);
    expect((await json(t.app, 'POST', `/v1/metric/${other}/measures`, measures(0, 1))).status).toBe(202);
  });

  it('has no bound with --max-backlog 0', async () => {
    await t.close();
    t = await startTestApp({ maxBacklog: 0 });
    await createPolicy(t.app, { name: 'low', definition: [{ granularity: '1 second', points: 100 }] });
    metric = await createMetric(t.app, { archive_policy_name: 'low' });
    await t.engine.processor.stop();
    for (let i = 0; i < 5; i++) {
      expect((await json(t.app, 'POST', `/v1/metric/${metric}/measures`, measures(i * 10, 10))).status).toBe(202);
    }
    expect(await backlog()).toBe(50);
  });
});
