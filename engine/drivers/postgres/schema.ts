/**
 * The PostgreSQL index's tables, created on first connect under an advisory
 * lock (nodes may start together) and stamped with SCHEMA_VERSION.
 *
 * Custom attributes live in one JSONB column (`attrs`) of the resources and
 * history tables, with one partial expression index per attribute of each
 * type (`WHERE type = '<type>'`), typed by the attribute's kind
 * (search-sql.ts `attributeSql`). Chosen over Gnocchi's table per type
 * because a generic search or `get` of a resource of any type answers its
 * attributes from one row (no join per type), adding or removing an
 * attribute is an index build instead of a table rewrite, and a search of a
 * type still reads only that type's index entries. Text columns use the "C"
 * collation: the order of JavaScript's string comparison (code points),
 * whatever the database's locale.
 */
import { createHash } from 'node:crypto';
import type { ArchivePolicy } from '../../archive-policy.js';
import type { ArchivePolicyRule } from '../../index.js';
import type { AttributeDef } from '../../resource-type.js';
import { attributeSql, quoteLiteral } from './search-sql.js';
import type { Queryable } from './connection.js';

export const SCHEMA_VERSION = 2;
/** pg_advisory_xact_lock key of schema changes. */
const SCHEMA_LOCK = 0x676e6f63;

const REVISION_COLUMNS = `
  id text COLLATE "C" NOT NULL,
  type text COLLATE "C" NOT NULL,
  original_resource_id text COLLATE "C" NOT NULL,
  creator text COLLATE "C" NOT NULL,
  user_id text COLLATE "C",
  project_id text COLLATE "C",
  started_at bigint NOT NULL,
  ended_at bigint,
  revision_start bigint NOT NULL,
  attrs jsonb NOT NULL`;

/** Generic fields searched often: indexed on both tables. */
const INDEXED_FIELDS = ['started_at', 'ended_at', 'user_id', 'project_id', 'original_resource_id', 'creator'];

/**
 * Metrics deleted whose series may still be stored: a row goes in with the
 * delete, and out once the series store dropped them (which can fail while
 * it is down: the index's delete has committed by then).
 */
const METRICS_TO_DROP = [`CREATE TABLE metrics_to_drop (id text COLLATE "C" PRIMARY KEY, deleted_at bigint NOT NULL)`];

/** The statements that bring a schema of version N - 1 to version N. */
const MIGRATIONS: Record<number, readonly string[]> = { 2: METRICS_TO_DROP };

const SCHEMA = [
  `CREATE TABLE archive_policies (name text COLLATE "C" PRIMARY KEY, policy jsonb NOT NULL)`,
  `CREATE TABLE archive_policy_rules (
     name text COLLATE "C" PRIMARY KEY,
     metric_pattern text COLLATE "C" NOT NULL,
     archive_policy_name text COLLATE "C" NOT NULL)`,
  `CREATE INDEX archive_policy_rules_policy ON archive_policy_rules (archive_policy_name)`,
  `CREATE TABLE metrics (
     id text COLLATE "C" PRIMARY KEY,
     name text COLLATE "C",
     unit text COLLATE "C",
     archive_policy_name text COLLATE "C" NOT NULL,
     creator text COLLATE "C" NOT NULL,
     resource_id text COLLATE "C")`,
  // A resource's named metrics (in LMDB, in the resource's record: engine/resource-records.ts).
  `CREATE UNIQUE INDEX metrics_resource_name ON metrics (resource_id, name) WHERE resource_id IS NOT NULL AND name IS NOT NULL`,
  `CREATE INDEX metrics_policy ON metrics (archive_policy_name)`,
  `CREATE TABLE resource_types (
     name text COLLATE "C" PRIMARY KEY,
     tid serial UNIQUE,
     state text NOT NULL,
     attributes jsonb NOT NULL)`,
  `CREATE TABLE resources (${REVISION_COLUMNS}, PRIMARY KEY (id))`,
  `CREATE INDEX resources_type_revision_start ON resources (type, revision_start)`,
  `CREATE INDEX resources_revision_start ON resources (revision_start)`,
  ...INDEXED_FIELDS.map((f) => `CREATE INDEX resources_${f} ON resources (${f})`),
  // One counter for every resource's revisions, as Gnocchi's history table autoincrements.
  `CREATE SEQUENCE resource_revision`,
  `CREATE TABLE resource_history (revision bigint PRIMARY KEY, ${REVISION_COLUMNS}, revision_end bigint NOT NULL)`,
  `CREATE INDEX resource_history_id ON resource_history (id, revision)`,
  `CREATE INDEX resource_history_type_revision_start ON resource_history (type, revision_start)`,
  `CREATE INDEX resource_history_revision_end ON resource_history (revision_end)`,
  ...INDEXED_FIELDS.map((f) => `CREATE INDEX resource_history_${f} ON resource_history (${f})`),
  ...METRICS_TO_DROP,
];

/** Policies and rules a new index starts with. */
export interface Seed {
  policies: readonly ArchivePolicy[];
  rules: readonly ArchivePolicyRule[];
}

/** Inserts the policies and rules whose names are free. */
export async function insertPolicies(client: Queryable, { policies, rules }: Seed): Promise<void> {
  for (const p of policies) {
    await client.query('INSERT INTO archive_policies (name, policy) VALUES ($1, $2) ON CONFLICT DO NOTHING', [p.name, JSON.stringify(p)]);
  }
  for (const r of rules) {
    await client.query(
      'INSERT INTO archive_policy_rules (name, metric_pattern, archive_policy_name) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
      [r.name, r.metricPattern, r.archivePolicyName],
    );
  }
}

/**
 * Creates the tables if the database has none, with `seed` in them (so a
 * seed is there once, never again after its policies were deleted);
 * migrates an older schema; refuses a newer one.
 */
export async function ensureSchema(client: Queryable, seed?: Seed): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
  await client.query('CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)');
  const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_version');
  if (rows.length > 0) {
    let { version } = rows[0]!;
    if (version > SCHEMA_VERSION) {
      throw new Error(`PostgreSQL index schema is version ${version}; this release reads version ${SCHEMA_VERSION} and older`);
    }
    if (version === SCHEMA_VERSION) return;
    for (; version < SCHEMA_VERSION; version++) for (const statement of MIGRATIONS[version + 1]!) await client.query(statement);
    await client.query('UPDATE schema_version SET version = $1', [SCHEMA_VERSION]);
    return;
  }
  for (const statement of SCHEMA) await client.query(statement);
  if (seed !== undefined) await insertPolicies(client, seed);
  await client.query('INSERT INTO schema_version (version) VALUES ($1)', [SCHEMA_VERSION]);
}

/** Index and statistics names of an attribute of the type numbered `tid`, on resources and on history. */
function attributeObjectNames(tid: number, attribute: string): { indexes: [string, string]; statistics: [string, string] } {
  const h = createHash('sha1').update(attribute).digest('hex').slice(0, 16);
  return { indexes: [`rx_${tid}_${h}`, `rxh_${tid}_${h}`], statistics: [`sx_${tid}_${h}`, `sxh_${tid}_${h}`] };
}

/**
 * An attribute's partial expression index on each table, and statistics on
 * its expression: the planner ignores a partial index's own statistics, and
 * without any it guesses 0.5% of rows match an equality, so that a search of
 * a common value sorted one way picked a bitmap scan of every match and a
 * sort (350 ms for 40,000 of 100,000) over the sort index's scan stopping at
 * the page's end (6 ms).
 */
export async function createAttributeIndexes(client: Queryable, type: string, tid: number, def: AttributeDef): Promise<void> {
  const { indexes, statistics } = attributeObjectNames(tid, def.name);
  const expr = attributeSql(def);
  const where = `WHERE type = ${quoteLiteral(type)}`;
  for (const [i, table] of (['resources', 'resource_history'] as const).entries()) {
    await client.query(`CREATE INDEX ${indexes[i]} ON ${table} ((${expr})) ${where}`);
    await client.query(`CREATE STATISTICS ${statistics[i]} ON (${expr}) FROM ${table}`);
  }
}

export async function dropAttributeIndexes(client: Queryable, tid: number, attribute: string): Promise<void> {
  const { indexes, statistics } = attributeObjectNames(tid, attribute);
  for (const name of indexes) await client.query(`DROP INDEX IF EXISTS ${name}`);
  for (const name of statistics) await client.query(`DROP STATISTICS IF EXISTS ${name}`);
}
