// Pushing and reading measures through the HTTP API. Expected values are
// computed by hand below (std is the sample standard deviation, n - 1);
// status codes and messages follow Gnocchi 4.4 (rest/api.py, checked
// against a running reference server).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN,
  createMetric,
  createPolicy,
  json,
  pushMeasures,
  readMeasures,
  startTestApp,
  USER,
  type TestApp,
} from './helpers.js';

type Point = [string, number | string, number];

/** Same timestamps and granularities, values equal to 12 significant digits. */
function expectPoints(actual: unknown, expected: Point[]): void {
  expect(Array.isArray(actual)).toBe(true);
  const got = actual as Point[];
  expect(got.map(([ts, g]) => [ts, g])).toEqual(expected.map(([ts, g]) => [ts, g]));
  got.forEach(([, , v], i) => {
    const want = expected[i]![2];
    expect(Math.abs(v - want)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(want)));
  });
}

const ts = (hhmmss: string) => `2015-03-06T${hhmmss}+00:00`;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  // Two granularities: 1 minute and 5 minutes, one hour each.
  await createPolicy(t.app, {
    name: 'two',
    definition: [
      { granularity: '1 minute', points: 60 },
      { granularity: '5 minutes', points: 12 },
    ],
  });
  await createPolicy(t.app, { name: 'sec', definition: [{ granularity: '1 second', points: 3600 }] });
  await createPolicy(t.app, { name: 'daily', definition: [{ granularity: '1 day' }] });
  await createPolicy(t.app, { name: 'usec', definition: [{ granularity: 0.000001, points: 100_000_000 }] });
  await createPolicy(t.app, { name: 'bw0', back_window: 0, definition: [{ granularity: '1 minute', points: 60 }] });
  await createPolicy(t.app, { name: 'bw2', back_window: 2, definition: [{ granularity: '1 minute', points: 60 }] });
  await createPolicy(t.app, {
    name: 'bw0-hour',
    back_window: 0,
    definition: [
      { granularity: '1 minute', points: 60 },
      { granularity: '1 hour', points: 24 },
    ],
  });
  await createPolicy(t.app, { name: 'three', definition: [{ granularity: '1 minute', points: 3 }] });
});
afterAll(async () => {
  await t.close();
});

// Raw points, and how they fall into buckets:
//   1 minute:  14:01 -> [2, 4]     14:02 -> [9]     14:06 -> [5, -1]
//   5 minutes: 14:00 -> [2, 4, 9]  14:05 -> [5, -1]
const RAW = [
  { timestamp: '2015-03-06T14:01:00', value: 2 },
  { timestamp: '2015-03-06T14:01:30', value: 4 },
  { timestamp: '2015-03-06T14:02:10', value: 9 },
  { timestamp: '2015-03-06T14:06:00', value: 5 },
  { timestamp: '2015-03-06T14:06:45', value: -1 },
];

// Sample std: sqrt(sum((x - mean)^2) / (n - 1)); undefined (no point) for n = 1.
const STD_2_4 = Math.sqrt(((2 - 3) ** 2 + (4 - 3) ** 2) / 1); // sqrt(2)
const STD_5_M1 = Math.sqrt(((5 - 2) ** 2 + (-1 - 2) ** 2) / 1); // sqrt(18)
const STD_2_4_9 = Math.sqrt(((2 - 5) ** 2 + (4 - 5) ** 2 + (9 - 5) ** 2) / 2); // sqrt(13)

// Coarsest granularity first, then by timestamp.
const EXPECTED: Record<string, Point[]> = {
  mean: [
    [ts('14:00:00'), 300, (2 + 4 + 9) / 3],
    [ts('14:05:00'), 300, (5 - 1) / 2],
    [ts('14:01:00'), 60, (2 + 4) / 2],
    [ts('14:02:00'), 60, 9],
    [ts('14:06:00'), 60, (5 - 1) / 2],
  ],
  min: [
    [ts('14:00:00'), 300, 2],
    [ts('14:05:00'), 300, -1],
    [ts('14:01:00'), 60, 2],
    [ts('14:02:00'), 60, 9],
    [ts('14:06:00'), 60, -1],
  ],
  max: [
    [ts('14:00:00'), 300, 9],
    [ts('14:05:00'), 300, 5],
    [ts('14:01:00'), 60, 4],
    [ts('14:02:00'), 60, 9],
    [ts('14:06:00'), 60, 5],
  ],
  sum: [
    [ts('14:00:00'), 300, 15],
    [ts('14:05:00'), 300, 4],
    [ts('14:01:00'), 60, 6],
    [ts('14:02:00'), 60, 9],
    [ts('14:06:00'), 60, 4],
  ],
  count: [
    [ts('14:00:00'), 300, 3],
    [ts('14:05:00'), 300, 2],
    [ts('14:01:00'), 60, 2],
    [ts('14:02:00'), 60, 1],
    [ts('14:06:00'), 60, 2],
  ],
  std: [
    [ts('14:00:00'), 300, STD_2_4_9],
    [ts('14:05:00'), 300, STD_5_M1],
    [ts('14:01:00'), 60, STD_2_4],
    [ts('14:06:00'), 60, STD_5_M1],
  ],
};

describe('push then read with refresh=true, two granularities', () => {
  let id: string;
  beforeAll(async () => {
    id = await createMetric(t.app, { archive_policy_name: 'two' });
    const res = await json(t.app, 'POST', `/v1/metric/${id}/measures`, RAW);
    expect(res.status).toBe(202);
    expect(res.text).toBe('');
  });

  it('answers 202 with an empty body to a push', async () => {
    const res = await json(t.app, 'POST', `/v1/metric/${id}/measures`, []);
    expect(res.status).toBe(202);
    expect(res.text).toBe('');
  });

  it('reads mean by default, coarsest granularity first', async () => {
    const res = await readMeasures(t.app, id);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expectPoints(res.body, EXPECTED.mean!);
  });

  it('writes values and granularities as floats ("5.0", "300.0")', async () => {
    const res = await readMeasures(t.app, id, 'granularity=300');
    expect(res.text).toBe(
      '[["2015-03-06T14:00:00+00:00", 300.0, 5.0], ["2015-03-06T14:05:00+00:00", 300.0, 2.0]]',
    );
  });

  it.each(Object.keys(EXPECTED))('computes %s per bucket', async (method) => {
    const res = await readMeasures(t.app, id, `aggregation=${method}`);
    expect(res.status).toBe(200);
    expectPoints(res.body, EXPECTED[method]!);
  });

  it.each<[string, string, Point[]]>([
    [
      'start and stop as ISO: buckets from the one holding start, stop exclusive',
      'start=2015-03-06T14:01:30&stop=2015-03-06T14:06:00',
      [
        [ts('14:00:00'), 300, 5],
        [ts('14:05:00'), 300, 2],
        [ts('14:01:00'), 60, 3],
        [ts('14:02:00'), 60, 9],
      ],
    ],
    [
      'start alone as an epoch number (14:05:00)',
      'start=1425650700',
      [
        [ts('14:05:00'), 300, 2],
        [ts('14:06:00'), 60, 2],
      ],
    ],
    [
      'start and stop as epoch numbers',
      'start=1425650700&stop=1425651000',
      [
        [ts('14:05:00'), 300, 2],
        [ts('14:06:00'), 60, 2],
      ],
    ],
    [
      'start as ISO with a space separator',
      'start=2015-03-06%2014:05:00',
      [
        [ts('14:05:00'), 300, 2],
        [ts('14:06:00'), 60, 2],
      ],
    ],
    [
      'stop alone',
      'stop=2015-03-06T14:02:00',
      [
        [ts('14:00:00'), 300, 5],
        [ts('14:01:00'), 60, 3],
      ],
    ],
    [
      'start with a UTC offset (15:05+01:00 is 14:05Z)',
      'start=2015-03-06T15:05:00%2B01:00',
      [
        [ts('14:05:00'), 300, 2],
        [ts('14:06:00'), 60, 2],
      ],
    ],
    ['a range after every point', 'start=2015-03-06T15:00:00', []],
  ])('bounds the answer by %s', async (_name, query, expected) => {
    const res = await readMeasures(t.app, id, query);
    expect(res.status).toBe(200);
    expectPoints(res.body, expected);
  });

  it.each<[string, string, Point[]]>([
    ['granularity=60', 'granularity=60', EXPECTED.mean!.filter(([, g]) => g === 60)],
    ['granularity=300', 'granularity=300', EXPECTED.mean!.filter(([, g]) => g === 300)],
    ['granularity=1 minute', 'granularity=1%20minute', EXPECTED.mean!.filter(([, g]) => g === 60)],
    ['granularity=300&aggregation=max', 'granularity=300&aggregation=max', EXPECTED.max!.filter(([, g]) => g === 300)],
  ])('returns only one granularity with %s', async (_name, query, expected) => {
    const res = await readMeasures(t.app, id, query);
    expect(res.status).toBe(200);
    expectPoints(res.body, expected);
  });

  it.each<[string, string, Point[]]>([
    ['the 1 minute means into 10 minutes (mean of means)', 'resample=600&granularity=60', [[ts('14:00:00'), 600, (3 + 9 + 2) / 3]]],
    ['the 5 minute means into 10 minutes', 'resample=600&granularity=300', [[ts('14:00:00'), 600, (5 + 2) / 2]]],
    ['the 1 minute maxima into 10 minutes', 'resample=600&granularity=60&aggregation=max', [[ts('14:00:00'), 600, 9]]],
  ])('resamples %s', async (_name, query, expected) => {
    const res = await readMeasures(t.app, id, query);
    expect(res.status).toBe(200);
    expectPoints(res.body, expected);
  });

  it.each(['median', 'foo', 'rate:mean'])('answers 404 with a body naming aggregation=%s when the policy lacks it', async (method) => {
    const res = await readMeasures(t.app, id, `aggregation=${encodeURIComponent(method)}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      code: 404,
      title: 'Not Found',
      description: {
        cause: 'Aggregation method does not exist for this metric',
        detail: { metric: id, aggregation_method: method },
      },
    });
  });

  it.each([
    ['120', '120.0'],
    ['1', '1.0'],
    ['0.5', '0.5'],
  ])('answers 404 with a message for granularity=%s, not in the policy', async (granularity, shown) => {
    const res = await readMeasures(t.app, id, `granularity=${granularity}`);
    expect(res.status).toBe(404);
    expect(res.body.description).toBe(
      `Aggregation method 'mean' at granularity '${shown}' for metric ${id} does not exist`,
    );
  });

  it.each<[string, string, unknown]>([
    ['resample without granularity', 'resample=600', 'A granularity must be specified to resample'],
    ['resample without granularity, before other checks', 'resample=600&aggregation=median', 'A granularity must be specified to resample'],
    ['an unparsable resample', 'resample=abc&granularity=60', 'Unable to parse timespan'],
    [
      'an unparsable granularity',
      'granularity=abc',
      { cause: 'Argument value error', detail: 'granularity', reason: 'Unable to parse timespan' },
    ],
  ])('answers 400 to %s', async (_name, query, description) => {
    const res = await json(t.app, 'GET', `/v1/metric/${id}/measures?${query}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, title: 'Bad Request', description });
  });

  it('answers 400 to an unparsable refresh', async () => {
    const res = await json(t.app, 'GET', `/v1/metric/${id}/measures?refresh=maybe`);
    expect(res.status).toBe(400);
    expect(res.body.description).toMatch(/^Unable to parse `refresh': invalid truth value /);
  });

  it('quotes the value in the refresh parse error, as Gnocchi does', async () => {
    const res = await json(t.app, 'GET', `/v1/metric/${id}/measures?refresh=maybe`);
    expect(res.body.description).toBe("Unable to parse `refresh': invalid truth value 'maybe'");
  });

  it.each([
    ['start', 'start=foo'],
    ['stop', 'stop=foo'],
    ['start', 'start=-1'],
  ])('answers 400 to an unparsable %s', async (_name, query) => {
    const res = await json(t.app, 'GET', `/v1/metric/${id}/measures?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.description.cause).toBe('Argument value error');
  });

  it.each([
    ['start', 'start=foo'],
    ['stop', 'stop=foo'],
    ['start', 'start=-1'],
  ])('answers Gnocchi\'s reason "Must be a datetime or a timestamp" to an unparsable %s (%s)', async (param, query) => {
    const res = await json(t.app, 'GET', `/v1/metric/${id}/measures?${query}`);
    expect(res.body.description).toEqual({
      cause: 'Argument value error',
      detail: param,
      reason: 'Must be a datetime or a timestamp',
    });
  });

  it('checks resample without granularity before start', async () => {
    const res = await json(t.app, 'GET', `/v1/metric/${id}/measures?resample=600&start=foo`);
    expect(res.body.description).toBe('A granularity must be specified to resample');
  });

  it('answers 404 to measures of an unknown metric', async () => {
    const res = await json(t.app, 'GET', '/v1/metric/00000000-0000-4000-8000-000000000000/measures');
    expect(res.status).toBe(404);
    expect(res.body.description).toBe('Metric 00000000-0000-4000-8000-000000000000 does not exist');
  });

  it("answers 403 to another user reading the admin's measures", async () => {
    expect((await json(t.app, 'GET', `/v1/metric/${id}/measures`, undefined, USER)).status).toBe(403);
    expect((await json(t.app, 'POST', `/v1/metric/${id}/measures`, RAW, USER)).status).toBe(403);
  });
});

describe('resampling', () => {
  it.each<[string, string, Point[]]>([
    [
      'resample=60&granularity=1 (mean)',
      'resample=60&granularity=1',
      [
        [ts('14:33:00'), 60, (1 + 3) / 2],
        [ts('14:34:00'), 60, (5 + 7.5) / 2],
      ],
    ],
    [
      'resample=60&granularity=1&aggregation=sum',
      'resample=60&granularity=1&aggregation=sum',
      [
        [ts('14:33:00'), 60, 1 + 3],
        [ts('14:34:00'), 60, 5 + 7.5],
      ],
    ],
    [
      'resample=1 minute&granularity=1&aggregation=max',
      'resample=1%20minute&granularity=1&aggregation=max',
      [
        [ts('14:33:00'), 60, 3],
        [ts('14:34:00'), 60, 7.5],
      ],
    ],
  ])('groups second points by minute: %s', async (_name, query, expected) => {
    const id = await createMetric(t.app, { archive_policy_name: 'sec' });
    await pushMeasures(t.app, id, [
      { timestamp: '2015-03-06T14:33:57', value: 1 },
      { timestamp: '2015-03-06T14:33:58', value: 3 },
      { timestamp: '2015-03-06T14:34:01', value: 5 },
      { timestamp: '2015-03-06T14:34:30', value: 7.5 },
    ]);
    const res = await readMeasures(t.app, id, query);
    expect(res.status).toBe(200);
    expectPoints(res.body, expected);
  });

  // Daily points: Sat 2016-01-30 (2), Sun 01-31 (4), Mon 02-01 (6),
  // Mon 02-29 (10, leap day), Tue 03-01 (1).
  it.each<[string, Point[]]>([
    [
      'M',
      [
        ['2016-01-01T00:00:00+00:00', 'M', (2 + 4) / 2],
        ['2016-02-01T00:00:00+00:00', 'M', (6 + 10) / 2],
        ['2016-03-01T00:00:00+00:00', 'M', 1],
      ],
    ],
    [
      'W',
      [
        ['2016-01-24T00:00:00+00:00', 'W', 2],
        ['2016-01-31T00:00:00+00:00', 'W', (4 + 6) / 2],
        ['2016-02-28T00:00:00+00:00', 'W', (10 + 1) / 2],
      ],
    ],
    ['Q', [['2016-01-01T00:00:00+00:00', 'Q', (2 + 4 + 6 + 10 + 1) / 5]]],
    ['H', [['2016-01-01T00:00:00+00:00', 'H', (2 + 4 + 6 + 10 + 1) / 5]]],
    ['Y', [['2016-01-01T00:00:00+00:00', 'Y', (2 + 4 + 6 + 10 + 1) / 5]]],
  ])('resamples daily points by calendar group resample=%s&granularity=86400', async (group, expected) => {
    const id = await createMetric(t.app, { archive_policy_name: 'daily' });
    await pushMeasures(t.app, id, [
      { timestamp: '2016-01-30T10:00:00', value: 2 },
      { timestamp: '2016-01-31T23:59:59', value: 4 },
      { timestamp: '2016-02-01T00:00:00', value: 6 },
      { timestamp: '2016-02-29T12:00:00', value: 10 },
      { timestamp: '2016-03-01T01:00:00', value: 1 },
    ]);
    const daily = await readMeasures(t.app, id);
    expectPoints(daily.body, [
      ['2016-01-30T00:00:00+00:00', 86400, 2],
      ['2016-01-31T00:00:00+00:00', 86400, 4],
      ['2016-02-01T00:00:00+00:00', 86400, 6],
      ['2016-02-29T00:00:00+00:00', 86400, 10],
      ['2016-03-01T00:00:00+00:00', 86400, 1],
    ]);
    const res = await readMeasures(t.app, id, `resample=${group}&granularity=86400`);
    expect(res.status).toBe(200);
    expectPoints(res.body, expected);
  });
});

describe('timestamps of pushed measures', () => {
  it.each<[string, unknown, string]>([
    ['an epoch integer', 1425652437, ts('14:33:57')],
    ['an epoch float', 1425652437.9, ts('14:33:57')],
    ['an epoch numeric string', '1425652437', ts('14:33:57')],
    ['ISO without offset (UTC)', '2015-03-06T14:33:57', ts('14:33:57')],
    ['ISO with Z', '2015-03-06T14:33:57Z', ts('14:33:57')],
    ['ISO with an offset', '2015-03-06T15:33:57+01:00', ts('14:33:57')],
    ['ISO with a space separator', '2015-03-06 14:33:57', ts('14:33:57')],
    ['ISO with fractional seconds', '2015-03-06T14:33:57.999', ts('14:33:57')],
  ])('accepts %s', async (_name, timestamp, expected) => {
    const id = await createMetric(t.app, { archive_policy_name: 'sec' });
    await pushMeasures(t.app, id, [{ timestamp, value: 42 }]);
    expectPoints((await readMeasures(t.app, id)).body, [[expected, 1, 42]]);
  });

  it('accepts relative timestamps ("-60 seconds") and relative start', async () => {
    const id = await createMetric(t.app, { archive_policy_name: 'sec' });
    const before = Date.now();
    await pushMeasures(t.app, id, [
      { timestamp: '-60 seconds', value: 1 },
      { timestamp: '-30 seconds', value: 2 },
    ]);
    const after = Date.now();
    const res = await readMeasures(t.app, id);
    expect(res.body).toHaveLength(2);
    const [a, b] = (res.body as Point[]).map(([stamp]) => Date.parse(stamp));
    // Each point is floored to its second.
    expect(a).toBeGreaterThanOrEqual(Math.floor((before - 60_000) / 1000) * 1000);
    expect(a).toBeLessThanOrEqual(after - 60_000);
    expect(b! - a!).toBeGreaterThanOrEqual(29_000);
    expect(b! - a!).toBeLessThanOrEqual(31_000);
    const recent = await readMeasures(t.app, id, `start=${encodeURIComponent('-45 seconds')}`);
    expect((recent.body as Point[]).map(([, , v]) => v)).toEqual([2]);
  });

  it('keeps microseconds: a 1 µs granularity point reads back as 14:33:57.123456', async () => {
    const id = await createMetric(t.app, { archive_policy_name: 'usec' });
    await pushMeasures(t.app, id, [
      { timestamp: '2015-03-06T14:33:57.123456', value: 1 },
      { timestamp: '2015-03-06T14:33:57.5', value: 2 },
    ]);
    const res = await readMeasures(t.app, id);
    expect(res.status).toBe(200);
    expectPoints(res.body, [
      ['2015-03-06T14:33:57.123456+00:00', 1e-6, 1],
      ['2015-03-06T14:33:57.500000+00:00', 1e-6, 2],
    ]);
    const after = await readMeasures(t.app, id, 'start=2015-03-06T14:33:57.123457');
    expectPoints(after.body, [['2015-03-06T14:33:57.500000+00:00', 1e-6, 2]]);
  });

  it.each<[string, unknown, string]>([
    [
      'an ISO timestamp before the epoch',
      [{ timestamp: '1969-12-31T23:59:59', value: 1 }],
      "unexpected timestamp 'Timestamp must be after Epoch'",
    ],
    ['a negative epoch', [{ timestamp: -1, value: 1 }], "unexpected timestamp 'Timestamp must be after Epoch'"],
    ['an unparsable timestamp', [{ timestamp: 'foo', value: 1 }], "unexpected timestamp 'Unable to convert timestamps'"],
    [
      'an epoch then an ISO timestamp',
      [
        { timestamp: 1425652437, value: 1 },
        { timestamp: '2015-03-06T14:33:58', value: 1 },
      ],
      "unexpected timestamp 'Unable to convert timestamps'",
    ],
    ['a non-numeric value', [{ timestamp: '2015-03-06T14:33:57', value: 'abc' }], 'unexpected measures value'],
    ['a null value', [{ timestamp: '2015-03-06T14:33:57', value: null }], 'unexpected measures value'],
    ['an object instead of a list', { timestamp: '2015-03-06T14:33:57', value: 1 }, 'unexpected measures format'],
    ['a list of numbers', [1, 2], 'unexpected measures format'],
    ['a list of pairs', [[1425652437, 1]], 'unexpected measures format'],
    ['a JSON string', '"x"', 'unexpected measures format'],
    ['JSON null', 'null', 'unexpected measures format'],
  ])('answers 400 to %s', async (_name, body, reason) => {
    const id = await createMetric(t.app, { archive_policy_name: 'sec' });
    // A string body is sent as is (already JSON text).
    const res = await json(t.app, 'POST', `/v1/metric/${id}/measures`, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, title: 'Bad Request', description: { cause: 'Invalid input', reason, detail: [] } });
    expect((await readMeasures(t.app, id)).body).toEqual([]);
  });

  it('answers "unexpected measures value" to a measure without value', async () => {
    const id = await createMetric(t.app, { archive_policy_name: 'sec' });
    const res = await json(t.app, 'POST', `/v1/metric/${id}/measures`, [{ timestamp: '2015-03-06T14:33:57' }]);
    expect(res.status).toBe(400);
    expect(res.body.description.reason).toBe('unexpected measures value');
  });

  it.each([
    ['a numeric string', '12.5', 12.5],
    ['true', true, 1],
  ])('accepts a value given as %s (Python float())', async (_name, value, expected) => {
    const id = await createMetric(t.app, { archive_policy_name: 'sec' });
    await pushMeasures(t.app, id, [{ timestamp: '2015-03-06T14:33:57', value }]);
    expectPoints((await readMeasures(t.app, id)).body, [[ts('14:33:57'), 1, expected]]);
  });

  it('answers 415 to a push that is not application/json', async () => {
    const id = await createMetric(t.app, { archive_policy_name: 'sec' });
    const res = await json(t.app, 'POST', `/v1/metric/${id}/measures`, '[]', { ...ADMIN, 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
  });
});

describe('one raw value per timestamp: the first of a push, the latest push across pushes', () => {
  it.each<[string, unknown[][], number]>([
    [
      'two requests',
      [[{ timestamp: '2015-03-06T14:33:57', value: 1 }], [{ timestamp: '2015-03-06T14:33:57', value: 2 }]],
      2,
    ],
    [
      'one request',
      [
        [
          { timestamp: '2015-03-06T14:33:57', value: 1 },
          { timestamp: '2015-03-06T14:33:57', value: 2 },
        ],
      ],
      1,
    ],
    [
      'two requests, the same instant written differently',
      [[{ timestamp: '2015-03-06T14:33:57', value: 1 }], [{ timestamp: 1425652437, value: 2 }]],
      2,
    ],
  ])('%s', async (_name, pushes, kept) => {
    const id = await createMetric(t.app, { archive_policy_name: 'sec' });
    for (const body of pushes) await pushMeasures(t.app, id, body);
    expectPoints((await readMeasures(t.app, id)).body, [[ts('14:33:57'), 1, kept]]);
    expectPoints((await readMeasures(t.app, id, 'aggregation=count')).body, [[ts('14:33:57'), 1, 1]]);
  });

  it('after the first value was processed', async () => {
    const id = await createMetric(t.app, { archive_policy_name: 'sec' });
    await pushMeasures(t.app, id, [{ timestamp: '2015-03-06T14:33:57', value: 1 }]);
    expectPoints((await readMeasures(t.app, id)).body, [[ts('14:33:57'), 1, 1]]);
    await pushMeasures(t.app, id, [{ timestamp: '2015-03-06T14:33:57', value: 10 }]);
    expectPoints((await readMeasures(t.app, id)).body, [[ts('14:33:57'), 1, 10]]);
  });

  it('two values in one second bucket at different microseconds are both kept', async () => {
    const id = await createMetric(t.app, { archive_policy_name: 'sec' });
    await pushMeasures(t.app, id, [
      { timestamp: '2015-03-06T14:33:57.000001', value: 1 },
      { timestamp: '2015-03-06T14:33:57.000002', value: 2 },
    ]);
    expectPoints((await readMeasures(t.app, id, 'aggregation=sum')).body, [[ts('14:33:57'), 1, 3]]);
  });
});

describe('POST /v1/batch/metrics/measures', () => {
  it('answers 202 with an empty body and stores each metric\'s measures', async () => {
    const a = await createMetric(t.app, { archive_policy_name: 'sec' });
    const b = await createMetric(t.app, { archive_policy_name: 'sec' });
    const res = await json(t.app, 'POST', '/v1/batch/metrics/measures', {
      [a]: [{ timestamp: '2015-03-06T14:33:57', value: 1 }],
      [b]: [
        { timestamp: '2015-03-06T14:33:57', value: 2 },
        { timestamp: '2015-03-06T14:33:58', value: 3 },
      ],
    });
    expect(res.status).toBe(202);
    expect(res.text).toBe('');
    expectPoints((await readMeasures(t.app, a)).body, [[ts('14:33:57'), 1, 1]]);
    expectPoints((await readMeasures(t.app, b)).body, [
      [ts('14:33:57'), 1, 2],
      [ts('14:33:58'), 1, 3],
    ]);
  });

  it('stores the same whether the body takes the fast path or the general one', async () => {
    const [fast, general] = [await createMetric(t.app, { archive_policy_name: 'sec' }), await createMetric(t.app, { archive_policy_name: 'sec' })];
    const points = [['2015-03-06T14:33:57', 1.5], ['2015-03-06T14:33:58.25+00:00', -0.1], ['2015-03-06T16:33:59+02:00', 1e-7]] as const;
    const pushes = [
      { [fast]: points.map(([timestamp, value]) => ({ timestamp, value })) },
      // Numeric-string values take the whole body off the fast path.
      { [general]: points.map(([timestamp, value]) => ({ value: String(value), timestamp })) },
    ];
    for (const body of pushes) expect((await json(t.app, 'POST', '/v1/batch/metrics/measures', body)).status).toBe(202);
    const read = await readMeasures(t.app, fast);
    expect(read.body).toHaveLength(3);
    expect((await readMeasures(t.app, general)).body).toEqual(read.body);
  });

  it.each([
    ['twice as written', (id: string) => [id, id]],
    ['in two forms', (id: string) => [id.toUpperCase(), `urn:uuid:${id}`]],
  ])('keeps the last list of a metric given %s, as JSON.parse does', async (_name, keys) => {
    const a = await createMetric(t.app, { archive_policy_name: 'sec' });
    const [first, second] = keys(a);
    const body = `{"${first}": [{"timestamp": "2015-03-06T14:33:57", "value": 1}], "${second}": [{"timestamp": "2015-03-06T14:33:57", "value": 2}]}`;
    expect((await json(t.app, 'POST', '/v1/batch/metrics/measures', body)).status).toBe(202);
    expectPoints((await readMeasures(t.app, a)).body, [[ts('14:33:57'), 1, 2]]);
  });

  it('refuses unknown metric ids with 400 "Unknown metrics: ..." (sorted) and stores nothing', async () => {
    const a = await createMetric(t.app, { archive_policy_name: 'sec' });
    const u1 = '00000000-0000-4000-8000-000000000002';
    const u2 = '00000000-0000-4000-8000-000000000001';
    const res = await json(t.app, 'POST', '/v1/batch/metrics/measures', {
      [a]: [{ timestamp: '2015-03-06T14:33:57', value: 1 }],
      [u1]: [],
      [u2]: [],
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 400, title: 'Bad Request', description: `Unknown metrics: ${u2}, ${u1}` });
    expect((await readMeasures(t.app, a)).body).toEqual([]);
  });

  it('answers 400 "expected a dictionary" to a list', async () => {
    const res = await json(t.app, 'POST', '/v1/batch/metrics/measures', []);
    expect(res.status).toBe(400);
    expect(res.body.description).toEqual({ cause: 'Invalid input', reason: 'expected a dictionary', detail: [] });
  });

  it("answers 403 to another user pushing to the admin's metric", async () => {
    const a = await createMetric(t.app, { archive_policy_name: 'sec' });
    const res = await json(t.app, 'POST', '/v1/batch/metrics/measures', { [a]: [] }, USER);
    expect(res.status).toBe(403);
  });

  it('answers Gnocchi\'s "extra keys not allowed" to a key that is not a UUID', async () => {
    const res = await json(t.app, 'POST', '/v1/batch/metrics/measures', { foo: [] });
    expect(res.status).toBe(400);
    expect(res.body.description).toEqual({ cause: 'Invalid input', reason: "extra keys not allowed @ data['foo']", detail: ['foo'] });
  });

  it.each([
    ['a list that is not a list', 'x', 'unexpected measures format'],
    ['a bad value', [{ timestamp: '2015-03-06T14:33:57', value: 'abc' }], 'unexpected measures value'],
  ])('names the metric id in errors about %s', async (_name, measures, reason) => {
    const a = await createMetric(t.app, { archive_policy_name: 'sec' });
    const res = await json(t.app, 'POST', '/v1/batch/metrics/measures', { [a]: measures });
    expect(res.status).toBe(400);
    expect(res.body.description).toEqual({
      cause: 'Invalid input',
      reason: `${reason} for dictionary value @ data['${a}']`,
      detail: [a],
    });
  });
});

describe('back_window', () => {
  // First 14:34:10 and 14:34:40 are pushed and processed; then, in a later
  // request, points in earlier minutes.
  const FIRST = [
    { timestamp: '2015-03-06T14:34:10', value: 1 },
    { timestamp: '2015-03-06T14:34:40', value: 2 },
  ];
  const LATE = [
    { timestamp: '2015-03-06T14:33:30', value: 7 },
    { timestamp: '2015-03-06T14:32:30', value: 8 },
    { timestamp: '2015-03-06T14:31:30', value: 9 },
    { timestamp: '2015-03-06T14:20:00', value: 10 },
    { timestamp: '2015-03-06T13:59:00', value: 11 },
  ];

  async function run(policy: string, query = ''): Promise<unknown> {
    const id = await createMetric(t.app, { archive_policy_name: policy });
    await pushMeasures(t.app, id, FIRST);
    expectPoints((await readMeasures(t.app, id, 'granularity=60')).body, [[ts('14:34:00'), 60, 1.5]]);
    await pushMeasures(t.app, id, LATE);
    const res = await readMeasures(t.app, id, query);
    expect(res.status).toBe(200);
    return res.body;
  }

  it('back_window 0, granularity 1 minute: late points before 14:34 are not aggregated (14:20 neither)', async () => {
    expectPoints(await run('bw0'), [[ts('14:34:00'), 60, 1.5]]);
  });

  it('back_window 2, granularity 1 minute: late points back to 14:32 are aggregated, not 14:31 nor 14:20', async () => {
    expectPoints(await run('bw2'), [
      [ts('14:32:00'), 60, 8],
      [ts('14:33:00'), 60, 7],
      [ts('14:34:00'), 60, 1.5],
    ]);
  });

  it('back_window 0, coarsest granularity 1 hour: late points back to 14:00 are aggregated (14:20 is), not 13:59', async () => {
    expectPoints(await run('bw0-hour'), [
      [ts('14:00:00'), 3600, (1 + 2 + 7 + 8 + 9 + 10) / 6],
      [ts('14:20:00'), 60, 10],
      [ts('14:31:00'), 60, 9],
      [ts('14:32:00'), 60, 8],
      [ts('14:33:00'), 60, 7],
      [ts('14:34:00'), 60, 1.5],
    ]);
  });
});

describe('retention', () => {
  it('points=3 keeps only the last 3 periods', async () => {
    const id = await createMetric(t.app, { archive_policy_name: 'three' });
    await pushMeasures(
      t.app,
      id,
      [0, 1, 2, 3, 4, 5].map((m) => ({ timestamp: `2015-03-06T14:0${m}:10`, value: m })),
    );
    expectPoints((await readMeasures(t.app, id)).body, [
      [ts('14:03:00'), 60, 3],
      [ts('14:04:00'), 60, 4],
      [ts('14:05:00'), 60, 5],
    ]);
  });

  it('points=3 drops old periods as newer measures arrive in a later push', async () => {
    const id = await createMetric(t.app, { archive_policy_name: 'three' });
    await pushMeasures(t.app, id, [0, 1, 2].map((m) => ({ timestamp: `2015-03-06T14:0${m}:10`, value: m })));
    expectPoints((await readMeasures(t.app, id)).body, [
      [ts('14:00:00'), 60, 0],
      [ts('14:01:00'), 60, 1],
      [ts('14:02:00'), 60, 2],
    ]);
    await pushMeasures(t.app, id, [
      { timestamp: '2015-03-06T14:03:10', value: 3 },
      { timestamp: '2015-03-06T14:05:10', value: 5 },
    ]);
    expectPoints((await readMeasures(t.app, id)).body, [
      [ts('14:03:00'), 60, 3],
      [ts('14:05:00'), 60, 5],
    ]);
  });
});
