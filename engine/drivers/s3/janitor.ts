/**
 * Deletes the split objects no commit references any more: uploads of a
 * refused commit whose own clean-up failed or never ran (the node died),
 * superseded objects whose delete failed, objects of deleted metrics. A
 * node sweeps the shards the coordinator gives it, when it is given them,
 * again when it takes a shard's lease (the epoch then passed every older
 * fence: what a dead holder uploaded and never committed is garbage only
 * from that instant), and every interval: it lists the shard's prefix and lets the SWEEP
 * script (redis/scripts.ts) pick what is garbage, against the shard's epoch
 * and the metrics' split indexes read in one instant. The rule needs no
 * lease: any node may sweep any shard safely, and two sweeping one shard
 * during a hand-over only delete the same objects twice.
 */
import type { Redis } from 'ioredis';
import { guard, runScript } from '../redis/connection.js';
import { shardKeys } from '../redis/keys.js';
import { SWEEP } from '../redis/scripts.js';
import type { Shard } from '../types.js';
import { parseSplitObjectName, shardObjectPrefix, type SplitObjectName, type SplitObjects } from './objects.js';

export interface JanitorOptions {
  /** The series Redis: split indexes, deleted metrics, shard epochs. */
  client: Redis;
  objects: SplitObjects;
  /** The shards this node sweeps, and word of when they change and of the leases it takes. */
  coordinator: {
    owned(): readonly Shard[];
    onChange(listener: () => void): () => void;
    onLeaseTaken(listener: (shard: Shard) => void): () => void;
  };
  /** Milliseconds between two sweeps of the shards held. */
  intervalMs: number;
  onError?: (err: unknown) => void;
}

export class SplitJanitor {
  /** Objects deleted since start. */
  deleted = 0;
  private swept = new Set<Shard>();
  private running: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void)[] = [];
  private closed = false;

  constructor(private readonly options: JanitorOptions) {}

  /** Sweeps the shards held now, each newly given shard at once, each shard whose lease it takes, and all of them every interval. */
  start(): void {
    const { coordinator } = this.options;
    this.unsubscribe = [
      coordinator.onChange(() => this.queue(false)),
      coordinator.onLeaseTaken((shard) => this.queue(true, [shard])),
    ];
    this.timer = setInterval(() => this.queue(true), this.options.intervalMs).unref();
    this.queue(false);
  }

  /** Resolves once the sweeps queued so far are done. */
  idle(): Promise<void> {
    return this.running;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    await this.running;
  }

  /** Sweeps the shards held (or those of `only`) that were not swept since they were given (`all`: every one). */
  private queue(all: boolean, only?: readonly Shard[]): void {
    this.running = this.running.then(async () => {
      const owned = this.options.coordinator.owned();
      this.swept = new Set([...this.swept].filter((shard) => owned.includes(shard)));
      for (const shard of only ?? owned) {
        if (this.closed || (!all && this.swept.has(shard))) continue;
        try {
          await this.sweep(shard);
          this.swept.add(shard);
        } catch (err) {
          this.options.onError?.(err);
        }
      }
    });
  }

  /** Deletes the shard's objects nothing references any more; answers how many. */
  async sweep(shard: Shard): Promise<number> {
    const { objects } = this.options;
    let count = 0;
    await objects.list(shardObjectPrefix(shard), async (names) => {
      const listed = names.map((name) => ({ name, parts: parseSplitObjectName(shard, name) })).filter((o): o is { name: string; parts: SplitObjectName } => o.parts !== undefined);
      if (listed.length === 0) return;
      const garbage = await this.garbage(shard, listed);
      if (garbage.length === 0) return;
      await objects.delete(garbage);
      count += garbage.length;
      this.deleted += garbage.length;
    });
    return count;
  }

  private async garbage(shard: Shard, listed: readonly { name: string; parts: SplitObjectName }[]): Promise<string[]> {
    const position = new Map<string, number>();
    for (const { parts } of listed) if (!position.has(parts.metricId)) position.set(parts.metricId, position.size + 1);
    const ids = [...position.keys()];
    const keys = [shardKeys.deleted(shard), shardKeys.epoch(shard), ...ids.map((id) => shardKeys.splitIndex(shard, id))];
    const args = [String(ids.length), ...ids];
    for (const { parts } of listed) args.push(String(position.get(parts.metricId)), parts.field, parts.revision, String(parts.fence));
    const [, positions] = (await guard(runScript(this.options.client, SWEEP, keys, args))) as [number, number[]];
    return positions.map((p) => listed[p - 1]!.name);
  }
}
