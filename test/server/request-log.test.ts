// The log at info: one JSON line per request (method, route, status,
// duration, bytes, user) instead of fastify's two, and a processing summary
// per interval while there is work, from the compiled server's output.
import { afterEach, describe, expect, it } from 'vitest';
import { call, startServer, stopServers, type Server } from './process-helpers.js';

afterEach(stopServers);

/** The JSON lines the server wrote so far. */
const logLines = (s: Server) =>
  s
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function until<T>(what: string, find: () => T | undefined, s: Server): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no ${what} in 10 s:\n${s.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('logs at info', () => {
  it('writes one line per request and a processing summary per interval', async () => {
    const s = await startServer(['--workers', '1', '--log-interval', '0.2'], { GNOCCHI_LOG_LEVEL: 'info' });
    const metric = await call(s, 'POST', '/v1/metric', { archive_policy_name: 'low' });
    expect(metric.status).toBe(201);
    const push = await call(s, 'POST', `/v1/metric/${metric.body.id}/measures`, [{ timestamp: '2024-01-01T00:00:00', value: 1 }]);
    expect(push.status).toBe(202);
    expect((await call(s, 'GET', '/v1/metric/nope')).status).toBe(404);

    const request = await until('request line for the push', () => logLines(s).find((l) => l.msg === 'request' && l.status === 202), s);
    expect(request).toMatchObject({ level: 30, method: 'POST', route: '/v1/metric/:id/measures', status: 202, bytes: 0, user: 'admin' });
    expect(request.ms).toBeGreaterThan(0);
    const created = logLines(s).find((l) => l.msg === 'request' && l.status === 201)!;
    expect(created.bytes).toBe(Buffer.byteLength(metric.text));
    const missing = await until('request line for the 404', () => logLines(s).find((l) => l.msg === 'request' && l.status === 404), s);
    expect(missing).toMatchObject({ route: '/v1/metric/:id', user: 'admin' });
    // fastify's own per-request lines are replaced, not doubled.
    expect(logLines(s).filter((l) => l.msg === 'incoming request' || l.msg === 'request completed')).toEqual([]);

    // The push may be accepted in one interval and processed in the next.
    const summaries = () => logLines(s).filter((l) => l.msg === 'processing');
    const total = (key: string) => summaries().reduce((n, l) => n + (l[key] as number), 0);
    await until('processing summary', () => (total('measures') === 1 ? true : undefined), s);
    expect({ accepted: total('accepted'), metrics: total('metrics'), failed: total('failed_batches') }).toEqual({ accepted: 1, metrics: 1, failed: 0 });
    expect(summaries().every((l) => l.level === 30)).toBe(true);
  });

  it('writes no request line at warn', async () => {
    const s = await startServer(['--workers', '0']);
    expect((await call(s, 'GET', '/v1/archive_policy')).status).toBe(200);
    expect(logLines(s).filter((l) => l.msg === 'request' || l.msg === 'processing')).toEqual([]);
  });
});
