// The fault points of engine/failpoints.ts in the compiled server, embedded (LMDB): a spec that does not
// parse stops the server, and a kill at a point of the push or processing paths, fired from the main
// thread or from a processing worker thread, takes the whole process down with its line on stderr; the
// server restarted without it holds every acknowledged measure once. The cluster runs of these points are
// in test/cluster/failpoints.test.ts.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { FAILPOINTS, type FailpointName } from '../../engine/failpoints.js';
import { acknowledged, createWorkload, push, violations } from '../cluster/workload.js';
import { answersOrExits, kill, spawnServer, startServer, tempDir, type Server } from './harness.js';

const servers: Server[] = [];
const dirs: string[] = [];

afterAll(async () => {
  for (const s of servers) await kill(s);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function dir(): string {
  const d = tempDir('failpoints');
  dirs.push(d);
  return d;
}

async function spawnArmed(data: string, spec: string): Promise<Server> {
  const server = await spawnServer(data, [], { GNOCCHI_FAILPOINT: spec });
  servers.push(server);
  return server;
}

describe('fault points, embedded', () => {
  it('a GNOCCHI_FAILPOINT that does not parse: exit 2, naming the known points', async () => {
    const server = await spawnArmed(dir(), 'process.computed:explode');
    expect(await server.exited).toEqual({ code: 2, signal: null });
    expect(server.stderr()).toContain('GNOCCHI_FAILPOINT: "process.computed:explode" is not');
    for (const name of Object.keys(FAILPOINTS)) expect(server.stderr()).toContain(name);
  });

  it.each<[FailpointName, number, RegExp]>([
    ['push.appended', 3, /main thread\)/],
    ['process.computed', 2, /thread \d+\)/],
    ['process.committed', 2, /thread \d+\)/],
  ])('kill at %s (hit %i) takes the process down from its thread; restarted, the invariant holds', async (point, hit, thread) => {
    const data = dir();
    const server = await spawnArmed(data, `${point}:kill@${hit}`);
    expect(await answersOrExits(server), server.stderr()).toBe(true);
    const journal = await createWorkload(server.url, 4);
    const alive = () => server.child.exitCode === null && server.child.signalCode === null;
    const deadline = Date.now() + 30_000;
    await push(journal, { nodes: () => [server.url], clients: 2, seed: hit, running: () => alive() && Date.now() < deadline });
    expect(alive(), `not dead at ${point} after 30 s of pushes:\n${server.stderr()}`).toBe(false);
    expect(await server.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const line = new RegExp(`failpoint ${point.replace('.', '\\.')} reached \\(kill, hit ${hit}, pid ${server.child.pid}, `);
    expect(server.stderr()).toMatch(line);
    expect(server.stderr().split('\n').find((l) => line.test(l))).toMatch(thread);
    const restarted = await startServer(data);
    servers.push(restarted);
    expect(acknowledged(journal)).toBeGreaterThan(0);
    expect(await violations(restarted.url, journal)).toEqual([]);
  }, 60_000);
});
