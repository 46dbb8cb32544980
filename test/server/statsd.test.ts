// The statsd listener through real UDP datagrams, results read back over
// HTTP as a user would; and once through the compiled server process.
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { resourceUuid } from '../../engine/resource-id.js';
import { startStatsd, type StatsdConfig, type StatsdListener } from '../../server/statsd.js';
import { ADMIN, createPolicy, json, startTestApp, type TestApp } from './helpers.js';
import { startServer, stopServers } from './process-helpers.js';

const RESOURCE = 'statsd-test';
const METHODS = ['mean', 'max', 'min', 'count', 'sum', 'first', 'last'];

interface Setup {
  t: TestApp;
  statsd: StatsdListener;
  errors: string[];
  send(...datagrams: (string | Uint8Array)[]): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function waitFor(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function sender(port: number): Promise<(datagram: string | Uint8Array) => Promise<void>> {
  const socket = createSocket('udp4');
  cleanups.push(() => new Promise((resolve) => socket.close(() => resolve())));
  return (datagram) =>
    new Promise((resolve, reject) => socket.send(datagram, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())));
}

interface SetupOptions {
  statsd?: Partial<StatsdConfig>;
  /** Policies beyond `statsd`, created before the rules. */
  policies?: Record<string, unknown>[];
  /** [pattern, policy] pairs; default: `*` -> `statsd`. */
  rules?: [string, string][];
  app?: Partial<TestApp['config']>;
}

/** A test app with policy `statsd` (one hour, every method used here), the given policies and rules, then the listener. */
async function setup({ statsd: config = {}, policies = [], rules = [['*', 'statsd']], app = {} }: SetupOptions = {}): Promise<Setup> {
  const t = await startTestApp(app);
  cleanups.push(() => t.close());
  await createPolicy(t.app, { name: 'statsd', aggregation_methods: METHODS, definition: [{ granularity: '1 hour', points: 24 }] });
  for (const policy of policies) await createPolicy(t.app, policy);
  for (const [pattern, policy] of rules) {
    const res = await json(t.app, 'POST', '/v1/archive_policy_rule', { name: `rule ${pattern}`, metric_pattern: pattern, archive_policy_name: policy });
    expect(res.status, res.text).toBe(201);
  }
  const errors: string[] = [];
  const statsd = await startStatsd(
    t.engine,
    {
      statsdPort: 0,
      statsdHost: '127.0.0.1',
      statsdResourceId: RESOURCE,
      statsdCreator: 'admin',
      statsdArchivePolicyName: '',
      statsdFlushDelay: 0.05,
      ...config,
    },
    { debug: () => {}, error: (m) => errors.push(m) },
  );
  cleanups.push(() => statsd.close());
  const send1 = await sender(statsd.address.port);
  const send = async (...datagrams: (string | Uint8Array)[]) => {
    const before = statsd.stats.datagramsReceived;
    for (const d of datagrams) await send1(d);
    await waitFor('the datagrams', () => statsd.stats.datagramsReceived >= before + datagrams.length);
  };
  return { t, statsd, errors, send };
}

/** Waits until `count` measures in all were pushed. */
const flushed = (s: Setup, count: number) => waitFor(`${count} measures flushed`, () => s.statsd.stats.measuresFlushed >= count);

const metricUrl = (name: string, resource = RESOURCE) => `/v1/resource/generic/${resource}/metric/${encodeURIComponent(name)}`;

/** The 1-hour points of one method (two when the test crossed an hour). */
async function points(s: Setup, name: string, method: string): Promise<number[]> {
  const res = await json(s.t.app, 'GET', `${metricUrl(name)}/measures?refresh=true&aggregation=${method}`);
  expect(res.status, res.text).toBe(200);
  return (res.body as [string, number, number][]).map((p) => p[2]);
}

/** A method over every measure of the metric, whatever the hours they fell in. */
async function overall(s: Setup, name: string, method: 'sum' | 'count' | 'max' | 'min' | 'first' | 'last' | 'mean'): Promise<number> {
  if (method === 'mean') return (await overall(s, name, 'sum')) / (await overall(s, name, 'count'));
  const values = await points(s, name, method);
  switch (method) {
    case 'sum':
    case 'count':
      return values.reduce((a, b) => a + b, 0);
    case 'max':
      return Math.max(...values);
    case 'min':
      return Math.min(...values);
    case 'first':
      return values[0]!;
    case 'last':
      return values[values.length - 1]!;
  }
}

describe('statsd listener', () => {
  it('creates the resource at start, generic, with the configured creator and the id mapped as Gnocchi maps it', async () => {
    const s = await setup({ statsd: { statsdCreator: 'statsd-bot' } });
    const id = resourceUuid(RESOURCE, 'statsd-bot');
    const res = await json(s.t.app, 'GET', `/v1/resource/generic/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, type: 'generic', original_resource_id: RESOURCE, creator: 'statsd-bot', metrics: {} });
  });

  it('sums a counter over the interval, each value divided by its sample rate', async () => {
    const s = await setup();
    await s.send('hits:1|c|@0.1', 'hits:1|c|@0.1\nhits:2|c', 'hits:0.5|c|@0.5');
    await flushed(s, 1);
    expect(await overall(s, 'hits|c', 'sum')).toBeCloseTo(10 + 10 + 2 + 1, 9);
  });

  it('keeps a gauge across flushes: a value sets it, a later +/- delta applies to it', async () => {
    const s = await setup();
    await s.send('temp:10|g');
    await flushed(s, 1);
    await s.send('temp:+5|g');
    await flushed(s, 2);
    await s.send('temp:-3|g');
    await flushed(s, 3);
    await s.send('temp:1|g\ntemp:+1|g\ntemp:+1.5|g');
    await flushed(s, 4);
    expect(await overall(s, 'temp|g', 'count')).toBe(4);
    expect(await overall(s, 'temp|g', 'first')).toBe(10);
    expect(await overall(s, 'temp|g', 'max')).toBe(15);
    expect(await overall(s, 'temp|g', 'min')).toBe(3.5);
    expect(await overall(s, 'temp|g', 'sum')).toBe(10 + 15 + 12 + 3.5);
  });

  it('keeps every timer sample as its own measure, summarised by the policy methods', async () => {
    const s = await setup();
    await s.send('rt:10|ms\nrt:20|ms', 'rt:30|ms', 'rt:40|ms\nrt:40|ms');
    await flushed(s, 5);
    expect(await overall(s, 'rt|ms', 'count')).toBe(5);
    expect(await overall(s, 'rt|ms', 'mean')).toBe(28);
    expect(await overall(s, 'rt|ms', 'max')).toBe(40);
    expect(await overall(s, 'rt|ms', 'min')).toBe(10);
  });

  it('counts the distinct members of a set per flush', async () => {
    const s = await setup();
    await s.send('users:alice|s\nusers:bob|s\nusers:alice|s\nusers:carol|s');
    await flushed(s, 1);
    await s.send('users:alice|s\nusers:alice|s');
    await flushed(s, 2);
    expect(await overall(s, 'users|s', 'first')).toBe(3);
    expect(await overall(s, 'users|s', 'last')).toBe(1);
    expect(await overall(s, 'users|s', 'count')).toBe(2);
  });

  it('names metrics key|type, so a counter and a timer of one key stay apart', async () => {
    const s = await setup();
    await s.send('job:1|c\njob:250|ms');
    await flushed(s, 2);
    const res = await json(s.t.app, 'GET', `/v1/resource/generic/${RESOURCE}`);
    expect(Object.keys(res.body.metrics).sort()).toEqual(['job|c', 'job|ms']);
  });

  it('creates new metrics with the configured archive policy, whatever the rules say', async () => {
    const s = await setup({
      statsd: { statsdArchivePolicyName: 'fixed' },
      policies: [{ name: 'fixed', aggregation_methods: ['sum'], definition: [{ granularity: '1 day', points: 2 }] }],
    });
    await s.send('a:1|c');
    await flushed(s, 1);
    const res = await json(s.t.app, 'GET', metricUrl('a|c'));
    expect(res.body.archive_policy.name).toBe('fixed');
    expect(res.body.creator).toBe('admin');
  });

  it('creates new metrics with the policy of the longest matching rule', async () => {
    const s = await setup({
      policies: [{ name: 'timers', aggregation_methods: ['mean', 'max'], definition: [{ granularity: '1 minute', points: 60 }] }],
      rules: [['*', 'statsd'], ['*|ms', 'timers']],
    });
    await s.send('lat:5|ms\nhits:1|c');
    await flushed(s, 2);
    expect((await json(s.t.app, 'GET', metricUrl('lat|ms'))).body.archive_policy.name).toBe('timers');
    expect((await json(s.t.app, 'GET', metricUrl('hits|c'))).body.archive_policy.name).toBe('statsd');
  });

  it('drops the measures of a metric no rule gives a policy to, logs it, and still writes the others', async () => {
    const s = await setup({ rules: [['known.*', 'statsd']] });
    await s.send('unknown:1|c\nknown.a:1|c');
    await flushed(s, 1);
    await waitFor('the drop', () => s.statsd.stats.measuresDropped === 1);
    expect(await overall(s, 'known.a|c', 'sum')).toBe(1);
    expect((await json(s.t.app, 'GET', metricUrl('unknown|c'))).status).toBe(404);
    expect(s.statsd.stats.flushErrors).toBeGreaterThanOrEqual(1);
    expect(s.errors.join('\n')).toMatch(/unknown\|c dropped: No archive policy name specified and no archive policy rule found/);
  });

  it('counts and drops malformed lines and garbage while good lines, in the same or other datagrams, land', async () => {
    const s = await setup();
    let seed = 7;
    const garbage = Uint8Array.from({ length: 1000 }, () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24);
    await s.send(
      'no colon|c',
      'a:1|x\nok:1|c\nb:1|g|@0.5',
      garbage,
      'x'.repeat(60_000),
      `${'y'.repeat(60_000)}:1|c`,
      'ok:2|c',
    );
    await flushed(s, 1);
    await waitFor('the long name dropped', () => s.statsd.stats.measuresDropped === 1);
    expect(await overall(s, 'ok|c', 'sum')).toBe(3);
    expect(s.statsd.stats).toMatchObject({ datagramsReceived: 6, linesAccepted: 3, linesMalformed: 5 });
    // The 60 000-character name is valid statsd but not a metric name.
    expect(s.errors.join('\n')).toMatch(/y{100}\.\.\. dropped: .*metric name must be 1 to 255 characters/);
    await s.send('after:1|c');
    await flushed(s, 2);
    expect(await overall(s, 'after|c', 'sum')).toBe(1);
  });

  it('keeps the measures of a push the backlog refuses and sends them with a later flush', async () => {
    const s = await setup({ app: { maxBacklog: 1 } });
    // Without background processing, the backlog stays until a read refreshes the metric.
    await s.t.engine.processor.stop();
    await s.send('c:1|c');
    await flushed(s, 1);
    await s.send('c:2|c');
    await waitFor('a refused flush', () => s.statsd.stats.flushErrors >= 1);
    expect(s.statsd.stats.measuresFlushed).toBe(1);
    expect(s.errors.join('\n')).toMatch(/push of 1 measure\(s\) refused, 1 kept for the next flush: Too many measures waiting/);
    // Reading with refresh processes the backlog, which lets the next flush through.
    expect(await overall(s, 'c|c', 'sum')).toBe(1);
    await flushed(s, 2);
    expect(await overall(s, 'c|c', 'sum')).toBe(3);
    expect(s.statsd.stats.measuresDropped).toBe(0);
  });

  it('flushes what it received when closed, before the flush delay', async () => {
    const s = await setup({ statsd: { statsdFlushDelay: 3600 } });
    await s.send('late:7|g');
    expect(s.statsd.stats.flushes).toBe(0);
    await s.statsd.close();
    expect(s.statsd.stats).toMatchObject({ flushes: 1, measuresFlushed: 1 });
    expect(await overall(s, 'late|g', 'last')).toBe(7);
  });

  it('loses nothing it received from a burst of 100 000 datagrams', async () => {
    const s = await setup();
    const total = 100_000;
    // Sent from another process, as fast as it can, while this one receives.
    const script = `
      const socket = require('node:dgram').createSocket('udp4');
      const message = Buffer.from('burst:1|c');
      let pending = ${total};
      for (let i = 0; i < ${total}; i++) socket.send(message, ${s.statsd.address.port}, '127.0.0.1', () => { if (--pending === 0) socket.close(); });
    `;
    const child = spawn(process.execPath, ['-e', script], { stdio: 'inherit' });
    // The rate is taken from the first datagram received to the last.
    let first: number | undefined;
    let lastAt = 0;
    let last = 0;
    for (let quietSince = performance.now(); performance.now() - quietSince < 500 || child.exitCode === null; ) {
      await new Promise((r) => setTimeout(r, 5));
      const now = s.statsd.stats.datagramsReceived;
      if (now === last) continue;
      first ??= performance.now();
      last = now;
      lastAt = quietSince = performance.now();
    }
    const received = s.statsd.stats.datagramsReceived;
    const seconds = (lastAt - first!) / 1000;
    await flushed(s, 1);
    const flushesBefore = s.statsd.stats.flushes;
    await waitFor('one more flush', () => s.statsd.stats.flushes >= flushesBefore + 2);
    expect(s.statsd.stats.linesAccepted).toBe(received);
    expect(await overall(s, 'burst|c', 'sum')).toBe(received);
    console.log(`statsd burst: ${received} of ${total} datagrams received in ${seconds.toFixed(2)} s, ` +
      `${Math.round(received / seconds)} datagrams/s (receive buffer ${s.statsd.receiveBufferSize} bytes)`);
  }, 90_000);
});

describe('statsd in the compiled server (node dist/server/main.js)', () => {
  afterEach(stopServers);

  async function freeUdpPort(): Promise<number> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const { port } = socket.address();
    await new Promise<void>((resolve) => socket.close(resolve));
    return port;
  }

  /** A sample's value in a Prometheus text exposition. */
  const sampleOf = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);

  it('listens with --statsd-port, writes a gauge to the statsd resource and counts in /metrics', async () => {
    const statsdPort = await freeUdpPort();
    const s = await startServer(['--workers', '1', '--statsd-port', String(statsdPort), '--statsd-resource-id', 'proc-statsd', '--statsd-flush-delay', '0.05']);
    expect(s.output()).toContain(`statsd listening on udp 127.0.0.1:${statsdPort}`);
    const send = await sender(statsdPort);
    const url = `${s.url}/v1/resource/generic/proc-statsd/metric/${encodeURIComponent('temp|g')}/measures?refresh=true&aggregation=max`;
    let body: unknown = [];
    let sent = 0;
    const deadline = Date.now() + 20_000;
    while (!(Array.isArray(body) && body.length > 0)) {
      if (Date.now() > deadline) throw new Error(`no gauge measure in 20 s:\n${s.output()}`);
      await send('temp:42|g');
      sent++;
      await new Promise((r) => setTimeout(r, 100));
      const res = await fetch(url, { headers: ADMIN });
      body = res.status === 200 ? await res.json() : [];
    }
    expect((body as [string, number, number][])[0]![2]).toBe(42);

    await send('no colon here');
    let scrape = '';
    while (!(sampleOf(scrape, 'gnocchi_statsd_lines_malformed_total') >= 1)) {
      if (Date.now() > deadline) throw new Error(`no malformed line counted in /metrics:\n${scrape}`);
      scrape = await (await fetch(`${s.url}/metrics`)).text();
    }
    expect(sampleOf(scrape, 'gnocchi_statsd_lines_malformed_total')).toBe(1);
    expect(sampleOf(scrape, 'gnocchi_statsd_datagrams_received_total')).toBe(sent + 1);
    expect(sampleOf(scrape, 'gnocchi_statsd_lines_accepted_total')).toBe(sent);
    expect(sampleOf(scrape, 'gnocchi_statsd_measures_flushed_total')).toBeGreaterThanOrEqual(1);

    s.child.kill('SIGTERM');
    expect((await s.exited).code).toBe(0);
  }, 40_000);
});
