/**
 * The drivers' Redis client, from a `redis://host:port[/db]` URL. It fails
 * fast rather than queueing: while Redis is down or restarting, every call
 * rejects within the command timeout with EngineUnavailable (the server's
 * 503 + Retry-After), and the client reconnects by itself in the
 * background. Nothing is sent twice: commands issued while disconnected
 * are refused (no offline queue), and the ones unanswered when a
 * connection drops fail rather than being re-sent on the next one
 * (maxRetriesPerRequest 0, no auto-resend), since a re-sent append would
 * record a push twice. A caller that saw such a failure does not know
 * whether the command ran; every driver write is safe to repeat or to have
 * happened (see incoming.ts, series.ts).
 */
import { Redis, type ChainableCommander } from 'ioredis';
import { EngineUnavailable } from '../../errors.js';
import { SCRIPTS, type LuaScript } from './scripts.js';

export interface RedisConnectionOptions {
  /** Milliseconds a connection attempt may take (default 2000). */
  connectTimeoutMs?: number;
  /** Milliseconds a command may wait for its answer (default 5000). */
  commandTimeoutMs?: number;
  /** Told of connection errors (the client retries them by itself); never thrown. */
  onError?: (err: unknown) => void;
}

/** Milliseconds between reconnection attempts: quick at first, then once a second. */
function reconnectDelay(attempt: number): number {
  return Math.min(50 * 2 ** attempt, 1000);
}

/** A connected client with the drivers' scripts defined; EngineUnavailable when Redis does not answer. */
export async function connectRedis(url: string, options: RedisConnectionOptions = {}): Promise<Redis> {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    connectTimeout: options.connectTimeoutMs ?? 2000,
    commandTimeout: options.commandTimeoutMs ?? 5000,
    retryStrategy: reconnectDelay,
  });
  // An 'error' event without a listener is thrown by the emitter: a server must not die of Redis going down.
  client.on('error', (err: Error) => options.onError?.(err));
  for (const script of SCRIPTS) client.defineCommand(script.name, { lua: script.lua });
  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    throw unavailable(err);
  }
  return client;
}

/** Messages of the failures that mean "Redis cannot take this now", not a bug of ours. */
const UNAVAILABLE = [
  'Connection is closed',
  "Stream isn't writeable",
  'Command timed out',
  'Command aborted',
  'Reached the max retries per request limit',
  'connect ETIMEDOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'LOADING',
  'OOM',
  'BUSY',
  'MASTERDOWN',
  'READONLY',
  'CLUSTERDOWN',
  'TRYAGAIN',
];

/** `err` as EngineUnavailable when it says Redis is out of reach or refusing writes; otherwise as it is. */
export function unavailable(err: unknown): unknown {
  if (err instanceof EngineUnavailable || !(err instanceof Error)) return err;
  return UNAVAILABLE.some((m) => err.message.includes(m)) ? new EngineUnavailable('Redis', err.message) : err;
}

/** Awaits a Redis call, its failures mapped by {@link unavailable}. */
export async function guard<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    throw unavailable(err);
  }
}

function scriptCommand(host: object, script: LuaScript): (...args: unknown[]) => unknown {
  const run = (host as Record<string, (...args: unknown[]) => unknown>)[`${script.name}Buffer`];
  if (run === undefined) throw new Error(`Redis script ${script.name} is not defined on this client`);
  return run;
}

/**
 * Runs one of SCRIPTS (defined on the client at connection) with binary
 * replies. ioredis sends the script's source on a connection's first use
 * of it and its SHA after, so a restarted Redis (its script cache empty)
 * costs nothing special.
 */
export function runScript(client: Redis, script: LuaScript, keys: readonly string[], args: readonly (string | Buffer)[]): Promise<unknown> {
  return scriptCommand(client, script).call(client, keys.length, ...keys, ...args) as Promise<unknown>;
}

/** Queues one of SCRIPTS in a transaction or pipeline; its reply comes with the others' from exec(). */
export function queueScript(batch: ChainableCommander, script: LuaScript, keys: readonly string[], args: readonly (string | Buffer)[]): void {
  scriptCommand(batch, script).call(batch, keys.length, ...keys, ...args);
}
