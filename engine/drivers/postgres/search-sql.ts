/**
 * Resource searches compiled to SQL with parameters: the filter (the AST of
 * formats/resource-query.ts), the order of `sorts` and the position after a
 * marker, with the semantics of engine/resource-search.ts and
 * compareRevisions (engine/resources.ts), which the LMDB index evaluates in
 * JavaScript: SQL's three-valued logic, `ne` as `IS NULL OR <>`, `like`
 * against the value's JSON text, NULLs placed by each sort's `nulls`.
 *
 * A listing is one SELECT over `resources` (current revisions, numbered
 * -1), and for history a UNION ALL with `resource_history`, each branch
 * filtered on its own so that each uses its indexes, ordered by sort keys
 * selected as columns `sk0..`. Pure: no connection.
 */
import { parseDuration } from '../../../formats/duration.js';
import type { CompareNode, QueryNode, QueryScalar } from '../../../formats/resource-query.js';
import { compileQuery, convertQueryValue, fieldKind, fieldOf, likePattern, type Kind, type Revision } from '../../resource-search.js';
import type { SortSpec } from '../../resources.js';
import type { AttributeDef, ResourceTypeRecord } from '../../resource-type.js';

export type Branch = 'current' | 'history';
type SqlType = 'text' | 'bigint' | 'float8' | 'boolean';

/** A SQL string literal (standard_conforming_strings, the default since PostgreSQL 9.1). */
export function quoteLiteral(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/**
 * The typed value of a custom attribute in `attrs`: the expression its
 * index is built on and searches compare. Numbers and datetimes (stored as
 * microseconds) read as float8, exact below 2^53. A value of another JSON
 * type (the same name in another type) reads as NULL rather than failing a
 * cast, whatever order the planner evaluates conditions in.
 */
export function attributeSql(def: Pick<AttributeDef, 'name' | 'type'>): string {
  const key = quoteLiteral(def.name);
  switch (def.type) {
    case 'string':
    case 'uuid':
      return `(attrs->>${key}) COLLATE "C"`;
    case 'number':
    case 'datetime':
      return `CASE WHEN jsonb_typeof(attrs->${key}) = 'number' THEN (attrs->>${key})::float8 END`;
    case 'bool':
      return `CASE WHEN jsonb_typeof(attrs->${key}) = 'boolean' THEN (attrs->>${key})::boolean END`;
  }
}

/** Parameters of one statement, numbered as added. */
export class Params {
  readonly values: unknown[] = [];

  add(value: unknown, type: SqlType): string {
    this.values.push(value);
    return `$${this.values.length}::${type}`;
  }

  addArray(values: unknown[], type: SqlType): string {
    this.values.push(values);
    return `$${this.values.length}::${type}[]`;
  }
}

interface Field {
  sql: string;
  kind: Kind;
  type: SqlType;
}

const GENERIC_COLUMNS: Record<string, SqlType> = {
  id: 'text',
  original_resource_id: 'text',
  creator: 'text',
  user_id: 'text',
  project_id: 'text',
  type: 'text',
  started_at: 'bigint',
  ended_at: 'bigint',
  revision_start: 'bigint',
};

/** A searchable field of `type` in a branch, or undefined. */
export function fieldSql(type: ResourceTypeRecord, field: string, branch: Branch): Field | undefined {
  const kind = fieldKind(type, field);
  if (kind === undefined) return undefined;
  const column = GENERIC_COLUMNS[field];
  if (column !== undefined) return { sql: field, kind, type: column };
  if (field === 'revision') return { sql: branch === 'current' ? '(-1)::bigint' : 'revision', kind, type: 'bigint' };
  if (field === 'revision_end') return { sql: branch === 'current' ? 'NULL::bigint' : 'revision_end', kind, type: 'bigint' };
  const def = type.attributes.find((a) => a.name === field)!;
  return { sql: `(${attributeSql(def)})`, kind, type: def.type === 'bool' ? 'boolean' : def.type === 'number' || def.type === 'datetime' ? 'float8' : 'text' };
}

/** A LIKE pattern as resource-search.ts reads it (backslash escapes, a trailing one literal), escaped for PostgreSQL. */
export function pgLikePattern(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    let c = pattern[i]!;
    if (c === '%' || c === '_') {
      out += c;
      continue;
    }
    if (c === '\\' && i + 1 < pattern.length) c = pattern[++i]!;
    out += c === '%' || c === '_' || c === '\\' ? `\\${c}` : c;
  }
  return out;
}

/** formatTimestamp of microseconds, in SQL. */
function isoSql(micros: string): string {
  const ts = `(TIMESTAMP '1970-01-01' + (${micros}) * INTERVAL '1 microsecond')`;
  const fraction = `((${micros}) % 1000000)`;
  return `(to_char(${ts}, 'YYYY-MM-DD"T"HH24:MI:SS') || CASE WHEN ${fraction} = 0 THEN '' ELSE '.' || lpad(${fraction}::text, 6, '0') END || '+00:00')`;
}

/** likeText of resource-search.ts, in SQL. */
function likeTextSql(f: Field): string {
  if (f.kind === 'datetime') return isoSql(`(${f.sql})::bigint`);
  return f.type === 'text' ? f.sql : `(${f.sql})::text`;
}

const OPERATORS = { eq: '=', ne: '<>', lt: '<', le: '<=', gt: '>', ge: '>=' } as const;

const TRUTH = (v: boolean | null) => (v === null ? 'NULL::boolean' : v ? 'TRUE' : 'FALSE');

/**
 * A boolean attribute has two values: the comparison is evaluated by
 * resource-search.ts for each (whatever the query value's JSON type), and
 * the SQL picks the answer.
 */
function boolCompare(n: CompareNode, type: ResourceTypeRecord, f: Field): string {
  const test = compileQuery(n, type);
  const at = (v: boolean | null): boolean | null => {
    const r: Revision = {
      id: '', type: type.name, originalResourceId: '', creator: '', userId: null, projectId: null,
      startedAt: 0, endedAt: null, revisionStart: 0, revision: -1, revisionEnd: null, attrs: { [n.field]: v },
    };
    return test(r);
  };
  return `(CASE ${f.sql} WHEN TRUE THEN ${TRUTH(at(true))} WHEN FALSE THEN ${TRUTH(at(false))} ELSE ${TRUTH(at(null))} END)`;
}

function compareSql(n: CompareNode, type: ResourceTypeRecord, branch: Branch, params: Params): string {
  const { field, op } = n;
  if (field === 'created_by_user_id' || field === 'created_by_project_id') {
    const v = convertQueryValue('string', n.value as QueryScalar, field) as string;
    const pattern = params.add(pgLikePattern(field === 'created_by_user_id' ? `${v}:%` : `%:${v}`), 'text');
    return op === 'ne' ? `(NOT (creator LIKE ${pattern}))` : `(creator LIKE ${pattern})`;
  }
  let f: Field;
  let conv: (v: QueryScalar) => string | number | boolean | null;
  if (field === 'lifespan') {
    f = { sql: '(ended_at - started_at)', kind: 'integer', type: 'float8' };
    conv = (v) => (v === null ? null : parseDuration(typeof v === 'boolean' ? Number(v) : v, { allowNonPositive: true }));
  } else {
    f = fieldSql(type, field, branch)!;
    conv = (v) => convertQueryValue(f.kind, v, field);
  }
  if (f.type === 'boolean') return boolCompare(n, type, f);
  if (op === 'in') {
    const values = (n.value as readonly QueryScalar[]).map(conv).filter((v) => v !== null);
    return `(${f.sql} = ANY(${params.addArray(values, f.type)}))`;
  }
  if (op === 'like') {
    if (n.value === null) return 'NULL::boolean';
    const pattern = pgLikePattern(likePattern(f.kind, n.value as string | number | boolean));
    return `(${likeTextSql(f)} LIKE ${params.add(pattern, 'text')})`;
  }
  const value = conv(n.value as QueryScalar);
  if (value === null) {
    if (op === 'eq') return `(${f.sql} IS NULL)`;
    if (op === 'ne') return `(${f.sql} IS NOT NULL)`;
    return 'NULL::boolean';
  }
  const p = params.add(value, f.type);
  if (op === 'ne') return `(${f.sql} IS NULL OR ${f.sql} <> ${p})`;
  return `(${f.sql} ${OPERATORS[op]} ${p})`;
}

/**
 * The filter as a SQL condition for one branch. Validated first by
 * compileQuery, so that a query refused is refused with the same error as
 * by the LMDB index.
 */
export function filterSql(node: QueryNode, type: ResourceTypeRecord, branch: Branch, params: Params): string {
  compileQuery(node, type);
  return condition(node, type, branch, params);
}

function condition(node: QueryNode, type: ResourceTypeRecord, branch: Branch, params: Params): string {
  switch (node.kind) {
    case 'empty':
      throw new Error('unreachable: compileQuery refuses empty nodes');
    case 'compare':
      return compareSql(node, type, branch, params);
    case 'not':
      return `(NOT ${condition(node.child, type, branch, params)})`;
    case 'and':
    case 'or':
      return `(${node.children.map((c) => condition(c, type, branch, params)).join(node.kind === 'and' ? ' AND ' : ' OR ')})`;
  }
}

/** A sort key of a keyset position: its expression, the marker's value there, its order. */
export interface KeysetKey {
  sql: string;
  type: SqlType;
  value: string | number | boolean | null;
  direction: 'asc' | 'desc';
  nulls: 'first' | 'last';
}

/**
 * Rows strictly after a position in the order of `keys` (which end with
 * unique keys): the first key that differs is beyond the position's, NULLs
 * placed by each key's `nulls`, as compareRevisions and metricComparator
 * order.
 */
export function keysetAfterSql(keys: readonly KeysetKey[], params: Params): string {
  const disjuncts: string[] = [];
  const equal: string[] = [];
  for (const k of keys) {
    if (k.value === null) {
      if (k.nulls === 'first') disjuncts.push([...equal, `${k.sql} IS NOT NULL`].join(' AND '));
      equal.push(`${k.sql} IS NULL`);
      continue;
    }
    const p = params.add(k.value, k.type);
    const beyond = `${k.sql} ${k.direction === 'asc' ? '>' : '<'} ${p}`;
    disjuncts.push([...equal, k.nulls === 'last' ? `(${beyond} OR ${k.sql} IS NULL)` : beyond].join(' AND '));
    equal.push(`${k.sql} = ${p}`);
  }
  return disjuncts.length === 0 ? 'FALSE' : `(${disjuncts.map((d) => `(${d})`).join(' OR ')})`;
}

/** Rows strictly after the marker revision in the order of `sorts`. */
export function afterSql(sorts: SortSpec[], type: ResourceTypeRecord, branch: Branch, marker: Revision, params: Params): string {
  return keysetAfterSql(
    sorts.map((s) => {
      const f = fieldSql(type, s.key, branch)!;
      return { sql: f.sql, type: f.type, value: fieldOf(marker, s.key), direction: s.direction, nulls: s.nulls };
    }),
    params,
  );
}

/** The columns a revision row is read from, in a branch. */
const REVISION_SELECT: Record<Branch, string> = {
  current: 'id, type, original_resource_id, creator, user_id, project_id, started_at, ended_at, revision_start, attrs, (-1)::bigint AS revision, NULL::bigint AS revision_end',
  history: 'id, type, original_resource_id, creator, user_id, project_id, started_at, ended_at, revision_start, attrs, revision, revision_end',
};

export interface ListQuery {
  filter?: QueryNode | undefined;
  history: boolean;
  sorts: SortSpec[];
  limit: number;
  /** The revision the page starts after. */
  after?: Revision | undefined;
}

/** One page of a listing: the statement and its parameters. */
export function listSql(type: ResourceTypeRecord, q: ListQuery): { text: string; values: unknown[] } {
  const params = new Params();
  const branch = (b: Branch) => {
    const table = b === 'current' ? 'resources' : 'resource_history';
    const where: string[] = [];
    if (type.name !== 'generic') where.push(`type = ${quoteLiteral(type.name)}`);
    if (q.filter !== undefined) where.push(filterSql(q.filter, type, b, params));
    if (q.after !== undefined) where.push(afterSql(q.sorts, type, b, q.after, params));
    const keys = q.sorts.map((s, i) => `${fieldSql(type, s.key, b)!.sql} AS sk${i}`);
    return `SELECT ${[REVISION_SELECT[b], ...keys].join(', ')} FROM ${table}${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}`;
  };
  const order = q.sorts.map((s, i) => `sk${i} ${s.direction.toUpperCase()} NULLS ${s.nulls.toUpperCase()}`).join(', ');
  const body = q.history ? `${branch('current')} UNION ALL ${branch('history')}` : branch('current');
  return { text: `${body} ORDER BY ${order} LIMIT ${Math.max(0, Math.floor(q.limit))}`, values: params.values };
}

/** The ids of the current resources of `type` matching `filter` (deleteMatching). */
export function matchingIdsSql(type: ResourceTypeRecord, filter: QueryNode): { text: string; values: unknown[] } {
  const params = new Params();
  const where = [filterSql(filter, type, 'current', params)];
  if (type.name !== 'generic') where.unshift(`type = ${quoteLiteral(type.name)}`);
  return { text: `SELECT id FROM resources WHERE ${where.join(' AND ')}`, values: params.values };
}
