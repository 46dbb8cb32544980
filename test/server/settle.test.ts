// --settle-after through the compiled server: metrics fed time-major (one
// point per push, as collectors do) keep their newest rows raw while points
// arrive; once quiet they are settled (counted in /metrics), the data
// directory holds them compressed (the admin `stats` command's count of
// open split rows is unchanged, its bytes are not: the frozen rows, encoded,
// stay in each state, with no chunk record) and every answer stays the same.
// With 0, nothing is settled.
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { CHUNK_ROWS } from '../../engine/state-chunks.js';
import { call, MAIN, startServer, stopServers, type Server } from './process-helpers.js';

afterEach(stopServers);

const T0 = Date.UTC(2024, 0, 1) / 1000;
const METRICS = 20;
/** Fewer rows than an update freezes at: each state keeps them all raw, however processing batched the pushes. */
const ROUNDS = CHUNK_ROWS - 1;

async function feed(s: Server): Promise<string[]> {
  expect((await call(s, 'POST', '/v1/archive_policy', { name: 'p', aggregation_methods: ['mean', 'max'], definition: [{ granularity: '60s', points: 10000 }] })).status).toBe(201);
  const ids: string[] = [];
  for (let m = 0; m < METRICS; m++) ids.push((await call(s, 'POST', '/v1/metric', { archive_policy_name: 'p' })).body.id);
  for (let r = 0; r < ROUNDS; r++) {
    const body = Object.fromEntries(ids.map((id, m) => [id, [{ timestamp: T0 + 60 * r, value: Math.round(100 * Math.sin(r + m)) / 100 }]]));
    expect((await call(s, 'POST', '/v1/batch/metrics/measures', body)).status).toBe(202);
  }
  return ids;
}

async function answers(s: Server, ids: string[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const id of ids) {
    for (const aggregation of ['mean', 'max']) out.push((await call(s, 'GET', `/v1/metric/${id}/measures?aggregation=${aggregation}&refresh=true`)).body);
  }
  return out;
}

/** What `gnocchi-ts stats` (read-only beside a running server) counts: open split rows, the value bytes of the states, and chunk records. */
function stats(s: Server): { openRows: number; stateBytes: number; chunks: number } {
  const out = JSON.parse(execFileSync(process.execPath, [MAIN, 'stats', '--data-dir', s.dir, '--json']).toString());
  const db = (name: string) => out.databases.find((d: { name: string }) => d.name === name);
  return { openRows: out.points.openRows, stateBytes: db('metric_state').valueBytes, chunks: db('state_chunks')?.records ?? 0 };
}

async function settledCount(s: Server): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  return Number(/^gnocchi_metrics_settled_total (\S+)$/m.exec(text)![1]);
}

describe('--settle-after', () => {
  it('settles quiet metrics: answers unchanged, counted in /metrics', async () => {
    const s = await startServer(['--settle-after', '5000']);
    const ids = await feed(s);
    while ((await call(s, 'GET', '/v1/status')).body.storage.summary.measures > 0) await new Promise((r) => setTimeout(r, 20));
    const raw = stats(s);
    expect(raw.openRows).toBe(METRICS * ROUNDS);
    const before = await answers(s, ids);
    expect(before.every((a) => Array.isArray(a) && a.length === ROUNDS)).toBe(true);
    const deadline = Date.now() + 20_000;
    while ((await settledCount(s)) < METRICS) {
      expect(Date.now(), 'every metric settled within 20 s').toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await settledCount(s)).toBe(METRICS);
    expect(await answers(s, ids)).toEqual(before);
    const settled = stats(s);
    expect(settled.openRows).toBe(METRICS * ROUNDS);
    // All raw rows but the last, of 3 columns (8 bytes each), left each state for a small inline chunk.
    expect(settled.chunks).toBe(0);
    expect(raw.stateBytes - settled.stateBytes).toBeGreaterThan((METRICS * (ROUNDS - 1) * 3 * 8) / 2);
  });

  it('with 0, settles nothing', async () => {
    const s = await startServer(['--settle-after', '0']);
    const ids = await feed(s);
    await answers(s, ids);
    await new Promise((r) => setTimeout(r, 500));
    expect(await settledCount(s)).toBe(0);
  });
});
