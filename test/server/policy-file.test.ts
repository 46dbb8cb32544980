/**
 * Policy files: YAML or JSON documents of named rules replacing the built-in
 * policy, their errors, the `default` rule, and their effect through HTTP.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { Policy, PolicyFileError } from '../../server/policy.js';
import type { Credentials } from '../../server/policy-rules.js';
import { ADMIN, json, startTestApp, USER } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'gnocchi-ts-policy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function file(text: string, ext = 'yaml'): string {
  const path = join(dir, `policy-${++n}.${ext}`);
  writeFileSync(path, text);
  return path;
}

const FOOBAR: Credentials = { user: 'foobar', roles: [] };
const ADMIN_CREDS: Credentials = { user: 'admin', roles: ['admin'] };

describe('loading', () => {
  it('reads YAML', () => {
    const policy = Policy.load(file('"owner": "user:%(creator)s"\n"get status": "rule:owner or role:admin"\n'));
    expect(policy.check('get status', FOOBAR, { creator: 'foobar' })).toBe(true);
    expect(policy.check('get status', FOOBAR, { creator: 'other' })).toBe(false);
  });

  it('reads JSON, including the list-of-lists form', () => {
    const policy = Policy.load(file(JSON.stringify({ 'get status': [['role:admin'], ['user:foobar']] }), 'json'));
    expect(policy.check('get status', FOOBAR, {})).toBe(true);
    expect(policy.check('get status', { user: 'other', roles: [] }, {})).toBe(false);
  });

  it('falls back to the `default` rule for names it does not define', () => {
    const policy = Policy.load(file('"default": "role:admin"\n'));
    expect(policy.check('create metric', ADMIN_CREDS, {})).toBe(true);
    expect(policy.check('create metric', FOOBAR, {})).toBe(false);
  });

  it('denies names it does not define when there is no `default` rule', () => {
    const policy = Policy.load(file('"get status": ""\n'));
    expect(policy.check('create metric', ADMIN_CREDS, {})).toBe(false);
  });

  it('an empty file denies everything', () => {
    expect(Policy.load(file('')).check('get status', ADMIN_CREDS, {})).toBe(false);
  });

  it.each([
    ['a missing file', join(dir, 'nope.yaml'), 'cannot read policy file'],
    ['broken YAML', '"a": [\n', 'cannot read policy file'],
    ['a list at the top', '- "role:admin"\n', 'expected a mapping'],
    ['a syntax error', '"get status": "role:admin or"\n', 'rule "get status": unexpected end'],
    ['rules in a loop', '"a": "rule:b"\n"b": "role:x or rule:a"\n', 'loop: a -> b -> a'],
  ])('refuses %s', (_name, content, message) => {
    const path = content.startsWith(dir) ? content : file(content);
    expect(() => Policy.load(path)).toThrow(PolicyFileError);
    expect(() => Policy.load(path)).toThrow(message);
  });
});

describe('through HTTP', () => {
  it('the policy file decides who may do what', async () => {
    const policyFile = file('"get status": "user:foobar"\n"create archive policy": "user:foobar"\n"list archive policy": "!"\n');
    const t = await startTestApp({ policyFile });
    try {
      expect((await json(t.app, 'GET', '/v1/status', undefined, USER)).status).toBe(200);
      expect((await json(t.app, 'GET', '/v1/status', undefined, ADMIN)).status).toBe(403);
      const created = await json(t.app, 'POST', '/v1/archive_policy', { name: 'p', definition: [{ granularity: 1, points: 2 }] }, USER);
      expect(created.status).toBe(201);
      const listed = await json(t.app, 'GET', '/v1/archive_policy', undefined, ADMIN);
      expect(listed.status).toBe(403);
      expect(listed.body.description).toBe('');
      // Names the file does not define, with no `default` rule: denied.
      expect((await json(t.app, 'GET', '/v1/archive_policy/p', undefined, ADMIN)).status).toBe(403);
    } finally {
      await t.close();
    }
  });

  it('a bad policy file stops the server from starting', async () => {
    await expect(startTestApp({ policyFile: file('"x": "(role:a"\n') })).rejects.toThrow(PolicyFileError);
  });

  it('is set by --policy-file, GNOCCHI_POLICY_FILE or the config file', () => {
    const config = file(JSON.stringify({ policyFile: '/from/config' }), 'json');
    expect(loadConfig([], {}).policyFile).toBe('');
    expect(loadConfig(['--config', config], {}).policyFile).toBe('/from/config');
    expect(loadConfig(['--config', config], { GNOCCHI_POLICY_FILE: '/from/env' }).policyFile).toBe('/from/env');
    expect(loadConfig(['--policy-file', '/from/flag'], { GNOCCHI_POLICY_FILE: '/from/env' }).policyFile).toBe('/from/flag');
  });
});
