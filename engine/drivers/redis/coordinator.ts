/**
 * Coordination through Redis. Each node heartbeats a key that expires
 * after `memberTtlMs` and polls the live members every third of it; the
 * shards it should hold are its share of a rendezvous assignment over them
 * (rendezvous.ts), and onChange listeners hear whenever the members change.
 * The assignment is only advice: during a change two nodes may both want a
 * shard, and the lease decides. A lease is the shard's lock key, set only
 * if free, its value the fence: the shard's epoch incremented, so every
 * lease taken has a greater fence than the one before. Renewal and release
 * compare the value first. A lease that expires while its holder still
 * computes (stalled, cut off) is lost: the next holder's fence differs, and
 * the series store's commit refuses the old one.
 */
import type { Redis } from 'ioredis';
import type { Coordinator, Fence, Shard } from '../types.js';
import { guard, runScript } from './connection.js';
import { memberKeys, shardKeys } from './keys.js';
import { shardsOf } from './rendezvous.js';
import { HEARTBEAT, LOCK, RELEASE, RENEW } from './scripts.js';

export interface RedisCoordinatorOptions {
  nodeId: string;
  shards: number;
  /** Milliseconds a node stays a member without heartbeating (default 10 000). */
  memberTtlMs?: number;
  /** Told of failed heartbeats (Redis down); the next one is tried on schedule. */
  onError?: (err: unknown) => void;
  /** What the node says of itself with each heartbeat (JSON), for the cluster's status; see reports(). */
  report?: () => unknown;
}

export class RedisCoordinator implements Coordinator {
  private members: readonly string[] = [];
  private assigned: readonly Shard[] = [];
  private readonly listeners = new Set<() => void>();
  private readonly takenListeners = new Set<(shard: Shard) => void>();
  private timer: NodeJS.Timeout | undefined;
  private readonly memberTtlMs: number;

  constructor(
    private readonly client: Redis,
    private readonly options: RedisCoordinatorOptions,
  ) {
    this.memberTtlMs = options.memberTtlMs ?? 10_000;
  }

  /** Joins: the first heartbeat (EngineUnavailable if Redis does not answer), then one every third of the TTL. */
  async start(): Promise<void> {
    await this.heartbeat();
    this.timer = setInterval(() => {
      this.heartbeat().catch((err: unknown) => this.options.onError?.(err));
    }, this.memberTtlMs / 3).unref();
  }

  /** Leaves at once, so that the others take its shards without waiting for its heartbeat to expire. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    const { nodeId } = this.options;
    await guard(this.client.multi().srem(memberKeys.all, nodeId).del(memberKeys.node(nodeId)).exec());
  }

  /** Beats, then takes the live members as they are now. */
  async heartbeat(): Promise<void> {
    const { nodeId, shards } = this.options;
    const reply = (await guard(runScript(this.client, HEARTBEAT, [memberKeys.all, memberKeys.node(nodeId)], [nodeId, String(this.memberTtlMs), memberKeys.node(''), JSON.stringify(this.options.report?.() ?? null)]))) as Buffer[];
    const members = reply.map((b) => b.toString()).sort();
    if (members.length === this.members.length && members.every((m, i) => m === this.members[i])) return;
    this.members = members;
    this.assigned = shardsOf(nodeId, members, shards);
    for (const listener of this.listeners) listener();
  }

  /** The live members at the last heartbeat, sorted. */
  liveMembers(): readonly string[] {
    return this.members;
  }

  /** The live members' last reports, by node id. */
  async reports(): Promise<Map<string, unknown>> {
    const members = this.members;
    if (members.length === 0) return new Map();
    const values = await guard(this.client.mget(members.map((m) => memberKeys.node(m))));
    return new Map(members.flatMap((m, i) => (values[i] == null ? [] : [[m, JSON.parse(values[i]!) as unknown]])));
  }

  owned(): readonly Shard[] {
    return this.assigned;
  }

  async lock(shard: Shard, ttlMs: number): Promise<Fence | null> {
    const fence = await guard(runScript(this.client, LOCK, [shardKeys.lock(shard), shardKeys.epoch(shard)], [String(ttlMs)]));
    if (fence === null) return null;
    for (const listener of this.takenListeners) listener(shard);
    return fence as number;
  }

  async renew(shard: Shard, fence: Fence, ttlMs: number): Promise<boolean> {
    return (await guard(runScript(this.client, RENEW, [shardKeys.lock(shard)], [String(fence), String(ttlMs)]))) === 1;
  }

  async release(shard: Shard, fence: Fence): Promise<void> {
    await guard(runScript(this.client, RELEASE, [shardKeys.lock(shard)], [String(fence)]));
  }

  async leaseOf(shard: Shard): Promise<Fence | null> {
    const value = await guard(this.client.get(shardKeys.lock(shard)));
    return value === null ? null : Number(value);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls `listener` with each shard whose lease this node takes (lock succeeded: the epoch grew). */
  onLeaseTaken(listener: (shard: Shard) => void): () => void {
    this.takenListeners.add(listener);
    return () => this.takenListeners.delete(listener);
  }
}
