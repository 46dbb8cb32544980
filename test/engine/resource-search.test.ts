import { describe, expect, it } from 'vitest';
import { InvalidInput } from '../../engine/errors.js';
import { pythonUuid, resourceUuid } from '../../engine/resource-id.js';
import { compileQuery, type Revision } from '../../engine/resource-search.js';
import { attributeValue, parseAddedAttribute, parseResourceTypeBody, type ResourceTypeRecord } from '../../engine/resource-type.js';
import type { QueryNode } from '../../formats/resource-query.js';

const S = 1_000_000;

describe('resource ids', () => {
  it.each([
    // Values checked against Gnocchi (gabbits and python3 uuid.uuid5).
    ['foobar', 'foobar', '2fbfbb20-8d56-5e1e-afb9-b3007da11fdf'],
    ['1.2.3.4', 'foobar', 'a9c729cc-d1b0-5e6b-b5ba-8b5a7f45f1fc'],
    ['75C44741-CC60-4033-804E-2D3098C7D2E9', 'x', '75c44741-cc60-4033-804e-2d3098c7d2e9'],
    ['{75C44741CC604033804E2D3098C7D2E9}', 'x', '75c44741-cc60-4033-804e-2d3098c7d2e9'],
  ])('%s by %s is %s', (value, creator, uuid) => {
    expect(resourceUuid(value, creator)).toBe(uuid);
  });

  it('refuses / and long ids', () => {
    expect(() => resourceUuid('a/b', 'x')).toThrow("'/' is not supported in resource id");
    expect(() => resourceUuid('x'.repeat(256), 'x')).toThrow('transformable resource id >255 max allowed characters');
    expect(resourceUuid('x'.repeat(255), 'x')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('reads UUIDs as Python does', () => {
    expect(pythonUuid('urn:uuid:75c44741-cc60-4033-804e-2d3098c7d2e9')).toBe('75c44741-cc60-4033-804e-2d3098c7d2e9');
    expect(pythonUuid('cd9eef')).toBeUndefined();
  });
});

describe('attribute schemas', () => {
  const rt = parseResourceTypeBody({
    name: 't',
    attributes: {
      name: { type: 'string', min_length: 2, max_length: 5 },
      n: { type: 'number', required: false, min: -2, max: 3 },
      u: { type: 'uuid' },
      b: { type: 'bool', required: false },
      d: { type: 'datetime', required: false },
    },
  });

  it('fills defaults', () => {
    expect(rt.attributes.map((a) => [a.name, a.required])).toEqual([
      ['name', true], ['n', false], ['u', true], ['b', false], ['d', false],
    ]);
    expect(parseResourceTypeBody({ name: 'x', attributes: { s: { type: 'string' } } }).attributes[0]).toMatchObject({
      minLength: 0,
      maxLength: 255,
    });
  });

  it.each<[string, unknown, string]>([
    ['name', 'toolong', "length of value must be at most 5 for dictionary value @ data['name']"],
    ['name', 'a', "length of value must be at least 2 for dictionary value @ data['name']"],
    ['name', 3, "expected str for dictionary value @ data['name']"],
    ['n', 4, "value must be at most 3 for dictionary value @ data['n']"],
    ['n', 'x', "expected Real for dictionary value @ data['n']"],
    ['u', 'really!', "badly formed hexadecimal UUID string for dictionary value @ data['u']"],
    ['b', 'yes', "expected bool for dictionary value @ data['b']"],
    ['d', 'nope', "Unable to convert timestamps for dictionary value @ data['d']"],
  ])('refuses %s = %j', (name, value, reason) => {
    const def = rt.attributes.find((a) => a.name === name)!;
    try {
      attributeValue(def, value, [name]);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidInput);
      expect((err as InvalidInput).description).toMatchObject({ reason, detail: [name] });
    }
  });

  it('converts values to their stored form', () => {
    const d = rt.attributes.find((a) => a.name === 'd')!;
    expect(attributeValue(d, '2017-05-02T11:11:11Z', ['d'])).toBe(Date.UTC(2017, 4, 2, 11, 11, 11) * 1000);
    const u = rt.attributes.find((a) => a.name === 'u')!;
    expect(attributeValue(u, 'E495EBADBE6446C081D6B079BEB48DF9', ['u'])).toBe('e495ebad-be64-46c0-81d6-b079beb48df9');
  });

  it.each<[string, unknown, RegExp]>([
    ['reserved name', { name: 'x', attributes: { project_id: { type: 'string' } } }, /Resource attribute name project_id is invalid/],
    ['min above max', { name: 'x', attributes: { s: { type: 'string', min_length: 5, max_length: 2 } } }, /min \(or min_length\) 5 must be less/],
    ['unknown key', { name: 'x', attributes: { s: { type: 'string', noexist: 1 } } }, /not a valid value/],
    ['unknown type', { name: 'x', attributes: { s: { type: 'nope' } } }, /not a valid value/],
    ['no name', { attributes: {} }, /required key not provided/],
  ])('refuses a type with %s', (_n, body, message) => {
    expect(() => parseResourceTypeBody(body)).toThrow(message);
  });

  it('checks options.fill of added attributes', () => {
    expect(() => parseAddedAttribute('m', { type: 'bool', required: true, options: {} })).toThrow(
      "Invalid input: Option 'fill' of resource attribute m is invalid: must not be empty if required=True",
    );
    expect(() => parseAddedAttribute('i', { type: 'number', options: { fill: 'a-string' } })).toThrow(
      "Invalid input: Option 'fill' of resource attribute i is invalid: expected Real",
    );
    expect(parseAddedAttribute('i', { type: 'number', options: { fill: 15 } }).fill).toBe(15);
  });
});

describe('compileQuery', () => {
  const type: ResourceTypeRecord = {
    name: 't',
    state: 'active',
    attributes: [
      { name: 'host', type: 'string', required: false, minLength: 0, maxLength: 255 },
      { name: 'size', type: 'number', required: false, min: null, max: null },
    ],
  };
  const rev = (over: Partial<Revision>): Revision => ({
    id: '00000000-0000-0000-0000-000000000001',
    type: 't',
    originalResourceId: 'r1',
    creator: 'foobar',
    userId: 'u',
    projectId: null,
    startedAt: 100 * S,
    endedAt: null,
    revisionStart: 100 * S,
    attrs: { host: 'web1', size: 4 },
    revision: -1,
    revisionEnd: null,
    ...over,
  });
  const c = (op: string, field: string, value: unknown): QueryNode => ({ kind: 'compare', op, field, value } as QueryNode);
  const run = (q: QueryNode, r: Revision) => compileQuery(q, type)(r);

  it.each<[string, QueryNode, Partial<Revision>, boolean | null]>([
    ['eq string', c('eq', 'host', 'web1'), {}, true],
    ['like', c('like', 'host', 'web%'), {}, true],
    ['like one char', c('like', 'host', 'we_'), {}, false],
    ['typed number from string', c('gt', 'size', '3.5'), {}, true],
    ['datetime from ISO', c('ge', 'started_at', '1970-01-01T00:01:40'), {}, true],
    ['eq null', c('eq', 'project_id', null), {}, true],
    ['ne null', c('ne', 'project_id', null), {}, false],
    ['ne value matches null', c('ne', 'project_id', 'p'), {}, true],
    ['lt against null is unknown', c('lt', 'ended_at', 5), {}, null],
    ['in', c('in', 'host', ['a', 'web1']), {}, true],
    ['lifespan', c('eq', 'lifespan', '1 minute'), { endedAt: 160 * S }, true],
    ['lifespan without end', c('eq', 'lifespan', 60), {}, null],
    ['created_by_user_id', c('eq', 'created_by_user_id', 'foobar'), { creator: 'foobar:proj' }, true],
    ['created_by_project_id', c('eq', 'created_by_project_id', 'proj'), { creator: 'foobar' }, false],
  ])('%s', (_n, q, over, expected) => {
    expect(run(q, rev(over))).toBe(expected);
  });

  it('uses three-valued logic', () => {
    const unknown = c('lt', 'ended_at', 5);
    const yes = c('eq', 'host', 'web1');
    const no = c('eq', 'host', 'x');
    expect(run({ kind: 'not', child: unknown }, rev({}))).toBeNull();
    expect(run({ kind: 'and', children: [unknown, no] }, rev({}))).toBe(false);
    expect(run({ kind: 'and', children: [unknown, yes] }, rev({}))).toBeNull();
    expect(run({ kind: 'or', children: [unknown, yes] }, rev({}))).toBe(true);
    expect(run({ kind: 'or', children: [unknown, no] }, rev({}))).toBeNull();
  });

  it.each<[string, QueryNode, string]>([
    ['unknown attribute', c('eq', 'foo', 1), 'Resource type t has no foo attribute'],
    ['bad datetime', c('eq', 'started_at', 'bar'), "Invalid value: `bar' for field `started_at'"],
    ['bad number', c('eq', 'size', 'big'), "Invalid value: `big' for field `size'"],
    ['empty node', { kind: 'and', children: [{ kind: 'empty' }] }, 'Unable to parse this query'],
  ])('refuses %s', (_n, q, message) => {
    expect(() => compileQuery(q, type)).toThrow(message);
  });
});
