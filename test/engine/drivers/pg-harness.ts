/**
 * A PostgreSQL for the index driver's tests: one server per test file, a
 * fresh database per store opened, all dropped with the server.
 */
import pg from 'pg';
import { PostgresIndexStore, type PostgresIndexStoreOptions } from '../../../engine/drivers/postgres/index-store.js';
import { engineMissing, startPostgres, type Engine } from '../../cluster/engines.js';

/** Why PostgreSQL tests are skipped here, or undefined. */
export const postgresMissing = engineMissing('postgresql');
if (postgresMissing !== undefined) console.warn(postgresMissing);

export class PgHarness {
  private databases = 0;

  private constructor(readonly engine: Engine) {}

  static async start(): Promise<PgHarness> {
    return new PgHarness(await startPostgres());
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

  stop(): Promise<void> {
    return this.engine.stop();
  }
}
