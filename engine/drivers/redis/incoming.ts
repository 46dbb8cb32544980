/**
 * Incoming records in Redis: a stream per shard, entry ids `<seq>-0` where
 * seq comes from the shard's counter, incremented in the same script as the
 * entry is added. Seqs therefore never go back, across reconnections and
 * Redis restarts alike (the counter is in the append-only file with the
 * entry), and they are the numbers states' lastSeq compare against.
 *
 * An append resolves once Redis answered, that is once its append-only file
 * has it (durability is Redis's `appendfsync` policy). A connection lost
 * before the answer fails the append with EngineUnavailable and is not
 * re-sent (connection.ts): the push is answered 503, and may still have been
 * recorded once, which an unacknowledged push is allowed to be. Re-sending
 * instead could record it twice under two seqs.
 */
import type { Redis } from 'ioredis';
import { shardOfMetric } from '../shard-hash.js';
import type { IncomingLog, Shard } from '../types.js';
import { guard, runScript, unavailable } from './connection.js';
import { HURRY_KEY, shardKeys } from './keys.js';
import { APPEND, HURRY } from './scripts.js';

/** Stream entries read per call while scanning a shard. */
const SCAN_PAGE = 1000;

type StreamEntry = [id: Buffer, fields: Buffer[]];

function seqOf(id: Buffer): number {
  const text = id.toString('latin1');
  return Number(text.slice(0, text.indexOf('-')));
}

export class RedisIncomingLog implements IncomingLog {
  readonly shared = true;

  constructor(
    private readonly client: Redis,
    readonly shards: number,
  ) {}

  shardOf(metricId: string): Shard {
    return shardOfMetric(metricId, this.shards);
  }

  async append(records: ReadonlyMap<Shard, Uint8Array>): Promise<Map<Shard, number>> {
    const shards = [...records.keys()];
    const keys = shards.flatMap((shard) => [shardKeys.seq(shard), shardKeys.incoming(shard)]);
    const args = shards.map((shard) => asBuffer(records.get(shard)!));
    const seqs = (await guard(runScript(this.client, APPEND, keys, args))) as number[];
    return new Map(shards.map((shard, i) => [shard, seqs[i]!]));
  }

  async scan(shard: Shard, visit: (seq: number, bytes: Uint8Array) => void, after = 0): Promise<void> {
    const key = shardKeys.incoming(shard);
    let from = after > 0 ? `(${after}-0` : '-';
    for (;;) {
      const page = (await guard(this.client.xrangeBuffer(key, from, '+', 'COUNT', SCAN_PAGE))) as unknown as StreamEntry[];
      for (const [id, fields] of page) visit(seqOf(id), fields[1]!);
      if (page.length < SCAN_PAGE) return;
      from = `(${page[page.length - 1]![0].toString('latin1')}`;
    }
  }

  async head(shard: Shard): Promise<number> {
    return Number((await guard(this.client.get(shardKeys.seq(shard)))) ?? 0);
  }

  async fetch(shard: Shard, seqs: readonly number[], visit: (seq: number, bytes: Uint8Array) => void): Promise<void> {
    if (seqs.length === 0) return;
    const key = shardKeys.incoming(shard);
    const pipeline = this.client.pipeline();
    for (const seq of seqs) pipeline.xrangeBuffer(key, `${seq}-0`, `${seq}-0`);
    const replies = (await guard(pipeline.exec()))!;
    replies.forEach(([err, entries], i) => {
      if (err !== null) throw unavailable(err);
      const entry = (entries as StreamEntry[])[0];
      if (entry !== undefined) visit(seqs[i]!, entry[1][1]!);
    });
  }

  async drop(shard: Shard, seq: number): Promise<void> {
    await guard(this.client.xdel(shardKeys.incoming(shard), `${seq}-0`));
  }

  async hurry(shard: Shard, seq: number): Promise<void> {
    await guard(runScript(this.client, HURRY, [HURRY_KEY], [String(shard), String(seq)]));
  }

  /** One hash for every shard: a holder reads it at each follow, one call for all its shards. */
  async hurried(): Promise<Map<Shard, number>> {
    const marks = await guard(this.client.hgetall(HURRY_KEY));
    return new Map(Object.entries(marks).map(([shard, seq]) => [Number(shard), Number(seq)]));
  }
}

/** The bytes as a Buffer over the same memory (ioredis sends Buffers as they are). */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
