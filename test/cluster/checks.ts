/**
 * What the cluster failure tests share: the cluster as a node's /v1/status shows it, load while a fault
 * runs, and the invariant checked through a reader (SCALE-OUT.md §7).
 */
import { expect } from 'vitest';
import { call, sleep } from '../reliability/harness.js';
import type { ClusterNode } from './nodes.js';
import { acknowledged, push, violations, type Journal } from './workload.js';

/** What GET /v1/status of a node says of the cluster. */
export interface ClusterView {
  shard_holders: Record<string, string>;
  /** The answering node's own refused commits. */
  fenced_commits: number;
  nodes: { id: string; shards: number[]; fenced_commits: number }[];
}

export async function clusterView(node: ClusterNode): Promise<ClusterView> {
  const r = await call(node.url, 'GET', '/v1/status?details=false');
  if (r.status !== 200) throw new Error(`status of ${node.name}: ${r.status} ${r.text}`);
  return r.body.cluster as ClusterView;
}

/**
 * Waits until `node` sees each of the `shards` held (by the nodes' heartbeats), so that reads need not wait
 * for a lease to expire; with `without`, held by the others once that node is no longer a member (its
 * membership lapsed, or it left), so that no report of it, nor one from before it went, counts.
 */
export async function everyShardHeld(node: ClusterNode, shards: number, without?: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  const done = (view: ClusterView) =>
    Object.keys(view.shard_holders).length === shards && (without === undefined || view.nodes.every((n) => n.id !== without));
  while (!done(await clusterView(node))) {
    if (Date.now() > deadline) throw new Error(`${node.name} sees shards without a holder${without === undefined ? '' : ` or ${without} a member`} after 30 s`);
    await sleep(100);
  }
}

/** Counts by status since `before` (a copy of journal.statuses). */
export function since(journal: Journal, before: Map<string, number>): Map<string, number> {
  return new Map([...journal.statuses].map(([status, n]) => [status, n - (before.get(status) ?? 0)]));
}

export const describeStatuses = (statuses: Map<string, number>) => [...statuses].map(([s, n]) => `${s}: ${n}`).join(', ');

/**
 * Pushes through `writers` (asked before each push) while `fault` runs, and
 * `afterMs` longer; then stops the pushes and waits for the last answers.
 */
export async function underLoad(journal: Journal, writers: () => string[], seed: number, fault: () => Promise<void>, afterMs = 1000): Promise<void> {
  let running = true;
  const pushing = push(journal, { nodes: writers, clients: 2, seed, running: () => running });
  try {
    await fault();
    await sleep(afterMs);
  } finally {
    running = false;
    await pushing;
  }
}

/** The invariant, read through `reader` with refresh=true; on a failure, what `nodes` printed. */
export async function expectInvariant(name: string, reader: ClusterNode, journal: Journal, nodes: readonly ClusterNode[], shards: number): Promise<void> {
  await everyShardHeld(reader, shards);
  const t0 = performance.now();
  const found = await violations(reader.url, journal).catch(async (err: unknown) => {
    // What the nodes said and the cluster looked like, to tell a stuck holder from a lost lease.
    const status = JSON.stringify(await clusterView(reader).catch(String));
    const outputs = nodes.map((n) => `--- ${n.name}:\n${n.output().slice(-3000)}`).join('\n');
    throw new Error(`${String(err)}\nstatus through ${reader.name}: ${status}\n${outputs}`);
  });
  console.log(
    `${name}: ${acknowledged(journal)} measures acknowledged (answers ${describeStatuses(journal.statuses)}), ` +
      `checked through ${reader.name} in ${Math.round(performance.now() - t0)} ms`,
  );
  expect(acknowledged(journal)).toBeGreaterThan(0);
  expect(found).toEqual([]);
}
