/**
 * The pool of connections to PostgreSQL and the one way queries run
 * through it: a lost or refused connection becomes EngineUnavailable, and
 * the connection it happened on is destroyed, so that the pool opens fresh
 * ones once the server is back (no restart of the store).
 */
import pg from 'pg';
import { EngineUnavailable } from '../../errors.js';

/** bigint columns hold microseconds and revision numbers, all below 2^53: read them as numbers. */
const INT8_OID = 20;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** SQLSTATEs after which the statement had no effect because the server went or is not there yet. */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);
const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);

/** Whether `err` says the connection, not the statement, failed. */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_STATES.has(code) || UNAVAILABLE_NODE_CODES.has(code))) return true;
  return /Connection terminated|connection error|not queryable|timeout exceeded when trying to connect|Client was closed/i.test(err.message);
}

export function unavailable(err: unknown): EngineUnavailable {
  return new EngineUnavailable('PostgreSQL', err instanceof Error ? err.message : String(err));
}

export function clientConfig(url: string): pg.ClientConfig {
  return { connectionString: url, types, connectionTimeoutMillis: 5_000, keepAlive: true };
}

export type Queryable = Pick<pg.PoolClient, 'query'>;

export class Connection {
  readonly pool: pg.Pool;

  constructor(url: string, max = 10) {
    this.pool = new pg.Pool({ ...clientConfig(url), max, idleTimeoutMillis: 30_000 });
    // An idle connection the server closed: the pool drops it; nothing waits on it.
    this.pool.on('error', () => {});
  }

  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(sql, params);
    } catch (err) {
      throw isConnectionError(err) ? unavailable(err) : err;
    }
  }

  /**
   * Runs `f` in one READ COMMITTED transaction: committed if it returns,
   * rolled back if it throws. A connection lost at any point, COMMIT
   * included, is EngineUnavailable: the transaction then either committed
   * whole or not at all.
   */
  async transaction<T>(f: (client: Queryable) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw unavailable(err);
    }
    let broken: unknown;
    // The server going away while this connection is checked out: the pending query fails with it.
    const onError = (err: Error) => {
      broken = err;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      try {
        const result = await f(client);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        if (isConnectionError(err)) throw err;
        await client.query('ROLLBACK');
        throw err;
      }
    } catch (err) {
      if (isConnectionError(err)) {
        broken = err;
        throw unavailable(err);
      }
      throw err;
    } finally {
      client.off('error', onError);
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}
