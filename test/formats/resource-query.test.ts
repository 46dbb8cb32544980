import { describe, expect, it } from 'vitest';
import { FormatError } from '../../formats/errors.js';
import { QueryInputError, validateResourceQuery, type QueryNode } from '../../formats/resource-query.js';
import { parseResourceQueryString } from '../../formats/resource-query-string.js';

const options = { resourceId: (v: string) => (v.includes('/') ? fail() : `uuid(${v})`) };
function fail(): never {
  throw new FormatError("'/' is not supported in resource id");
}
const validate = (json: unknown) => validateResourceQuery(json, options);
const cmp = (op: string, field: string, value: unknown): QueryNode => ({ kind: 'compare', op, field, value } as QueryNode);

describe('validateResourceQuery: JSON form', () => {
  it.each([
    ['=', 'eq'], ['==', 'eq'], ['eq', 'eq'],
    ['<', 'lt'], ['lt', 'lt'], ['>', 'gt'], ['gt', 'gt'],
    ['<=', 'le'], ['≤', 'le'], ['le', 'le'],
    ['>=', 'ge'], ['≥', 'ge'], ['ge', 'ge'],
    ['!=', 'ne'], ['≠', 'ne'], ['ne', 'ne'],
    ['like', 'like'],
  ])('operator %s is %s', (alias, op) => {
    expect(validate({ [alias]: { user_id: 'x' } })).toEqual(cmp(op, 'user_id', 'x'));
  });

  it.each([
    ['and', 'and'], ['∧', 'and'], ['or', 'or'], ['∨', 'or'],
  ])('logic %s is %s', (alias, kind) => {
    expect(validate({ [alias]: [{ '=': { a: 1 } }, { '=': { b: null } }] })).toEqual({
      kind,
      children: [cmp('eq', 'a', 1), cmp('eq', 'b', null)],
    });
  });

  it('reads not, in, and maps id values through ResourceUUID', () => {
    expect(validate({ not: { in: { id: ['x', 'y'] } } })).toEqual({ kind: 'not', child: cmp('in', 'id', ['uuid(x)', 'uuid(y)']) });
    expect(validate({ '=': { id: 'x' } })).toEqual(cmp('eq', 'id', 'uuid(x)'));
  });

  it('treats the top-level empty object as no filter, a nested one as empty', () => {
    expect(validate({})).toBeUndefined();
    expect(validate({ and: [{}] })).toEqual({ kind: 'and', children: [{ kind: 'empty' }] });
  });

  it.each<[string, unknown, string, (string | number)[]]>([
    ['not an object', [1], 'expected a dictionary', []],
    ['two operators', { '=': { a: 1 }, '<': { a: 1 } }, 'length of value must be at most 1', []],
    ['unknown operator', { foo: { a: 1 } }, "extra keys not allowed @ data['foo']", ['foo']],
    ['and with a dict', { and: { project_id: 'x' } }, "expected a list for dictionary value @ data['and']", ['and']],
    ['empty and', { and: [] }, "length of value must be at least 1 for dictionary value @ data['and']", ['and']],
    ['like on id', { like: { id: 'fa%' } }, "extra keys not allowed @ data['like']['id']", ['like', 'id']],
    ['list value', { ne: { project_id: ['x'] } }, "expected str for dictionary value @ data['ne']['project_id']", ['ne', 'project_id']],
    ['not with a list', { not: [{ a: 1 }] }, "expected a dictionary for dictionary value @ data['not']", ['not']],
    ['empty in', { in: { id: [] } }, "length of value must be at least 1 for dictionary value @ data['in']['id']", ['in', 'id']],
    ['in without attribute', { in: {} }, "length of value must be at least 1 for dictionary value @ data['in']", ['in']],
    ['bad id', { '=': { id: 'a/b' } }, "'/' is not supported in resource id for dictionary value @ data['=']['id']", ['=', 'id']],
    ['nested error', { or: [{ '=': { a: [] } }] }, "expected str for dictionary value @ data['or'][0]['=']['a']", ['or', 0, '=', 'a']],
  ])('refuses %s', (_name, json, reason, path) => {
    let err: unknown;
    try {
      validate(json);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(QueryInputError);
    expect((err as QueryInputError).reason).toBe(reason);
    expect((err as QueryInputError).path).toEqual(path);
  });
});

describe('parseResourceQueryString: STRING form', () => {
  it.each<[string, unknown]>([
    ['project_id = foobar', { '=': { project_id: 'foobar' } }],
    ['project_id eq foobar', { eq: { project_id: 'foobar' } }],
    ['a != null', { '!=': { a: null } }],
    ['a = None', { '=': { a: null } }],
    ['a = true', { '=': { a: true } }],
    ['a = False', { '=': { a: false } }],
    ['a >= 3', { '>=': { a: 3 } }],
    ['a < -2.5e1', { '<': { a: -25 } }],
    ['a ≤ 3', { '≤': { a: 3 } }],
    ['a ≠ 3', { '≠': { a: 3 } }],
    ['a like "fo%"', { like: { a: 'fo%' } }],
    ["a = 'two words'", { '=': { a: 'two words' } }],
    ['id = faef212f-0bf4-4030-a461-2186fef79be0', { '=': { id: 'faef212f-0bf4-4030-a461-2186fef79be0' } }],
    ['id in [a, b, 1]', { in: { id: ['a', 'b', 1] } }],
    ['id in []', { in: { id: [] } }],
    ['not a = 1', { not: { '=': { a: 1 } } }],
    ['a = 1 and b = 2 and c = 3', { and: [{ '=': { a: 1 } }, { '=': { b: 2 } }, { '=': { c: 3 } }] }],
    ['a = 1 ∧ b = 2', { and: [{ '=': { a: 1 } }, { '=': { b: 2 } }] }],
    ['a = 1 ∨ b = 2', { or: [{ '=': { a: 1 } }, { '=': { b: 2 } }] }],
  ])('parses %s', (text, json) => {
    expect(parseResourceQueryString(text)).toEqual(json);
  });

  it('binds not tighter than and, and tighter than or', () => {
    expect(parseResourceQueryString('not a = 1 and b = 2 or c = 3')).toEqual({
      or: [{ and: [{ not: { '=': { a: 1 } } }, { '=': { b: 2 } }] }, { '=': { c: 3 } }],
    });
  });

  it('groups with parentheses', () => {
    expect(parseResourceQueryString('a = 1 and (b = 2 or c = 3)')).toEqual({
      and: [{ '=': { a: 1 } }, { or: [{ '=': { b: 2 } }, { '=': { c: 3 } }] }],
    });
  });

  it.each(['id == foobar', 'a =', 'a = 1 and', '(a = 1', 'a = 2014-01-01', ''])('refuses %j', (text) => {
    expect(() => parseResourceQueryString(text)).toThrow(/^Invalid filter: Expected/);
  });

  it('goes through the JSON validator afterwards', () => {
    expect(() => validate(parseResourceQueryString('id in []'))).toThrow(/length of value must be at least 1/);
  });
});
