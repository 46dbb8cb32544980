/**
 * Cluster failures at named fault points (engine/failpoints.ts, README "Fault points"): a node killed
 * exactly where a crash is worst, and a lease holder stopped inside a batch it computed, whose late commit
 * must be refused. One PostgreSQL, one Redis and three nodes for the file: the armed node (the one
 * holding the most shards, so that it processes often), a writer, and a reader no push goes to, through
 * which the invariant is checked. While armed, a node is never signalled by the test: its death by
 * SIGKILL with the fault point's line on its stderr proves the point fired.
 * CLUSTER_SEED=<n> replays the random choices of a run (its seed is printed). CLUSTER_SPLITS=ceph|swift
 * keeps sealed splits in that object store, with measures 30 s apart so that batches seal splits all
 * along, and adds kills between a batch's uploads and its commit (process.uploaded).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardsOf } from '../../engine/drivers/redis/rendezvous.js';
import { shardOfMetric } from '../../engine/drivers/shard-hash.js';
import { FAILPOINTS, type FailpointName } from '../../engine/failpoints.js';
import { call, prng, randInt, request, seedFromEnv, sleep } from '../reliability/harness.js';
import { clusterView, everyShardHeld, expectInvariant, underLoad } from './checks.js';
import { MISSING, SECONDS_APART, SETUP, SHARDS, SPLITS, startFailureEngines, stopFailureCluster, type FailureEngines } from './failure-cluster.js';
import { startCluster, type ClusterNode } from './nodes.js';
import { createWorkload, WORKLOAD_POLICY, type Journal } from './workload.js';

const SEED = seedFromEnv('CLUSTER_SEED');

if (MISSING !== undefined) console.warn(MISSING);

let engines: FailureEngines;
let nodes: ClusterNode[] = [];
let armed: ClusterNode;
let writer: ClusterNode;
let reader: ClusterNode;
let names: string[];
/** The shards the armed node holds while all three are members. */
let armedShards: number[];

/** `promise`, or an error naming `what` after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what())), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The node's process ended by its own SIGKILL at `point`'s `hit`-th hit. */
async function expectDiedAt(node: ClusterNode, point: FailpointName, hit: number): Promise<void> {
  const exit = await within(node.exited(), 60_000, () => `${node.name} did not die at ${point} in 60 s:\n${node.output().slice(-3000)}`);
  expect(exit, node.output().slice(-3000)).toEqual({ code: null, signal: 'SIGKILL' });
  expect(node.output()).toContain(`failpoint ${point} reached (kill, hit ${hit},`);
}

/** Metrics of the armed node's shards a workload has at least: it processes only those. */
const ARMED_METRICS = 2;

/** A workload of 8 metrics, at least ARMED_METRICS of them in the armed node's shards (another is created until one has). */
async function workload(): Promise<Journal> {
  for (;;) {
    const journal = await createWorkload(writer.url, 8, SECONDS_APART);
    if (journal.metricIds.filter((id) => armedShards.includes(shardOfMetric(id, SHARDS))).length >= ARMED_METRICS) return journal;
  }
}

/**
 * Waits until `through` sees each node holding its rendezvous share of the shards: each node has heard
 * of the others since it last started, and every shard is held.
 */
async function settled(through: ClusterNode): Promise<void> {
  const deadline = Date.now() + 30_000;
  const share = (name: string) => JSON.stringify(shardsOf(name, names, SHARDS));
  for (;;) {
    const view = await clusterView(through);
    if (names.every((name) => JSON.stringify(view.nodes.find((n) => n.id === name)?.shards) === share(name))) return;
    if (Date.now() > deadline) throw new Error(`the shards are not where rendezvous puts them after 30 s: ${JSON.stringify(view)}`);
    await sleep(100);
  }
}

/** The node's fenced_commits as `through` reports it (its heartbeat), once at least `least`. */
async function fencedAsSeenBy(through: ClusterNode, node: ClusterNode, least: number): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const view = await clusterView(through);
    const fenced = (through === node ? view.fenced_commits : view.nodes.find((n) => n.id === node.name)?.fenced_commits) ?? 0;
    if (fenced >= least || Date.now() > deadline) return fenced;
    await sleep(100);
  }
}

describe.skipIf(MISSING !== undefined)(MISSING ?? `cluster fault points (${SETUP})`, () => {
  beforeAll(async () => {
    console.log(`cluster fault points: seed ${SEED} (CLUSTER_SEED=${SEED} replays it)`);
    engines = await startFailureEngines();
    nodes = await startCluster(3, engines.options);
    names = nodes.map((n) => n.name);
    const owned = (node: ClusterNode) => shardsOf(node.name, names, SHARDS);
    [armed, writer, reader] = [...nodes].sort((a, b) => owned(b).length - owned(a).length) as [ClusterNode, ClusterNode, ClusterNode];
    armedShards = owned(armed);
    await settled(armed);
    console.log(`armed ${armed.name} (shards ${armedShards.join(', ')}), writer ${writer.name}, reader ${reader.name}`);
  }, 120_000);

  afterAll(() => stopFailureCluster(nodes, engines), 120_000);

  // 10 kills in all (12 with an object store); a kill at push.appended costs no wait for the armed node to take its shards back.
  it.each<[FailpointName, number]>([
    ['push.appended', 4],
    ['process.computed', 3],
    ...(SPLITS === undefined ? [] : [['process.uploaded', 2] as [FailpointName, number]]),
    ['process.committed', 3],
  ])('kill -9 at %s, %i cycles, each restarted without the fault point: invariant through the reader', async (point, cycles) => {
    const journal = await workload();
    const salt = Object.keys(FAILPOINTS).indexOf(point);
    const rand = prng(SEED + salt);
    const hits: number[] = [];
    const writers = () => [writer.url, ...(armed.alive() ? [armed.url] : [])];
    await underLoad(journal, writers, SEED + 100 + salt, async () => {
      for (let cycle = 0; cycle < cycles; cycle++) {
        const hit = randInt(rand, 1, 3);
        await armed.restartArmed(`${point}:kill@${hit}`);
        await expectDiedAt(armed, point, hit);
        hits.push(hit);
        await armed.restart();
        await sleep(randInt(rand, 200, 1000));
      }
    });
    console.log(`${point}: ${armed.name} died at hits ${hits.join(', ')}`);
    // The reports the reader goes by are those of the armed node's last process, holding its shards again.
    await settled(reader);
    await expectInvariant(`kill -9 at ${point}`, reader, journal, nodes, SHARDS);
  }, 180_000);

  it('kill -9 at index.committed: a resource created but never answered is there once, through every node, and takes measures', async () => {
    const id = randomUUID();
    const body = { id, metrics: { cpu: { archive_policy_name: WORKLOAD_POLICY.name } } };
    await createWorkload(writer.url, 0); // its archive policy, for this test alone
    await armed.restartArmed('index.committed:kill');
    const outcome = await request(armed.url, 'POST', '/v1/resource/generic', body);
    expect(outcome.kind).toBe('lost');
    await expectDiedAt(armed, 'index.committed', 1);
    await armed.restart();
    const metricIds = new Set<string>();
    for (const node of nodes) {
      const r = await call(node.url, 'GET', `/v1/resource/generic/${id}`);
      expect(r.status, `${node.name}: ${r.text}`).toBe(200);
      metricIds.add(r.body.metrics.cpu as string);
    }
    expect(metricIds.size).toBe(1);
    expect((await call(writer.url, 'POST', '/v1/resource/generic', body)).status).toBe(409);
    const [metricId] = metricIds;
    const pushed = await call(writer.url, 'POST', `/v1/metric/${metricId}/measures`, [{ timestamp: '2024-01-01T00:00:00+00:00', value: 7 }]);
    expect(pushed.status, pushed.text).toBe(202);
    const read = await call(reader.url, 'GET', `/v1/metric/${metricId}/measures?refresh=true&aggregation=sum&granularity=1`);
    expect(read.status, read.text).toBe(200);
    expect(read.body).toEqual([['2024-01-01T00:00:00+00:00', 1, 7]]);
  }, 120_000);

  it('a holder stopped inside a computed batch past its lease: another node processes the same records, the late commit is refused and counted', async () => {
    const journal = await workload();
    // The stall only has to outlast the test's reaction to the line; the stop (over 10 s) outlasts the stall.
    await armed.restartArmed('process.computed:stall:15000@1');
    expect(armed.alive(), armed.output()).toBe(true);
    // Nothing is pending: its first batch comes from the pushes below, once every node knows it is back
    // (else the others may not hear that it came back before it stops, and take its shards for good).
    await settled(writer);
    try {
      await underLoad(journal, () => [writer.url], SEED + 4, async () => {
        await armed.printed('failpoint process.computed reached (stall 15000 ms, hit 1,', 30_000);
        armed.stall();
        // Once its membership lapses (10 s without a heartbeat), the others take its shards, whose
        // leases lapsed long before, and process the records of the batch it holds.
        await everyShardHeld(writer, SHARDS, armed.name);
      });
      await expectInvariant('stopped holder, before it resumes', reader, journal, nodes, SHARDS);
    } finally {
      armed.resume();
    }
    expect(await fencedAsSeenBy(armed, armed, 1)).toBeGreaterThanOrEqual(1);
    const refusal = /Commit on shard (\d+) under fence \d+ refused: .*/.exec(armed.output());
    expect(refusal, armed.output().slice(-3000)).not.toBeNull();
    expect(armedShards).toContain(Number(refusal![1]));
    console.log(`stopped holder: ${refusal![0]}`);
    const metrics = await call(armed.url, 'GET', '/metrics');
    expect(Number(/^gnocchi_fenced_commits_total (\d+)/m.exec(metrics.text)?.[1])).toBeGreaterThanOrEqual(1);
    expect(await fencedAsSeenBy(reader, armed, 1)).toBeGreaterThanOrEqual(1);
    await settled(reader);
    await expectInvariant('stopped holder, after its late commit', reader, journal, nodes, SHARDS);
  }, 120_000);
});
