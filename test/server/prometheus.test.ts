// Expected answers follow Gnocchi 4.4 (rest/api.py PrometheusWriteController
// and prometheus.yaml), except where server/routes/prometheus.ts documents a
// deliberate difference.
import { existsSync, readFileSync } from 'node:fs';
import { compress } from 'snappyjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeWriteRequest, type TimeSeries } from '../../formats/prometheus-remote.js';
import { ADMIN, createPolicy, json, readMeasures, startTestApp, USER, type Headers, type TestApp } from './helpers.js';

const FIXTURES = '/usr/lib/python3/dist-packages/gnocchi/tests/functional/gabbits/prometheus_fixtures/';
const PROTO: Headers = { ...ADMIN, 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy' };

let t: TestApp;
beforeEach(async () => {
  t = await startTestApp();
  await createPolicy(t.app, { name: 'space', definition: [{ granularity: '1 second', points: 100000 }] });
  await json(t.app, 'POST', '/v1/archive_policy_rule', { name: 'all', metric_pattern: '*', archive_policy_name: 'space' });
});
afterEach(async () => {
  await t.close();
});

async function post(payload: Buffer | Uint8Array, headers: Headers = PROTO) {
  const res = await t.app.inject({ method: 'POST', url: '/v1/prometheus/write', headers: { accept: 'application/json', ...headers }, payload: Buffer.from(payload) });
  return { status: res.statusCode, body: res.body === '' ? undefined : JSON.parse(res.body) };
}

const series = (labels: Record<string, string>, samples: [number, number][]): TimeSeries => ({
  labels: Object.entries(labels).map(([name, value]) => ({ name, value })),
  samples: samples.map(([timestampMs, value]) => ({ timestampMs, value })),
});
const request = (...ts: TimeSeries[]) => compress(encodeWriteRequest({ timeseries: ts }));

describe('prometheus remote write', () => {
  it.skipIf(!existsSync(FIXTURES))('stores the Gnocchi fixtures in one prometheus resource', async () => {
    expect((await post(readFileSync(FIXTURES + '031b586e-ebe1-4737-812e-cf0ddf26f5ad.dump'))).status).toBe(202);
    const list = await json(t.app, 'GET', '/v1/resource/prometheus');
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).toMatchObject({ job: 'prometheus', instance: 'localhost:9090', original_resource_id: 'prometheus@localhost:9090' });
    const r = await json(t.app, 'GET', '/v1/resource/prometheus/prometheus@localhost:9090');
    expect(Object.keys(r.body.metrics)).toHaveLength(56);
    const type = await json(t.app, 'GET', '/v1/resource_type/prometheus');
    expect(type.body.attributes).toEqual({
      instance: { type: 'string', required: true, min_length: 1, max_length: 512 },
      job: { type: 'string', required: true, min_length: 1, max_length: 512 },
    });
    const m = r.body.metrics.scrape_samples_scraped;
    expect((await readMeasures(t.app, m)).body[0]).toEqual(['2017-09-23T06:02:58+00:00', 1.0, 558.0]);
    for (const f of ['a0c06674-a5ef-4621-883c-e94880a2de02.dump', '1ea8f6f7-eebe-49d5-8276-ceb2d56c5ba4.dump']) {
      expect((await post(readFileSync(FIXTURES + f))).status).toBe(202);
    }
    expect((await readMeasures(t.app, m)).body[0]).toEqual(['2017-09-23T06:02:58+00:00', 1.0, 558.0]);
  });

  it('keys resources by job@instance, none when a label is missing; the last series of a name wins', async () => {
    const body = request(
      series({ __name__: 'up', job: 'j', instance: 'i:1' }, [[1000, 1]]),
      series({ __name__: 'up', job: 'j', instance: 'i:2' }, [[1000, 2]]),
      series({ __name__: 'q', job: 'j', instance: 'i:1', quantile: '0.5' }, [[1000, 5]]),
      series({ __name__: 'q', job: 'j', instance: 'i:1', quantile: '0.9' }, [[1000, 9]]),
      series({ __name__: 'lonely' }, [[2000, 3]]),
      series({ __name__: 'empty', job: 'j', instance: 'i:1' }, []),
    );
    expect((await post(body)).status).toBe(202);
    const list = await json(t.app, 'GET', '/v1/resource/prometheus?sort=original_resource_id');
    expect(list.body.map((r: any) => r.original_resource_id)).toEqual(['j@i:1', 'j@i:2', 'none@none']);
    const r = list.body[0];
    expect(Object.keys(r.metrics).sort()).toEqual(['q', 'up']);
    expect((await readMeasures(t.app, r.metrics.q)).body).toEqual([['1970-01-01T00:00:01+00:00', 1.0, 9.0]]);
  });

  it("checks every write's labels against the type as it is then", async () => {
    const up = request(series({ __name__: 'up', job: 'j', instance: 'i' }, [[1000, 1]]));
    expect((await post(up)).status).toBe(202);
    expect((await json(t.app, 'DELETE', '/v1/resource/prometheus/j@i')).status).toBe(204);
    expect((await json(t.app, 'DELETE', '/v1/resource_type/prometheus')).status).toBe(204);
    const attributes = { job: { type: 'string' }, instance: { type: 'string' }, zone: { type: 'string', required: true } };
    expect((await json(t.app, 'POST', '/v1/resource_type', { name: 'prometheus', attributes })).status).toBe(201);
    const refused = await post(up);
    expect(refused.status).toBe(400);
    expect(refused.body.description).toMatchObject({ reason: "required key not provided @ data['zone']" });
  });

  // A first write naming resources the route has not seen yet finds each as the index holds it.
  it.each([
    { case: 'a later resource exists: it gets the metric', existing: ['prometheus', { id: 'j@i:2', job: 'j', instance: 'i:2' }], status: 202, cause: undefined },
    { case: 'a later resource is of another type: 409', existing: ['generic', { id: 'j@i:2' }], status: 409, cause: 'Resource already exists' },
  ] as const)('answers a first write as if every resource were read: $case', async ({ existing: [type, resource], status, cause }) => {
    // A write of another resource creates the type; the resources below are new to the route.
    expect((await post(request(series({ __name__: 'up', job: 'j', instance: 'i:0' }, [[1000, 0]])))).status).toBe(202);
    expect((await json(t.app, 'POST', `/v1/resource/${type}`, resource)).status).toBe(201);
    const res = await post(request(series({ __name__: 'up', job: 'j', instance: 'i:1' }, [[1000, 1]]), series({ __name__: 'up', job: 'j', instance: 'i:2' }, [[1000, 2]])));
    expect(res.status).toBe(status);
    if (cause !== undefined) expect(res.body.description).toMatchObject({ cause });
    const first = await json(t.app, 'GET', '/v1/resource/prometheus/j@i:1');
    if (status !== 202) {
      expect(first.status).toBe(404);
      return;
    }
    for (const [instance, value] of [['i:1', 1], ['i:2', 2]] as const) {
      const r = await json(t.app, 'GET', `/v1/resource/prometheus/j@${instance}`);
      expect((await readMeasures(t.app, r.body.metrics.up)).body).toEqual([['1970-01-01T00:00:01+00:00', 1.0, value]]);
    }
  });

  it('adds new series names to an existing resource', async () => {
    expect((await post(request(series({ __name__: 'a', job: 'j', instance: 'i' }, [[1000, 1]])))).status).toBe(202);
    expect((await post(request(series({ __name__: 'b', job: 'j', instance: 'i' }, [[1000, 1]])))).status).toBe(202);
    const r = await json(t.app, 'GET', '/v1/resource/prometheus/j@i');
    expect(Object.keys(r.body.metrics).sort()).toEqual(['a', 'b']);
  });

  it('keeps writing to the metrics it found, and to those that replace deleted ones', async () => {
    const up = (ms: number, v: number) => request(series({ __name__: 'up', job: 'j', instance: 'i' }, [[ms, v]]), series({ __name__: 'down', job: 'j', instance: 'i' }, [[ms, -v]]));
    for (let k = 1; k <= 3; k++) expect((await post(up(1000 * k, k))).status).toBe(202);
    const r = await json(t.app, 'GET', '/v1/resource/prometheus/j@i');
    expect((await readMeasures(t.app, r.body.metrics.up)).body.map((p: [string, number, number]) => p[2])).toEqual([1, 2, 3]);
    expect((await json(t.app, 'DELETE', `/v1/metric/${r.body.metrics.up}`)).status).toBe(204);
    expect((await post(up(4000, 4))).status).toBe(202);
    const again = await json(t.app, 'GET', '/v1/resource/prometheus/j@i');
    expect(again.body.metrics.up).not.toBe(r.body.metrics.up);
    expect((await readMeasures(t.app, again.body.metrics.up)).body.map((p: [string, number, number]) => p[2])).toEqual([4]);
    expect((await readMeasures(t.app, again.body.metrics.down)).body.map((p: [string, number, number]) => p[2])).toEqual([-1, -2, -3, -4]);
  });

  it('stores a request it reads through protobufjs (an unknown field) as any other', async () => {
    const plain = encodeWriteRequest({ timeseries: [series({ __name__: 'x', job: 'j', instance: 'i' }, [[1000, 7]])] });
    // Field 15 of WriteRequest, a varint: unknown, skipped.
    const body = compress(Uint8Array.from([...plain, 0x78, 0x01]));
    expect((await post(body)).status).toBe(202);
    const r = await json(t.app, 'GET', '/v1/resource/prometheus/j@i');
    expect((await readMeasures(t.app, r.body.metrics.x)).body).toEqual([['1970-01-01T00:00:01+00:00', 1.0, 7.0]]);
  });

  it('refuses a label that is not UTF-8 as protobufjs does, before a series without __name__', async () => {
    const bytes = Buffer.from(encodeWriteRequest({ timeseries: [series({ job: 'j' }, [[1, 1]]), series({ __name__: 'a', job: 'éé' }, [[1, 1]])] }));
    bytes[bytes.indexOf(Buffer.from('éé'))] = 0xff;
    const res = await post(compress(bytes));
    expect(res.status).toBe(400);
    expect(res.body.description).toEqual({ cause: 'Invalid input', reason: 'Unable to decode WriteRequest: The encoded data was not valid for encoding utf-8', detail: [] });
  });

  it('refuses the new series past --max-series, storing the rest', async () => {
    await t.close();
    t = await startTestApp({ maxSeries: 2 });
    await createPolicy(t.app, { name: 'space', definition: [{ granularity: '1 second', points: 100000 }] });
    await json(t.app, 'POST', '/v1/archive_policy_rule', { name: 'all', metric_pattern: '*', archive_policy_name: 'space' });
    expect((await post(request(series({ __name__: 'a', job: 'j', instance: 'i' }, [[1000, 1]])))).status).toBe(202);
    const res = await post(request(series({ __name__: 'a', job: 'j', instance: 'i' }, [[2000, 2]]), series({ __name__: 'b', job: 'j', instance: 'i' }, [[2000, 2]]), series({ __name__: 'c', job: 'k', instance: 'i' }, [[2000, 2], [3000, 3]])));
    expect(res.status).toBe(400);
    expect(res.body.description).toBe('partial write: max-series limit exceeded: (2) dropped=2 (the measures of 1 new series past --max-series)');
    const r = await json(t.app, 'GET', '/v1/resource/prometheus/j@i');
    expect(Object.keys(r.body.metrics).sort()).toEqual(['a', 'b']);
    expect((await readMeasures(t.app, r.body.metrics.a)).body.map((p: [string, number, number]) => p[2])).toEqual([1, 2]);
    expect((await json(t.app, 'GET', '/v1/resource/prometheus/k@i')).status).toBe(404);
  });

  it('accepts an empty request', async () => {
    expect((await post(request())).status).toBe(202);
  });

  it('needs the right to create the prometheus type on first use', async () => {
    expect((await post(request(series({ __name__: 'a', job: 'j', instance: 'i' }, [[1000, 1]])), { ...PROTO, ...USER })).status).toBe(403);
    expect((await post(request(series({ __name__: 'a', job: 'j', instance: 'i' }, [[1000, 1]])))).status).toBe(202);
    // Now the type exists, anyone may write; the same labels of another user are another resource.
    expect((await post(request(series({ __name__: 'a', job: 'j', instance: 'i' }, [[1000, 1]])), { ...PROTO, ...USER })).status).toBe(202);
    expect((await json(t.app, 'GET', '/v1/resource/prometheus')).body).toHaveLength(2);
  });

  const refused: [string, Uint8Array, number][] = [
    ['a body that is not snappy', Buffer.from('not snappy at all'), 400],
    ['snappy that is not protobuf', compress(Buffer.from('\x0f\x0f\x0f\x0f')), 400],
    ['a series without __name__', request(series({ job: 'j' }, [[1, 1]])), 400],
    ['an empty job label', request(series({ __name__: 'a', job: '', instance: 'i' }, [[1, 1]])), 400],
    ['a / in the job', request(series({ __name__: 'a', job: 'a/b', instance: 'i' }, [[1, 1]])), 400],
    ['a / in the name', request(series({ __name__: 'a/b', job: 'j', instance: 'i' }, [[1, 1]])), 400],
    ['a timestamp before the epoch', request(series({ __name__: 'a', job: 'j', instance: 'i' }, [[-5000, 1]])), 400],
  ];
  it.each(refused)('refuses %s with 400, storing nothing', async (_name, body, status) => {
    const res = await post(body);
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ code: status });
    const list = await json(t.app, 'GET', '/v1/resource/prometheus');
    expect(list.status === 404 || list.body.length === 0).toBe(true);
  });

  it('refuses a body that inflates beyond the body limit with 413', async () => {
    await t.close();
    t = await startTestApp({ bodyLimit: 4096 });
    const res = await post(compress(new Uint8Array(1_000_000)));
    expect(res.status).toBe(413);
    expect(res.body.title).toBe('Request Entity Too Large');
  });

  it('needs credentials', async () => {
    const { authorization: _, ...anonymous } = PROTO;
    expect((await post(request(), anonymous)).status).toBe(401);
  });
});
