/**
 * The oslo.policy rule language: parsing of the text and list forms, and the
 * outcome of rules for callers (credentials) and objects (targets).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../../server/policy-default.js';
import { evaluate, parseRule, PolicySyntaxError, type Credentials, type Rule, type Target } from '../../server/policy-rules.js';

const ADMIN: Credentials = { user: 'admin', roles: ['admin'] };
const FOOBAR: Credentials = { user: 'foobar', roles: [] };
const MEMBER: Credentials = { user: 'u1:p1', user_id: 'u1', project_id: 'p1', domain_id: null, roles: ['member'] };
const CLOUD_ADMIN: Credentials = { user: 'u9:p9', user_id: 'u9', project_id: 'p9', domain_id: null, roles: ['Admin'] };
const UNSCOPED: Credentials = { user: 'u2:', user_id: 'u2', project_id: null, domain_id: 'd1', roles: ['reader', 'member'] };

const rules = new Map<string, Rule>(Object.entries(DEFAULT_POLICY).map(([k, v]) => [k, parseRule(v)]));
const check = (rule: unknown, creds: Credentials, target: Target = {}) => evaluate(parseRule(rule), { rules, creds, target });

describe('rule outcomes', () => {
  const cases: [string, unknown, Credentials, Target, boolean][] = [
    ['empty rule allows anyone', '', FOOBAR, {}, true],
    ['@ allows', '@', FOOBAR, {}, true],
    ['! denies even admins', '!', ADMIN, {}, false],
    ['role matches', 'role:admin', ADMIN, {}, true],
    ['role missing', 'role:admin', FOOBAR, {}, false],
    ['roles compare case-insensitively', 'role:admin', CLOUD_ADMIN, {}, true],
    ['role from the target', 'role:%(wanted)s', MEMBER, { wanted: 'member' }, true],
    ['user is the creator', 'user:%(creator)s', FOOBAR, { creator: 'foobar' }, true],
    ['user is not the creator', 'user:%(creator)s', ADMIN, { creator: 'foobar' }, false],
    ['target key missing denies', 'user:%(creator)s', FOOBAR, {}, false],
    ['project of the creator', 'project_id:%(created_by_project_id)s', MEMBER, { created_by_project_id: 'p1' }, true],
    ['other project', 'project_id:%(created_by_project_id)s', MEMBER, { created_by_project_id: 'p2' }, false],
    ['basic callers have no project credential', 'project_id:%(created_by_project_id)s', FOOBAR, { created_by_project_id: '' }, false],
    // oslo compares Python str(): None equals None.
    ['unscoped token matches a null project', 'project_id:%(project_id)s', UNSCOPED, { project_id: null }, true],
    ['dotted target keys', 'project_id:%(resource.project_id)s', MEMBER, { 'resource.project_id': 'p1' }, true],
    ['a list credential matches any element', 'roles:member', UNSCOPED, {}, true],
    ['unknown credential denies', 'tenant:%(project_id)s', MEMBER, { project_id: 'p1' }, false],
    ['literal True against a boolean', 'True:%(enabled)s', FOOBAR, { enabled: true }, true],
    ['literal True against False', 'True:%(enabled)s', FOOBAR, { enabled: false }, false],
    ['quoted literal', "'member':%(role)s", FOOBAR, { role: 'member' }, true],
    ['integer literal', '1:%(n)s', FOOBAR, { n: 1 }, true],
    ['%% is a literal percent', 'user:100%%', { user: '100%', roles: [] }, {}, true],
    ['a check without a colon denies', 'admin', ADMIN, {}, false],
    ['not', 'not role:admin', FOOBAR, {}, true],
    ['not not', 'not not role:admin', FOOBAR, {}, false],
    ['and binds tighter than or (a)', 'role:reader or role:x and role:y', UNSCOPED, {}, true],
    ['and binds tighter than or (b)', 'role:x or role:member and role:y', UNSCOPED, {}, false],
    ['parentheses group', '(role:reader or role:x) and role:y', UNSCOPED, {}, false],
    ['parentheses glued to checks', '(role:reader or role:x) and (role:member)', UNSCOPED, {}, true],
    ['operators are case-insensitive', 'role:x OR NOT role:y', FOOBAR, {}, true],
    ['rule: refers to a named rule', 'rule:admin_or_creator', MEMBER, { creator: 'u3:p1', created_by_project_id: 'p1' }, true],
    ['rule: naming an unknown rule denies', 'rule:no_such_rule or !', ADMIN, {}, false],
    ['not of an unknown rule allows', 'not rule:no_such_rule', FOOBAR, {}, true],
    ['list: empty allows', [], FOOBAR, {}, true],
    ['list: alternatives', [['role:admin'], ['user:%(creator)s']], FOOBAR, { creator: 'foobar' }, true],
    ['list: all checks of an alternative must hold', [['role:member', 'role:x']], MEMBER, {}, false],
    ['list: plain strings are alternatives', ['role:x', 'role:member'], MEMBER, {}, true],
    ['list: only empty alternatives deny', [[]], ADMIN, {}, false],
  ];
  it.each(cases)('%s: %j', (_name, rule, creds, target, expected) => {
    expect(check(rule, creds, target)).toBe(expected);
  });
});

describe("Gnocchi's default policy", () => {
  const RESOURCE_OF_P1 = { creator: 'u3:p3', created_by_project_id: 'p3', project_id: 'p1' };
  const METRIC_OF_P1 = { creator: 'u3:p3', created_by_project_id: 'p3', 'resource.project_id': 'p1' };
  const FOOBARS = { creator: 'foobar', created_by_project_id: '', project_id: null };
  const cases: [string, Credentials, Target, boolean][] = [
    ['get status', ADMIN, {}, true],
    ['get status', FOOBAR, {}, false],
    ['get status', CLOUD_ADMIN, {}, true],
    ['create archive policy', MEMBER, {}, false],
    ['list archive policy', FOOBAR, {}, true],
    ['create resource', FOOBAR, {}, true],
    ['get resource', FOOBAR, FOOBARS, true],
    ['get resource', { user: 'other', roles: [] }, FOOBARS, false],
    ['get resource', MEMBER, RESOURCE_OF_P1, true],
    ['update resource', MEMBER, RESOURCE_OF_P1, false],
    ['delete resource', CLOUD_ADMIN, RESOURCE_OF_P1, true],
    ['get metric', MEMBER, METRIC_OF_P1, true],
    ['get measures', MEMBER, METRIC_OF_P1, true],
    ['post measures', MEMBER, METRIC_OF_P1, false],
    ['delete metric', MEMBER, { creator: 'u7:p1', created_by_project_id: 'p1' }, true],
    ['search metric', UNSCOPED, METRIC_OF_P1, false],
  ];
  it.each(cases)('%s for %j on %j: %s', (name, creds, target, expected) => {
    expect(evaluate(rules.get(name)!, { rules, creds, target })).toBe(expected);
  });
});

describe('syntax errors', () => {
  it.each([
    ['(role:a', 'missing ")"'],
    ['role:a or', 'unexpected end'],
    ['and role:a', 'unexpected "and"'],
    ['role:a role:b', 'unexpected "check"'],
    ['role:a)', 'unexpected ")"'],
    ['"quoted"', 'quoted string'],
    ['http:%(target)s', 'not supported'],
  ])('%s', (text, message) => {
    expect(() => parseRule(text)).toThrow(PolicySyntaxError);
    expect(() => parseRule(text)).toThrow(message);
  });

  it.each([[42], [{ a: 1 }], [[1]], [['role:a', 2]]])('refuses %j as a rule', (value) => {
    expect(() => parseRule(value)).toThrow(PolicySyntaxError);
  });
});
