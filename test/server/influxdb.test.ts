// Expected answers follow Gnocchi 4.4 (rest/influxdb.py and influxdb.yaml),
// except where server/routes/influxdb.ts documents a deliberate difference.
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN, createPolicy, json, readMeasures, startInfluxTestApp, startTestApp, USER, type Headers, type TestApp } from './helpers.js';

let t: TestApp;
beforeEach(async () => {
  t = await startInfluxTestApp();
});
afterEach(async () => {
  await t.close();
});

const TEXT: Headers = { ...ADMIN, 'content-type': 'text/plain' };
const write = (body: string, query = 'db=db1', headers: Headers = TEXT) => json(t.app, 'POST', `/v1/influxdb/write?${query}`, body, headers);

async function metricOf(resource: string, name: string, headers: Headers = ADMIN) {
  const r = await json(t.app, 'GET', `/v1/resource/db1/${resource}/metric/${encodeURIComponent(name)}`, undefined, headers);
  return r;
}

async function pointsOf(resource: string, name: string) {
  const m = await metricOf(resource, name);
  expect(m.status).toBe(200);
  return (await readMeasures(t.app, m.body.id)).body;
}

describe('ping', () => {
  it('answers 204 with the version header, to anyone', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/influxdb/ping' });
    expect(res.statusCode).toBe(204);
    expect(res.headers['x-influxdb-version']).toBe('Gnocchi 4.4.2');
    expect(res.body).toBe('');
  });

  it('answers HEAD with 405, as Gnocchi does', async () => {
    const res = await t.app.inject({ method: 'HEAD', url: '/v1/influxdb/ping', headers: ADMIN });
    expect(res.statusCode).toBe(405);
  });
});

describe('query', () => {
  it('creates the resource type of a database, and again without error', async () => {
    expect((await json(t.app, 'GET', '/v1/resource_type/db1')).body).toEqual({ name: 'db1', attributes: {}, state: 'active' });
    expect((await json(t.app, 'POST', '/v1/influxdb/query?q=CREATE%20DATABASE%20db1%3B')).status).toBe(204);
  });

  it('accepts a quoted database name', async () => {
    expect((await json(t.app, 'POST', '/v1/influxdb/query?q=' + encodeURIComponent('create database "my \\"db\\""'))).status).toBe(204);
    expect((await json(t.app, 'GET', `/v1/resource_type/${encodeURIComponent('my "db"')}`)).status).toBe(200);
  });

  it('does nothing without q', async () => {
    expect((await json(t.app, 'POST', '/v1/influxdb/query')).status).toBe(204);
  });

  it.each(['select metrics plz', 'show databases', 'create database', 'create database a b', 'create database a; drop database a', 'create database 1a'])(
    'answers 501 to %j',
    async (q) => {
      const res = await json(t.app, 'POST', `/v1/influxdb/query?q=${encodeURIComponent(q)}`);
      expect(res.status).toBe(501);
      expect(res.body.description).toEqual({ cause: 'Not implemented error', detail: 'q', reason: 'Query not implemented' });
    },
  );

  it('needs the right to create resource types', async () => {
    expect((await json(t.app, 'POST', '/v1/influxdb/query?q=create+database+x', undefined, USER)).status).toBe(403);
  });

  it('answers GET with 405', async () => {
    expect((await json(t.app, 'GET', '/v1/influxdb/query?q=create+database+x')).status).toBe(405);
  });
});

describe('write', () => {
  it('creates the resource and metrics, with the measures', async () => {
    const res = await write('mymetric,host=foobar,mytag=myvalue field=123 1510581804179554816');
    expect(res.status).toBe(204);
    const r = await json(t.app, 'GET', '/v1/resource/db1/foobar');
    expect(r.body).toMatchObject({ original_resource_id: 'foobar', id: 'b4d568e4-7af1-5aec-ac3f-9c09fa3685a9', type: 'db1', creator: 'admin' });
    expect(Object.keys(r.body.metrics)).toEqual(['mymetric.field@mytag=myvalue']);
    expect(await pointsOf('foobar', 'mymetric.field@mytag=myvalue')).toEqual([['2017-11-13T14:00:00+00:00', 3600.0, 123.0]]);
  });

  it('names the resource by the tag of the header, sorts tags and replaces /', async () => {
    const res = await write('cpu,path=/foo,b=2,a=1,host=h f=43i,g=1.5 1510581804179554816', 'db=db1', {
      ...TEXT,
      'x-gnocchi-influxdb-tag-resource-id': 'b',
    });
    expect(res.status).toBe(204);
    const r = await json(t.app, 'GET', '/v1/resource/db1/2');
    expect(Object.keys(r.body.metrics).sort()).toEqual(['cpu.f@a=1,host=h,path=_foo', 'cpu.g@a=1,host=h,path=_foo']);
  });

  it('skips string fields, stores booleans as 1 and 0, adds metrics later', async () => {
    expect((await write('m,host=h s="text",b=true,n=2 3600000000000')).status).toBe(204);
    expect((await write('m,host=h b=false,x=5 7200000000000')).status).toBe(204);
    const r = await json(t.app, 'GET', '/v1/resource/db1/h');
    expect(Object.keys(r.body.metrics).sort()).toEqual(['m.b', 'm.n', 'm.x']);
    expect(await pointsOf('h', 'm.b')).toEqual([
      ['1970-01-01T01:00:00+00:00', 3600.0, 1.0],
      ['1970-01-01T02:00:00+00:00', 3600.0, 0.0],
    ]);
  });

  it.each([
    ['ns', '1510581804179554816'],
    ['u', '1510581804179554'],
    ['ms', '1510581804179'],
    ['s', '1510581804'],
    ['h', '419606'],
  ])('reads timestamps with precision=%s', async (precision, ts) => {
    expect((await write(`m,host=p f=1 ${ts}`, `db=db1&precision=${precision}`)).status).toBe(204);
    expect(await pointsOf('p', 'm.f')).toEqual([['2017-11-13T14:00:00+00:00', 3600.0, 1.0]]);
  });

  it('timestamps lines without one with the time of the request', async () => {
    const before = Date.now();
    expect((await write('m,host=n f=1')).status).toBe(204);
    const points = await pointsOf('n', 'm.f');
    expect(points).toHaveLength(1);
    expect(Date.parse(points[0][0])).toBeLessThanOrEqual(before);
    expect(before - Date.parse(points[0][0])).toBeLessThan(3600_000);
  });

  it('accepts an empty body', async () => {
    expect((await write('')).status).toBe(204);
    expect((await write('\n\n# nothing\n')).status).toBe(204);
  });

  const refused: [string, string, string, number, unknown][] = [
    ['a bad line', 'm,host=h f=1\nbad line', 'db=db1', 400, { cause: 'Value error', detail: 'line', reason: 'Unable to parse line 2' }],
    ['trailing garbage', 'm,host=h f=1 1 2', 'db=db1', 400, { cause: 'Value error', detail: 'line', reason: 'Unable to parse line 1' }],
    ['a line without the resource tag', 'm,other=h f=1', 'db=db1', 400, { cause: 'Value error', detail: 'key', reason: "Unable to find key `host' in tags" }],
    ['a timestamp before the epoch', 'm,host=h f=1 -1', 'db=db1', 400, { cause: 'Value error', detail: 'line', reason: 'Unable to parse line 1' }],
    ['a timestamp too far', 'm,host=h f=1 99999999999999999999', 'db=db1&precision=s', 400, { cause: 'Value error', detail: 'line', reason: 'Unable to parse line 1' }],
    ['an unknown precision', 'm,host=h f=1', 'db=db1&precision=d', 400, { cause: 'Argument value error', reason: 'Invalid precision: d', detail: 'precision' }],
    ['an unknown database', 'm,host=h f=1', 'db=nope', 404, 'Resource type nope does not exist'],
    ['a / in the resource id', 'm,host=a/b f=1', 'db=db1', 400, "'/' is not supported in resource id"],
  ];
  it.each(refused)('refuses %s', async (_name, body, query, status, description) => {
    const res = await write(body, query);
    expect(res.status).toBe(status);
    expect(res.body.description).toEqual(description);
    // Nothing was written.
    expect((await json(t.app, 'GET', '/v1/resource/db1')).body).toEqual([]);
  });

  it('refuses invalid UTF-8', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/influxdb/write?db=db1',
      headers: { ...TEXT, accept: 'application/json' },
      payload: Buffer.from([0x6d, 0x2c, 0xff, 0x3d, 0x31, 0x20, 0x66, 0x3d, 0x31]),
    });
    expect(res.statusCode).toBe(400);
  });

  it('refuses metric names longer than Gnocchi stores', async () => {
    const res = await write(`m,host=h ${'f'.repeat(300)}=1`);
    expect(res.status).toBe(400);
  });

  it('refuses a bad metric name on every write of it, beside a series the first write stored', async () => {
    // A refusal is not remembered as a pass: every write of the bad name is checked again.
    expect((await write('m,host=h f=1 3600000000000')).status).toBe(204);
    for (let round = 0; round < 2; round++) {
      expect((await write(`m,host=h f=2 7200000000000\nm,host=h ${'g'.repeat(300)}=1 7200000000000`)).status).toBe(400);
    }
    expect((await write('m,host=h f=3 10800000000000')).status).toBe(204);
  });

  it('answers 409 when the id belongs to a resource of another type', async () => {
    expect((await json(t.app, 'POST', '/v1/resource/generic', { id: 'conflict' })).status).toBe(201);
    const res = await write('mymetric,host=conflict,mytag=myvalue field=123 1510581804179554816');
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ title: 'Conflict', description: { cause: 'Resource already exists', detail: 'da19a545-af76-5081-9a88-f370baab66c6' } });
  });

  it('answers 400 without an archive policy rule for a new metric', async () => {
    await json(t.app, 'DELETE', '/v1/archive_policy_rule/all');
    const res = await write('m,host=h f=1');
    expect(res.status).toBe(400);
    expect(res.body.description).toMatch(/no archive policy rule found matching the metric name m.f/);
  });

  it.each([
    ['n', '1510581804179554816'],
    ['us', '1510581804179554'],
    ['µ', '1510581804179554'],
    ['µs', '1510581804179554'],
    ['m', '25176363'],
  ])('reads timestamps with precision=%s too', async (precision, ts) => {
    expect((await write(`m,host=p f=1 ${ts}`, `db=db1&precision=${encodeURIComponent(precision)}`)).status).toBe(204);
    expect(await pointsOf('p', 'm.f')).toEqual([['2017-11-13T14:00:00+00:00', 3600.0, 1.0]]);
  });

  it('names metrics from escaped and quoted measurements, tags and fields', async () => {
    const lines = ['my\\ cpu\\,x,host=h,t\\=a=v\\ 1 f\\ 1=1 3600000000000', '"q m",host=h,"k"="v w" "f 2"=2,s="a \\"quoted\\" string, f=9" 3600000000000'];
    expect((await write(lines.join('\n'))).status).toBe(204);
    const r = await json(t.app, 'GET', '/v1/resource/db1/h');
    expect(Object.keys(r.body.metrics).sort()).toEqual(['my cpu,x.f 1@t=a=v 1', 'q m.f 2@k=v w']);
    expect(await pointsOf('h', 'my cpu,x.f 1@t=a=v 1')).toEqual([['1970-01-01T01:00:00+00:00', 3600.0, 1.0]]);
  });

  it('stores integers, unsigned integers and booleans as numbers', async () => {
    expect((await write('m,host=h i=-42i,u=7u,big=9007199254740993i,t=TRUE,f=f 3600000000000')).status).toBe(204);
    const values = await Promise.all(['m.i', 'm.u', 'm.big', 'm.t', 'm.f'].map(async (name) => (await pointsOf('h', name))[0][2]));
    expect(values).toEqual([-42, 7, 9007199254740992, 1, 0]);
  });

  it('puts every point of a series repeated in a write into one metric, in order, whatever the tag order', async () => {
    const lines = [
      'cpu,host=h,region=r1 usage=1 60000000000',
      'cpu,host=h,region=r1 usage=2 120000000000',
      'cpu,region=r1,host=h usage=3 180000000000',
      'cpu,host=h,region=r1,region=r1 usage=4 240000000000',
      'cpu,host=h,region=r1 usage=5,usage=6 300000000000',
      'cpu,host=h,region=r1 usage=7,"usage"=8 360000000000',
      'cpu,host=h,region=r1 usage=9,usage="s" 420000000000',
    ];
    expect((await write(lines.join('\n'), 'db=db1&precision=ns')).status).toBe(204);
    const r = await json(t.app, 'GET', '/v1/resource/db1/h');
    expect(Object.keys(r.body.metrics)).toEqual(['cpu.usage@region=r1']);
    const m = r.body.metrics['cpu.usage@region=r1'];
    // A field given twice in a line counts once, with its last value (a string: none).
    const count = await json(t.app, 'GET', `/v1/metric/${m}/measures?refresh=true&aggregation=count`);
    expect(count.body).toEqual([['1970-01-01T00:00:00+00:00', 3600.0, 6.0]]);
    const sum = await json(t.app, 'GET', `/v1/metric/${m}/measures?aggregation=sum`);
    expect(sum.body).toEqual([['1970-01-01T00:00:00+00:00', 3600.0, 1 + 2 + 3 + 4 + 6 + 8]]);
  });

  it('keeps the points of the last key of a resource named under two (its id in two spellings), as Gnocchi does', async () => {
    const id = '8f8bb2d6-1cd0-4d06-9f5e-3c1c1d8e7f11';
    const lines = [`cpu,host=${id} usage=1 60000000000`, `cpu,host=${id.toUpperCase()} usage=2 120000000000`, `cpu,host=${id} usage=3 180000000000`];
    expect((await write(lines.join('\n'))).status).toBe(204);
    const m = (await metricOf(id, 'cpu.usage')).body.id;
    const sum = await json(t.app, 'GET', `/v1/metric/${m}/measures?refresh=true&aggregation=sum`);
    expect(sum.body).toEqual([['1970-01-01T00:00:00+00:00', 3600.0, 2]]);
  });

  it('stores every point of short lines of many fields', async () => {
    const lines = Array.from({ length: 500 }, (_, i) => `m,host=h a=${i},b=1,c=2,d=3,e=4,f=5,g=6 ${i * 60}000000000`);
    expect((await write(lines.join('\n'))).status).toBe(204);
    const m = (await metricOf('h', 'm.a')).body.id;
    const count = await json(t.app, 'GET', `/v1/metric/${m}/measures?refresh=true&aggregation=count`);
    const sum = await json(t.app, 'GET', `/v1/metric/${m}/measures?aggregation=sum`);
    expect(count.body.reduce((n: number, p: number[]) => n + p[2]!, 0)).toBe(500);
    expect(sum.body.reduce((n: number, p: number[]) => n + p[2]!, 0)).toBe((499 * 500) / 2);
  });

  it('adds a metric for new tags of an existing resource, and keeps writing the known ones', async () => {
    expect((await write('cpu,host=h,a=1 f=1 3600000000000')).status).toBe(204);
    for (let round = 0; round < 2; round++) {
      expect((await write(`cpu,host=h,a=1 f=2 7200000000000\ncpu,host=h,a=1,b=2 f=3 7200000000000`)).status).toBe(204);
    }
    const r = await json(t.app, 'GET', '/v1/resource/db1/h');
    expect(Object.keys(r.body.metrics).sort()).toEqual(['cpu.f@a=1', 'cpu.f@a=1,b=2']);
    expect(await pointsOf('h', 'cpu.f@a=1')).toEqual([
      ['1970-01-01T01:00:00+00:00', 3600.0, 1.0],
      ['1970-01-01T02:00:00+00:00', 3600.0, 2.0],
    ]);
    expect(await pointsOf('h', 'cpu.f@a=1,b=2')).toEqual([['1970-01-01T02:00:00+00:00', 3600.0, 3.0]]);
  });

  it('writes to the metric that exists now after a metric or its resource is deleted', async () => {
    const line = (v: number) => `m,host=h f=${v} ${v * 3600}000000000`;
    // Written twice: the second write finds the record it resolved current, and trusts it until the index changes.
    expect((await write(line(1))).status).toBe(204);
    expect((await write(line(1))).status).toBe(204);
    const first = (await metricOf('h', 'm.f')).body.id;
    expect((await json(t.app, 'DELETE', `/v1/metric/${first}`)).status).toBe(204);
    expect((await write(line(2))).status).toBe(204);
    expect((await write(line(2))).status).toBe(204);
    const second = (await metricOf('h', 'm.f')).body.id;
    expect(second).not.toBe(first);
    expect(await pointsOf('h', 'm.f')).toEqual([['1970-01-01T02:00:00+00:00', 3600.0, 2.0]]);

    expect((await json(t.app, 'DELETE', '/v1/resource/db1/h')).status).toBe(204);
    expect((await write(line(3))).status).toBe(204);
    expect((await metricOf('h', 'm.f')).body.id).not.toBe(second);
    expect(await pointsOf('h', 'm.f')).toEqual([['1970-01-01T03:00:00+00:00', 3600.0, 3.0]]);

    // The metric detached from its resource, which is gone, then the id taken by a resource of another type with it.
    const third = (await metricOf('h', 'm.f')).body.id;
    expect((await json(t.app, 'PATCH', '/v1/resource/db1/h', { metrics: {} })).status).toBe(200);
    expect((await json(t.app, 'DELETE', '/v1/resource/db1/h')).status).toBe(204);
    expect((await json(t.app, 'POST', '/v1/resource/generic', { id: 'h', metrics: { 'm.f': third } })).status).toBe(201);
    const res = await write(line(4));
    expect(res.status).toBe(409);
    expect(res.body.description).toMatchObject({ cause: 'Resource already exists' });
  });

  it('never answers a body of tricky lines with a 5xx', async () => {
    const chars = ['m', 'h', 'host', '=', ',', ' ', '\\', '"', '1', '.', 'e', '-', 'i', 't', '\n', '#', 'é', '\r'];
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...chars), { maxLength: 40 }), async (parts) => {
        const res = await write(parts.join(''));
        expect(res.status).toBeLessThan(500);
      }),
      { numRuns: 150, seed: 17 },
    );
  });

  it('needs credentials, and refuses writing to another user\'s resource', async () => {
    expect((await write('m,host=h f=1', 'db=db1', { 'content-type': 'text/plain' })).status).toBe(401);
    expect((await write('m,host=h f=1', 'db=db1', USER)).status).toBe(204);
    // The same host name of another user is another resource.
    expect((await write('m,host=h f=1')).status).toBe(204);
    expect((await json(t.app, 'GET', '/v1/resource/db1')).body).toHaveLength(2);
  });
});

describe('write with --max-series', () => {
  beforeEach(async () => {
    await t.close();
    t = await startTestApp({ maxSeries: 3 });
    await createPolicy(t.app, { name: 'low', definition: [{ granularity: '1 hour', points: 100000 }] });
    await json(t.app, 'POST', '/v1/archive_policy_rule', { name: 'all', metric_pattern: '*', archive_policy_name: 'low' });
    await json(t.app, 'POST', '/v1/influxdb/query?q=create+database+db1');
  });

  const refusedCount = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: ADMIN });
    return Number(/^gnocchi_series_refused_total (\d+)$/m.exec(res.body)![1]);
  };

  it('refuses the points of new series past the bound with a partial write, storing the rest', async () => {
    expect((await write('m,host=a f=1 3600000000000\nm,host=b f=1 3600000000000')).status).toBe(204);
    const lines = ['m,host=a f=2 7200000000000', 'm,host=c f=2 7200000000000', 'm,host=d f=2 7200000000000', 'm,host=d f=3 10800000000000', 'm,host=e g=2,h=3 7200000000000'];
    const res = await write(lines.join('\n'));
    expect(res.status).toBe(400);
    expect(res.body.description).toBe('partial write: max-series limit exceeded: (3) dropped=4 (the measures of 3 new series past --max-series)');
    expect(await pointsOf('a', 'm.f')).toEqual([
      ['1970-01-01T01:00:00+00:00', 3600.0, 1.0],
      ['1970-01-01T02:00:00+00:00', 3600.0, 2.0],
    ]);
    expect(await pointsOf('c', 'm.f')).toEqual([['1970-01-01T02:00:00+00:00', 3600.0, 2.0]]);
    // No resource without its metrics.
    const resources = await json(t.app, 'GET', '/v1/resource/db1');
    expect(resources.body.map((r: { original_resource_id: string }) => r.original_resource_id).sort()).toEqual(['a', 'b', 'c']);
    expect(await refusedCount()).toBe(3);
    // Existing series are always written.
    expect((await write('m,host=c f=4 14400000000000')).status).toBe(204);
  });

  it('takes no bound with 0', async () => {
    await t.close();
    t = await startTestApp({ maxSeries: 0 });
    await createPolicy(t.app, { name: 'low', definition: [{ granularity: '1 hour', points: 100000 }] });
    await json(t.app, 'POST', '/v1/archive_policy_rule', { name: 'all', metric_pattern: '*', archive_policy_name: 'low' });
    await json(t.app, 'POST', '/v1/influxdb/query?q=create+database+db1');
    const lines = Array.from({ length: 10 }, (_, i) => `m,host=h${i} f=1`);
    expect((await write(lines.join('\n'))).status).toBe(204);
    expect(await refusedCount()).toBe(0);
  });
});
