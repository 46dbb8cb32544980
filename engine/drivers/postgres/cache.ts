/**
 * A node-local cache of index records (metrics, policies, rules, types,
 * resources, a resource's named metrics), kept exact across nodes by
 * LISTEN/NOTIFY on one channel: every write transaction notifies the keys
 * it changed, and PostgreSQL delivers the notification to every listening
 * node when (and only if) the transaction commits.
 *
 * Exactness:
 * - A fill that raced a change is not kept: each read notes the count of
 *   invalidations before going to PostgreSQL and keeps its answer only if
 *   none came in meanwhile (a change committed after the read's snapshot
 *   is then dropped before or after the fill, never lost).
 * - While the listening connection is down, notifications may be lost: the
 *   cache is emptied and neither answers nor fills until it is back (and
 *   emptied again then).
 * - The window: a node reads its cache while another node's commit is on
 *   its way as a notification (well under a millisecond on a LAN). The
 *   writer's own node is exact at once (it drops the keys itself after
 *   commit, and its writes await their own notification, by when every
 *   listener has been signalled). A reader that must see every write
 *   acknowledged before it started, on any node (`refresh`), calls
 *   `sync()`: one round trip on the listening connection, which PostgreSQL
 *   answers only after delivering the notifications of every transaction
 *   committed before it.
 *
 * Search answers (whole pages of `list()`) are kept beside the records,
 * each in the group of its resource type, under the same rules: a write
 * that changes a row of type T (resources or their history) notifies T's
 * group key and generic's (a generic search spans every type), and the
 * drop of a group key drops every answer in the group. Their size is
 * bounded in rows, not entries: ANSWER_ROWS_MAX per answer, ANSWERS_ROWS
 * in all, least recently used first out.
 */
import pg from 'pg';
import { GroupedLru } from '../../grouped-lru.js';
import { clientConfig } from './connection.js';

export const CHANNEL = 'gnocchi_index';
/** NOTIFY payloads must stay under 8000 bytes: past this, a change says "everything". */
const PAYLOAD_MAX = 7_000;
/** Entries kept at most; a full cache starts over. */
const CACHE_SIZE = 200_000;
/**
 * Rows of one search answer kept at most: a full page at Gnocchi's default
 * max_limit (1000), ~0.4 MB (a revision with 5 attributes is ~390 bytes of
 * heap). Bigger pages (a raised max_limit, aggregates' groupby over a whole
 * type) are not kept: each would push out dozens of dashboards' pages.
 */
export const ANSWER_ROWS_MAX = 1_000;
/**
 * Rows of search answers kept in all, ~20 MB: counted in rows, not
 * entries, since a page of 1,000 costs as much as 1,000 point records.
 */
export const ANSWERS_ROWS = 50_000;
/** How long a write waits for its own notification before returning anyway. */
const OWN_NOTIFY_TIMEOUT_MS = 1_000;
const RECONNECT_MS = [50, 100, 250, 500, 1000, 2000];

/** Absent records are cached too: a miss for an unknown metric id is as hot as a hit. */
const ABSENT = Symbol('absent');

/** What a search answer's load found: the value, and its rows if it may be kept. */
export interface Loaded<T> {
  value: T;
  /** Absent when the answer must not be kept (it reads the clock, or a record another group's writes change). */
  rows: number | undefined;
}

interface Notice {
  node: string;
  seq: number;
  keys: readonly string[] | '*';
}

export class IndexCache {
  private readonly entries = new Map<string, unknown>();
  /** Search answers by group (the key whose drop drops them), each costing its rows. */
  private readonly answers = new GroupedLru<unknown>(ANSWERS_ROWS);
  /** Invalidations seen so far (local or notified). */
  private generation = 0;
  private listener: pg.Client | undefined;
  private listening = false;
  private closed = false;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly waiters = new Map<number, () => void>();
  private seq = 0;
  private readonly node = `${process.pid}-${Math.random().toString(36).slice(2)}`;

  constructor(private readonly url: string) {}

  /** Connects the listener; resolves once listening (or rejects if the first attempt fails). */
  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(clientConfig(this.url));
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (msg) => {
      if (msg.channel === CHANNEL && msg.payload !== undefined) this.notified(JSON.parse(msg.payload) as Notice);
    });
    this.listener = client;
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    if (this.closed) {
      await client.end();
      return;
    }
    this.clear();
    this.listening = true;
    this.attempt = 0;
  }

  private lost(client: pg.Client): void {
    if (this.listener !== client) return;
    this.listener = undefined;
    this.listening = false;
    this.clear();
    // Writes waiting for their own notice committed already: let them return.
    for (const resolve of this.waiters.values()) resolve();
    this.waiters.clear();
    client.end().catch(() => {});
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer !== undefined) return;
    const delay = RECONNECT_MS[Math.min(this.attempt++, RECONNECT_MS.length - 1)]!;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect().catch(() => {
        const client = this.listener;
        if (client !== undefined) this.lost(client);
        else this.scheduleReconnect();
      });
    }, delay);
    this.reconnectTimer.unref();
  }

  private notified(notice: Notice): void {
    this.drop(notice.keys);
    if (notice.node === this.node) {
      this.waiters.get(notice.seq)?.();
      this.waiters.delete(notice.seq);
    }
  }

  private clear(): void {
    this.entries.clear();
    this.answers.clear();
    this.generation++;
  }

  /** Drops these keys' records, and the answers of the groups they name. */
  drop(keys: readonly string[] | '*'): void {
    if (keys === '*') {
      this.clear();
      return;
    }
    for (const k of keys) {
      this.entries.delete(k);
      this.answers.deleteGroup(k);
    }
    this.generation++;
  }

  /**
   * The answer kept under `key` in `group`, or `load()`'s, kept as get()
   * keeps records (if nothing was invalidated meanwhile), within the
   * bounds in rows.
   */
  async answer<T>(group: string, key: string, load: () => Promise<Loaded<T>>): Promise<T> {
    const id = `${group}\0${key}`;
    if (this.listening) {
      const hit = this.answers.get(id);
      if (hit !== undefined) return hit as T;
    }
    const generation = this.generation;
    const { value, rows } = await load();
    if (rows !== undefined && rows <= ANSWER_ROWS_MAX && this.listening && generation === this.generation) {
      this.answers.set(group, id, value, rows);
    }
    return value;
  }

  /**
   * The cached value of `key`, or `load()`'s, kept if nothing was
   * invalidated meanwhile.
   */
  async get<T>(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    if (this.listening) {
      const hit = this.entries.get(key);
      if (hit !== undefined) return hit === ABSENT ? undefined : (hit as T);
    }
    const generation = this.generation;
    const value = await load();
    if (this.listening && generation === this.generation) {
      if (this.entries.size >= CACHE_SIZE) this.entries.clear();
      this.entries.set(key, value === undefined ? ABSENT : value);
    }
    return value;
  }

  /**
   * The cached values of `keys` (missing from the answer when absent), the
   * others from one `load` of those missing, kept as get() keeps them.
   */
  async getMany<T>(keys: readonly string[], load: (missing: string[]) => Promise<Map<string, T>>): Promise<Map<string, T>> {
    const out = new Map<string, T>();
    const missing: string[] = [];
    for (const key of keys) {
      const hit = this.listening ? this.entries.get(key) : undefined;
      if (hit === undefined) missing.push(key);
      else if (hit !== ABSENT) out.set(key, hit as T);
    }
    if (missing.length === 0) return out;
    const generation = this.generation;
    const loaded = await load(missing);
    const keep = this.listening && generation === this.generation;
    if (keep && this.entries.size + missing.length > CACHE_SIZE) this.entries.clear();
    for (const key of missing) {
      const value = loaded.get(key);
      if (value !== undefined) out.set(key, value);
      if (keep) this.entries.set(key, value === undefined ? ABSENT : value);
    }
    return out;
  }

  /** The payload a write notifies, and the sequence number its writer waits for. */
  notice(keys: readonly string[] | '*'): { payload: string; seq: number } {
    const seq = ++this.seq;
    let payload = JSON.stringify({ node: this.node, seq, keys } satisfies Notice);
    if (payload.length > PAYLOAD_MAX) payload = JSON.stringify({ node: this.node, seq, keys: '*' } satisfies Notice);
    return { payload, seq };
  }

  /** Arms the wait for the notice `seq` before its transaction commits (it may arrive before COMMIT answers). */
  expect(seq: number): Promise<void> {
    if (!this.listening) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(seq);
        resolve();
      }, OWN_NOTIFY_TIMEOUT_MS);
      timer.unref();
      this.waiters.set(seq, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  forget(seq: number): void {
    this.waiters.get(seq)?.();
    this.waiters.delete(seq);
  }

  /** Returns once every notification of a transaction committed before the call has been applied. */
  async sync(): Promise<void> {
    const client = this.listener;
    if (client === undefined || !this.listening) return;
    try {
      await client.query('SELECT 1');
    } catch {
      // The listener is lost: the cache is off until it is back, so reads are exact anyway.
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** Search answers kept, and their rows. */
  get answerSize(): { answers: number; rows: number } {
    return { answers: this.answers.size, rows: this.answers.cost };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer !== undefined) clearTimeout(this.reconnectTimer);
    const client = this.listener;
    this.listener = undefined;
    this.listening = false;
    this.clear();
    if (client !== undefined) await client.end().catch(() => {});
  }
}
