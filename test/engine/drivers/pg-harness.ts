/**
 * A PostgreSQL for the index driver's tests: one server per test file, a
 * fresh database per store opened, all dropped with the server.
 */
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { PostgresIndexStore, type PostgresIndexStoreOptions } from '../../../engine/drivers/postgres/index-store.js';
import { engineMissing, startPostgres, type Engine } from '../../cluster/engines.js';

/** Why PostgreSQL tests are skipped here, or undefined. */
export const postgresMissing = engineMissing('postgresql');
if (postgresMissing !== undefined) console.warn(postgresMissing);

/** A PostgreSQL started before the enclosing describe block's tests and stopped after them. */
export function usePgHarness(): PgHarness {
  const harness = new PgHarness();
  beforeAll(() => harness.start(), 60_000);
  afterAll(() => harness.stop());
  return harness;
}

export class PgHarness {
  private databases = 0;
  private started: Engine | undefined;

  get engine(): Engine {
    if (this.started === undefined) throw new Error('PostgreSQL is not started: usePgHarness() starts it in beforeAll');
    return this.started;
  }

  async start(): Promise<void> {
    this.started = await startPostgres();
  }

  /** A new empty database's URL. */
  async database(): Promise<string> {
    const name = `index_${++this.databases}`;
    const admin = new pg.Client({ connectionString: this.engine.url });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    return this.engine.url.replace(/\/postgres$/, `/${name}`);
  }

  async store(options?: PostgresIndexStoreOptions): Promise<{ store: PostgresIndexStore; url: string; close: () => Promise<void> }> {
    const url = await this.database();
    const store = await PostgresIndexStore.open(url, options);
    return { store, url, close: () => store.close() };
  }

  async stop(): Promise<void> {
    await this.started?.stop();
  }
}
