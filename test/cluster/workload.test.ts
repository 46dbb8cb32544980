// The cluster tests' invariant checker against one embedded node: it passes
// on a clean run and names each kind of violation it exists to catch.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, isoSeconds, kill, startServer, tempDir, type Server } from '../reliability/harness.js';
import { acknowledged, createWorkload, push, violations, type Journal } from './workload.js';

let server: Server;
let dir: string;
let journal: Journal;

beforeAll(async () => {
  dir = tempDir('workload');
  server = await startServer(dir);
  journal = await createWorkload(server.url, 4);
  const until = Date.now() + 1_000;
  await push(journal, { nodes: () => [server.url], clients: 2, seed: 7, running: () => Date.now() < until });
}, 60_000);

afterAll(async () => {
  await kill(server);
  rmSync(dir, { recursive: true, force: true });
});

describe('cluster workload invariant', () => {
  it('finds nothing wrong when every push was answered 202', async () => {
    expect(acknowledged(journal)).toBeGreaterThan(0);
    expect([...journal.statuses.keys()]).toEqual(['202']);
    expect(await violations(server.url, journal)).toEqual([]);
  });

  it.each([
    ['an acknowledged measure lost', (j: Journal) => j.measures[0]!.set(j.nextSecond[0]!++, { value: j.nextValue++, fate: 'acked' }), /acknowledged measure at second \d+ lost/],
    ['a maybe-applied measure absent: allowed', (j: Journal) => j.measures[1]!.set(j.nextSecond[1]!++, { value: j.nextValue++, fate: 'maybe' }), undefined],
    ['a measure with another value', (j: Journal) => j.measures[2]!.set(0, { value: -1, fate: 'acked' }), /second 0 holds .*, pushed -1/],
  ])('%s', async (_name, tamper, message) => {
    const copy: Journal = { ...journal, measures: journal.measures.map((m) => new Map(m)), nextSecond: [...journal.nextSecond] };
    tamper(copy);
    const found = await violations(server.url, copy);
    if (message === undefined) expect(found).toEqual([]);
    else expect(found.join('\n')).toMatch(message);
  });

  it('names a second counted twice (a second measure in its bucket)', async () => {
    const id = journal.metricIds[2]!;
    const second = journal.nextSecond[2]!++;
    const value = journal.nextValue++;
    const half = new Date(Date.parse(isoSeconds(second)) + 500).toISOString();
    const body = [{ timestamp: isoSeconds(second), value }, { timestamp: half, value: 5 }];
    expect((await call(server.url, 'POST', `/v1/metric/${id}/measures`, body)).status).toBe(202);
    journal.measures[2]!.set(second, { value, fate: 'acked' });
    expect(await violations(server.url, journal)).toEqual([`metric 2: measure at second ${second} counted 2 times`]);
  });

  it('names a measure that no push applied', async () => {
    const id = journal.metricIds[3]!;
    const second = journal.nextSecond[3]!++;
    const r = await call(server.url, 'POST', `/v1/metric/${id}/measures`, [{ timestamp: isoSeconds(second), value: 5 }]);
    expect(r.status).toBe(202);
    expect((await violations(server.url, journal)).slice(1)).toEqual([`metric 3: a measure at second ${second} that no push applied`]);
  });
});
