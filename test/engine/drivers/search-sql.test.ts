/**
 * search-sql.ts without a database: the SQL and parameters each query
 * compiles to (the contract suite checks their answers on PostgreSQL).
 */
import { describe, expect, it } from 'vitest';
import { afterSql, attributeSql, filterSql, listSql, Params, pgLikePattern } from '../../../engine/drivers/postgres/search-sql.js';
import type { Revision } from '../../../engine/resources.js';
import type { ResourceTypeRecord } from '../../../engine/resource-type.js';
import type { QueryNode } from '../../../formats/resource-query.js';

const T: ResourceTypeRecord = {
  name: "it's",
  state: 'active',
  attributes: [
    { name: 'flavor', type: 'string', required: true },
    { name: 'vcpus', type: 'number', required: false },
    { name: 'on', type: 'bool', required: false },
  ],
};
const cmp = (op: string, field: string, value: unknown) => ({ kind: 'compare', op, field, value }) as QueryNode;

describe('filterSql', () => {
  const cases: [string, QueryNode, string, unknown[]][] = [
    ['eq string', cmp('eq', 'flavor', 'a'), `(((attrs->>'flavor') COLLATE "C") = $1::text)`, ['a']],
    ['ne keeps NULLs', cmp('ne', 'vcpus', 2), `((CASE WHEN jsonb_typeof(attrs->'vcpus') = 'number' THEN (attrs->>'vcpus')::float8 END) IS NULL OR (CASE WHEN jsonb_typeof(attrs->'vcpus') = 'number' THEN (attrs->>'vcpus')::float8 END) <> $1::float8)`, [2]],
    ['eq null', cmp('eq', 'user_id', null), '(user_id IS NULL)', []],
    ['lt null is unknown', cmp('lt', 'user_id', null), 'NULL::boolean', []],
    ['in drops nulls', cmp('in', 'project_id', ['a', null]), '(project_id = ANY($1::text[]))', [['a']]],
    ['like on a number', cmp('like', 'vcpus', '1%'), `(((CASE WHEN jsonb_typeof(attrs->'vcpus') = 'number' THEN (attrs->>'vcpus')::float8 END))::text LIKE $1::text)`, ['1%']],
    ['bool by its two values', cmp('eq', 'on', 'true'), `(CASE (CASE WHEN jsonb_typeof(attrs->'on') = 'boolean' THEN (attrs->>'on')::boolean END) WHEN TRUE THEN FALSE WHEN FALSE THEN FALSE ELSE NULL::boolean END)`, []],
    ['revision of the current branch', cmp('ge', 'revision', 0), '((-1)::bigint >= $1::bigint)', [0]],
    ['created_by', cmp('ne', 'created_by_user_id', 'a_b'), '(NOT (creator LIKE $1::text))', ['a_b:%']],
    ['not and or', { kind: 'not', child: { kind: 'or', children: [cmp('eq', 'id', 'x'), cmp('gt', 'started_at', 0)] } }, '(NOT ((id = $1::text) OR (started_at > $2::bigint)))', ['x', 0]],
  ];
  it.each(cases)('%s', (_name, node, sql, values) => {
    const params = new Params();
    expect(filterSql(node, T, 'current', params)).toBe(sql);
    expect(params.values).toEqual(values);
  });

  it('refuses what compileQuery refuses, with its error', () => {
    expect(() => filterSql(cmp('eq', 'nope', 1), T, 'current', new Params())).toThrow(`Resource type it's has no nope attribute`);
  });
});

describe('pgLikePattern', () => {
  it.each([
    ['a%b_', 'a%b_'],
    ['a\\%', 'a\\%'],
    ['a\\', 'a\\\\'],
    ['\\x', 'x'],
  ])('%s -> %s', (from, to) => expect(pgLikePattern(from)).toBe(to));
});

describe('afterSql and listSql', () => {
  const marker = { id: 'm', revision: -1, userId: null, attrs: { vcpus: 2 } } as unknown as Revision;
  it('places NULLs as each sort says', () => {
    const params = new Params();
    const sql = afterSql([
      { key: 'user_id', direction: 'asc', nulls: 'first' },
      { key: 'vcpus', direction: 'desc', nulls: 'last' },
      { key: 'id', direction: 'asc', nulls: 'last' },
    ], T, 'current', marker, params);
    const v = `(${attributeSql({ name: 'vcpus', type: 'number' })})`;
    expect(sql).toBe(`((user_id IS NOT NULL) OR (user_id IS NULL AND (${v} < $1::float8 OR ${v} IS NULL)) OR (user_id IS NULL AND ${v} = $1::float8 AND (id > $2::text OR id IS NULL)))`);
    expect(params.values).toEqual([2, 'm']);
  });

  it('reads history from both tables, each filtered, with the type quoted', () => {
    const { text } = listSql(T, { history: true, sorts: [{ key: 'id', direction: 'desc', nulls: 'first' }], limit: 5, filter: cmp('eq', 'flavor', 'a') });
    expect(text).toContain(`FROM resources WHERE type = 'it''s' AND`);
    expect(text).toContain(`UNION ALL SELECT`);
    expect(text).toContain(`FROM resource_history WHERE type = 'it''s' AND`);
    expect(text).toMatch(/ORDER BY sk0 DESC NULLS FIRST LIMIT 5$/);
  });
});
