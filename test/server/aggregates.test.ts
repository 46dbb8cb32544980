// /v1/aggregates with metric ids, the deprecated /v1/aggregation/metric and
// /v1/search/metric through the real app. Expected values computed by hand;
// error bodies as Gnocchi 4.4 answers them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetric, createPolicy, json, pushMeasures, startTestApp, USER, type TestApp } from './helpers.js';

let t: TestApp;
let m1: string;
let m2: string;
let m3: string;

beforeAll(async () => {
  t = await startTestApp();
  await createPolicy(t.app, { name: 'cookies', definition: [{ granularity: '1 second' }, { granularity: '60 second' }] });
  await createPolicy(t.app, { name: 'cake', definition: [{ granularity: '5 second' }] });
  m1 = await createMetric(t.app, { archive_policy_name: 'cookies' }, USER);
  m2 = await createMetric(t.app, { archive_policy_name: 'cookies' }, USER);
  m3 = await createMetric(t.app, { archive_policy_name: 'cake' }, USER);
  await pushMeasures(t.app, m1, [
    { timestamp: '2015-03-06T14:33:57', value: 43.1 },
    { timestamp: '2015-03-06T14:34:12', value: 12 },
    { timestamp: '2015-03-06T14:34:15', value: -16 },
  ]);
  await pushMeasures(t.app, m2, [
    { timestamp: '2015-03-06T14:33:57', value: 2 },
    { timestamp: '2015-03-06T14:34:12', value: 4 },
    { timestamp: '2015-03-06T14:35:12', value: 10 },
  ]);
});

afterAll(async () => {
  await t.close();
});

const post = (query: string, body: unknown) => json(t.app, 'POST', `/v1/aggregates${query}`, body, USER);

describe('POST /v1/aggregates', () => {
  it('aggregates across metrics at every shared granularity', async () => {
    const res = await post('?refresh=true', { operations: `(aggregate mean (metric (${m1} mean) (${m2} mean)))` });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      measures: {
        aggregated: [
          ['2015-03-06T14:33:00+00:00', 60, 22.55],
          ['2015-03-06T14:34:00+00:00', 60, 1],
          ['2015-03-06T14:35:00+00:00', 60, 10],
          ['2015-03-06T14:33:57+00:00', 1, 22.55],
          ['2015-03-06T14:34:12+00:00', 1, 8],
          ['2015-03-06T14:34:15+00:00', 1, -16],
          ['2015-03-06T14:35:12+00:00', 1, 10],
        ],
      },
    });
  });

  it('answers per metric without aggregation, with references on details', async () => {
    const res = await post('?granularity=60&details=true', ['+', ['metric', [m1, 'max'], [m2, 'min']], 1]);
    expect(res.status).toBe(400); // the body must be an object
    const ok = await post('?granularity=60&details=true', { operations: ['+', ['metric', [m1, 'max'], [m2, 'min']], 1] });
    expect(ok.status).toBe(200);
    expect(ok.body.measures[m1].max).toEqual([
      ['2015-03-06T14:33:00+00:00', 60, 44.1],
      ['2015-03-06T14:34:00+00:00', 60, 13],
    ]);
    expect(ok.body.measures[m2].min[2]).toEqual(['2015-03-06T14:35:00+00:00', 60, 11]);
    expect(ok.body.references.map((r: any) => r.id).sort()).toEqual([m1, m2].sort());
    expect(ok.body.references[0].archive_policy.name).toBe('cookies');
  });

  it('checks the overlap when needed_overlap is given', async () => {
    const res = await post('?granularity=1&needed_overlap=100&start=2015-03-06T14:00:00&stop=2015-03-06T15:00:00', { operations: `(aggregate mean (metric (${m1} mean) (${m2} mean)))` });
    expect(res.status).toBe(400);
    expect(res.body.description).toEqual({
      cause: "Metrics can't being aggregated",
      reason: 'Less than 100.000000% of datapoints overlap in this timespan (50.00%)',
      detail: [[m1, 'mean'], [m2, 'mean']],
    });
  });

  it.each<[string, string, unknown, number, unknown]>([
    ['unparseable', '', { operations: '(metric' }, 400, { cause: 'Invalid operations' }],
    ['no metric', '', { operations: '(+ 1 2)' }, 400, { cause: 'Operations is invalid', reason: "At least one 'metric' is required" }],
    ['bad uuid', '', { operations: '(metric foo mean)' }, 400, { cause: 'Invalid metric references', detail: [['foo', 'mean']] }],
    ['unknown metric', '', { operations: '(metric 8c062a7e-9f9f-4b1c-9996-9d0328512ab7 mean)' }, 404, { cause: 'Unknown metrics', detail: ['8c062a7e-9f9f-4b1c-9996-9d0328512ab7'] }],
    ['bad fill', '?fill=foobar', { operations: '(metric x mean)' }, 400, { cause: 'Argument value error', detail: 'fill', reason: "Must be a float, 'dropna' or 'null'" }],
    ['bad start', '?start=notadate', {}, 400, { cause: 'Argument value error', detail: 'start', reason: 'Must be a datetime or a timestamp' }],
    ['bad overlap', '?needed_overlap=x', {}, 400, { cause: 'Argument value error', detail: 'needed_overlap', reason: 'Must be a number' }],
    ['overlap out of range', '?needed_overlap=150', {}, 400, { cause: 'Argument value error', detail: 'needed_overlap' }],
    ['bad granularity', '?granularity=foobar', {}, 400, { cause: 'Argument value error', detail: 'granularity', reason: 'Unable to parse timespan' }],
    ['missing operations', '', {}, 400, { cause: 'Invalid input', detail: ['operations'] }],
  ])('refuses %s', async (_name, query, body, status, description) => {
    const res = await post(query, body);
    expect(res.status).toBe(status);
    expect(res.body.description).toMatchObject(description as object);
  });

  it('refuses granularities the metrics do not share', async () => {
    const res = await post('', { operations: ['metric', [m1, 'mean'], [m3, 'mean']] });
    expect(res.status).toBe(400);
    expect(res.body.description).toMatchObject({ reason: 'No granularity match', detail: [[m1, 'mean'], [m3, 'mean']] });
    const missing = await post('?granularity=123', { operations: ['metric', m1, 'mean'] });
    expect(missing.body.description).toMatchObject({ reason: 'Granularities are missing', detail: [[m1, 'mean', 123]] });
  });

  it('refuses a method the policy lacks', async () => {
    const res = await post('', { operations: ['metric', [m1, 'what?']] });
    expect(res.status).toBe(404);
    expect(res.body.description).toEqual({ cause: 'Metrics with unknown aggregation', detail: [[m1, 'what?']] });
  });
});

describe('GET /v1/aggregation/metric', () => {
  const get = (query: string) => json(t.app, 'GET', `/v1/aggregation/metric?${query}`, undefined, USER);

  it('reaggregates with fill', async () => {
    const res = await get(`metric=${m1}&metric=${m2}&granularity=1&fill=0&refresh=true`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      ['2015-03-06T14:33:57+00:00', 1, 22.55],
      ['2015-03-06T14:34:12+00:00', 1, 8],
      ['2015-03-06T14:34:15+00:00', 1, -8],
      ['2015-03-06T14:35:12+00:00', 1, 5],
    ]);
  });

  it('resamples the overlapping span before reaggregating', async () => {
    // The 1 s grid is cut to its overlapping rows (14:33:57, 14:34:12) first.
    const res = await get(`metric=${m1}&metric=${m2}&granularity=1&resample=60&reaggregation=max&needed_overlap=0`);
    expect(res.body).toEqual([
      ['2015-03-06T14:33:00+00:00', 60, 43.1],
      ['2015-03-06T14:34:00+00:00', 60, 12],
    ]);
  });

  it.each<[string, number, unknown]>([
    ['metric=foobar', 400, 'Invalid input: not a valid value @ data[0]'],
    ['metric=cee6ef1f-52cc-4a16-bbb5-648aedfd1c37', 404, 'Metric cee6ef1f-52cc-4a16-bbb5-648aedfd1c37 does not exist'],
  ])('refuses %s', async (query, status, description) => {
    const res = await get(query);
    expect(res.status).toBe(status);
    expect(res.body.description).toEqual(description);
  });

  it('names a missing granularity', async () => {
    const res = await get(`metric=${m1}&granularity=42`);
    expect(res.status).toBe(404);
    expect(res.body.description).toBe(`Aggregation method 'mean' at granularity '42.0' for metric ${m1} does not exist`);
  });
});

describe('POST /v1/search/metric', () => {
  const search = (query: string, body: unknown) => json(t.app, 'POST', `/v1/search/metric?${query}`, body, USER);

  it.each<[unknown, number[]]>([
    [{ '=': 12 }, [12]],
    [{ '>=': [{ '+': 5 }, 20] }, [43.1]],
    [{ and: [{ '>': 0 }, { '<': 40 }] }, [12]],
    [{ or: [{ '<': 0 }, { '≥': 40 }] }, [43.1, -16]],
  ])('%j', async (query, values) => {
    const res = await search(`metric_id=${m1}&granularity=1s`, query);
    expect(res.status).toBe(200);
    expect(res.body[m1].map((p: unknown[]) => p[2])).toEqual(values);
  });

  it('refuses a granularity the policy lacks', async () => {
    const res = await search(`metric_id=${m1}&granularity=1s&granularity=300`, { '=': 12 });
    expect(res.status).toBe(400);
    expect(res.body.description).toEqual({ cause: 'Aggregation does not exist', detail: { granularity: 300, aggregation_method: 'mean' } });
  });

  it.each<[string, unknown, unknown]>([
    ['start=foobar', { '=': 1 }, 'Invalid value for start'],
    ['', '', 'No query specified in body'],
    ['', { not: [{ '=': 1 }] }, 'Unknown operator not'],
    ['', { '=': 'x' }, { cause: 'Invalid input', reason: "expected float for dictionary value @ data['=']", detail: ['='] }],
  ])('refuses %s %j', async (query, body, description) => {
    const res = await search(`metric_id=${m1}&${query}`, body);
    expect(res.status).toBe(400);
    expect(res.body.description).toEqual(description);
  });
});
