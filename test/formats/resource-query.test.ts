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

  // pyparsing 3.1's messages, as Gnocchi 4.4 words them (observed on the
  // reference): an expression that does not parse is named by its outermost
  // level ('∨' term) at its furthest failure; text after a whole expression
  // is refused where the expression ended; `found` shows up to 16 letters or
  // digits (Latin, Greek, Cyrillic) or one character, as Python's repr; tabs
  // count as expanded.
  it.each<[string, string]>([
    ['server_group=', "Invalid filter: Expected '∨' term, found end of text  (at char 13), (line:1, col:14)"],
    ['server_group', "Invalid filter: Expected '∨' term, found end of text  (at char 12), (line:1, col:13)"],
    ['{"=":{"a":1}}', "Invalid filter: Expected '∨' term, found '{'  (at char 0), (line:1, col:1)"],
    ["a='x' and", "Invalid filter: Expected end of text, found 'and'  (at char 6), (line:1, col:7)"],
    ["a='x' foo", "Invalid filter: Expected end of text, found 'foo'  (at char 6), (line:1, col:7)"],
    ["(a='x'", "Invalid filter: Expected '∨' term, found end of text  (at char 6), (line:1, col:7)"],
    ["a=='x'", "Invalid filter: Expected '∨' term, found '='  (at char 2), (line:1, col:3)"],
    ['not', "Invalid filter: Expected '∨' term, found end of text  (at char 3), (line:1, col:4)"],
    ['a in [1, 2', "Invalid filter: Expected '∨' term, found end of text  (at char 10), (line:1, col:11)"],
    ["a='x')", "Invalid filter: Expected end of text, found ')'  (at char 5), (line:1, col:6)"],
    ["'x'", "Invalid filter: Expected '∨' term, found end of text  (at char 3), (line:1, col:4)"],
    ["a='x", 'Invalid filter: Expected \'∨\' term, found "\'"  (at char 2), (line:1, col:3)'],
    ["a = 'x' ∨", "Invalid filter: Expected end of text, found '∨'  (at char 8), (line:1, col:9)"],
    ['a <> b', "Invalid filter: Expected '∨' term, found '>'  (at char 3), (line:1, col:4)"],
    ["(a='x' and b", "Invalid filter: Expected '∨' term, found 'and'  (at char 7), (line:1, col:8)"],
    ["not (a='x'", "Invalid filter: Expected '∨' term, found end of text  (at char 10), (line:1, col:11)"],
    ['a in [1,', "Invalid filter: Expected '∨' term, found ','  (at char 7), (line:1, col:8)"],
    ["a='x' and b='y' foo", "Invalid filter: Expected end of text, found 'foo'  (at char 16), (line:1, col:17)"],
    ['a = "x\'', "Invalid filter: Expected '∨' term, found '\"'  (at char 4), (line:1, col:5)"],
    ["a='x' ∧ ∨", "Invalid filter: Expected end of text, found '∧'  (at char 6), (line:1, col:7)"],
    ['not not a', "Invalid filter: Expected '∨' term, found end of text  (at char 9), (line:1, col:10)"],
    ["a='x' éé", "Invalid filter: Expected end of text, found 'éé'  (at char 6), (line:1, col:7)"],
    ["a='x' abcdefghijklmnopqrstuvwxyz", "Invalid filter: Expected end of text, found 'abcdefghijklmnop'  (at char 6), (line:1, col:7)"],
    ["a='x' a_b-c", "Invalid filter: Expected end of text, found 'a'  (at char 6), (line:1, col:7)"],
    ["a='x' \\", "Invalid filter: Expected end of text, found '\\'  (at char 6), (line:1, col:7)"],
    ["a='x' ·x", "Invalid filter: Expected end of text, found '·'  (at char 6), (line:1, col:7)"],
    ["a='x'\tb", "Invalid filter: Expected end of text, found 'b'  (at char 8), (line:1, col:9)"],
    ["a='x'\nb", "Invalid filter: Expected end of text, found 'b'  (at char 6), (line:2, col:1)"],
    ["a='x' жж", "Invalid filter: Expected end of text, found 'жж'  (at char 6), (line:1, col:7)"],
    ["a='x' 中文", "Invalid filter: Expected end of text, found '中'  (at char 6), (line:1, col:7)"],
    ['\ta', "Invalid filter: Expected '∨' term, found end of text  (at char 9), (line:1, col:10)"],
    ['  (', "Invalid filter: Expected '∨' term, found end of text  (at char 3), (line:1, col:4)"],
  ])('words the failure of %j as Gnocchi does', (text, message) => {
    expect(() => parseResourceQueryString(text)).toThrow(new FormatError(message));
  });

  it('goes through the JSON validator afterwards', () => {
    expect(() => validate(parseResourceQueryString('id in []'))).toThrow(/length of value must be at least 1/);
  });
});
