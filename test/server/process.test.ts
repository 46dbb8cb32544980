// Default policies are Gnocchi 4.4's (archive_policy.py
// DEFAULT_ARCHIVE_POLICIES and the `default` rule of gnocchi-upgrade).
import { afterEach, describe, expect, it } from 'vitest';
import { call, startServer, stopServers } from './process-helpers.js';

afterEach(stopServers);

describe('the compiled server (node dist/server/main.js)', () => {
  it('serves, processes measures in its worker pool, and exits 0 on SIGTERM', async () => {
    const s = await startServer(['--no-default-archive-policies', '--workers', '1']);

    const root = await call(s, 'GET', '/');
    expect(root.body.versions[0].links[0].href).toBe(`${s.url}/v1/`);
    expect((await call(s, 'GET', '/v1/archive_policy')).body).toEqual([]);
    expect((await call(s, 'GET', '/v1/archive_policy_rule')).body).toEqual([]);

    const policy = await call(s, 'POST', '/v1/archive_policy', {
      name: 'p',
      definition: [{ granularity: '1 second', points: 3600 }, { granularity: '1 minute', points: 60 }],
    });
    expect(policy.status).toBe(201);
    expect(policy.headers.get('location')).toBe(`${s.url}/v1/archive_policy/p`);
    const metric = await call(s, 'POST', '/v1/metric', { archive_policy_name: 'p' });
    expect(metric.status).toBe(201);
    const id = metric.body.id as string;

    const push = await call(s, 'POST', `/v1/metric/${id}/measures`, [
      { timestamp: '2015-03-06T14:33:57', value: 43.1 },
      { timestamp: '2015-03-06T14:34:12', value: 12 },
      { timestamp: '2015-03-06T14:34:20', value: 2 },
    ]);
    expect(push.status).toBe(202);
    expect(push.text).toBe('');

    const read = await call(s, 'GET', `/v1/metric/${id}/measures?refresh=true`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual([
      ['2015-03-06T14:33:00+00:00', 60, 43.1],
      ['2015-03-06T14:34:00+00:00', 60, (12 + 2) / 2],
      ['2015-03-06T14:33:57+00:00', 1, 43.1],
      ['2015-03-06T14:34:12+00:00', 1, 12],
      ['2015-03-06T14:34:20+00:00', 1, 2],
    ]);

    const t0 = Date.now();
    s.child.kill('SIGTERM');
    const exit = await Promise.race([
      s.exited,
      new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 5_000)),
    ]);
    expect(exit, s.output()).toEqual({ code: 0, signal: null });
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('seeds Gnocchi\'s default policies and rule in a fresh data directory', async () => {
    const s = await startServer(['--workers', '0']);
    const policies = await call(s, 'GET', '/v1/archive_policy');
    expect(policies.status).toBe(200);
    const byName = new Map<string, any>(policies.body.map((p: { name: string }) => [p.name, p]));
    expect([...byName.keys()].sort()).toEqual(['bool', 'high', 'low', 'medium']);
    const defaults = ['count', 'max', 'mean', 'min', 'std', 'sum'];
    const norm = (p: any) => ({ ...p, aggregation_methods: [...p.aggregation_methods].sort() });
    // 365 days = 31 536 000 s = 8760 h; 7 days = 10 080 min; 30 days = 8640 × 5 min.
    expect(norm(byName.get('bool'))).toEqual({
      name: 'bool',
      back_window: 3600,
      definition: [{ granularity: '0:00:01', points: 31_536_000, timespan: '365 days, 0:00:00' }],
      aggregation_methods: ['last'],
    });
    expect(norm(byName.get('low'))).toEqual({
      name: 'low',
      back_window: 0,
      definition: [{ granularity: '0:05:00', points: 8640, timespan: '30 days, 0:00:00' }],
      aggregation_methods: defaults,
    });
    expect(norm(byName.get('medium'))).toEqual({
      name: 'medium',
      back_window: 0,
      definition: [
        { granularity: '0:01:00', points: 10_080, timespan: '7 days, 0:00:00' },
        { granularity: '1:00:00', points: 8760, timespan: '365 days, 0:00:00' },
      ],
      aggregation_methods: defaults,
    });
    expect(norm(byName.get('high'))).toEqual({
      name: 'high',
      back_window: 0,
      definition: [
        { granularity: '0:00:01', points: 3600, timespan: '1:00:00' },
        { granularity: '0:01:00', points: 10_080, timespan: '7 days, 0:00:00' },
        { granularity: '1:00:00', points: 8760, timespan: '365 days, 0:00:00' },
      ],
      aggregation_methods: defaults,
    });
    const rules = await call(s, 'GET', '/v1/archive_policy_rule');
    expect(rules.body).toEqual([{ name: 'default', metric_pattern: '*', archive_policy_name: 'low' }]);

    const metric = await call(s, 'POST', '/v1/metric', { name: 'anything' });
    expect(metric.status).toBe(201);
    expect(metric.body.archive_policy_name).toBe('low');

    s.child.kill('SIGTERM');
    expect(await s.exited).toEqual({ code: 0, signal: null });
  });
});
