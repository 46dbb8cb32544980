/**
 * Keystone mode against a fake Identity v3 service on loopback: rejection of
 * missing and invalid tokens, the identity a token gives, the validation
 * cache (size, TTL, token expiry), revocation, and renewal of the service
 * token.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KeystoneClient } from '../../server/keystone.js';
import type { Config } from '../../server/config.js';
import { json, startTestApp, type TestApp } from './helpers.js';
import { SERVICE_USER, startFakeKeystone, type FakeKeystone } from './keystone-fake.js';

const REFUSAL = { error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' } };

function keystoneConfig(fake: FakeKeystone, extra: Partial<Config> = {}): Partial<Config> {
  return {
    authMode: 'keystone',
    keystoneAuthUrl: fake.url,
    keystoneUsername: SERVICE_USER.username,
    keystonePassword: SERVICE_USER.password,
    keystoneProjectName: SERVICE_USER.projectName,
    ...extra,
  };
}

const token = (value: string) => ({ 'x-auth-token': value });

describe('keystone mode through HTTP', () => {
  let fake: FakeKeystone;
  let t: TestApp;
  beforeAll(async () => {
    fake = await startFakeKeystone();
    t = await startTestApp(keystoneConfig(fake));
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it.each([
    ['no token', {}],
    ['an empty token', token('')],
    ['an unknown token', token('forged')],
    ['basic credentials', { authorization: 'basic ' + Buffer.from('admin:').toString('base64') }],
  ])('refuses %s as keystonemiddleware does', async (_name, headers) => {
    const res = await json(t.app, 'GET', '/v1/metric', undefined, headers);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(REFUSAL);
    expect(res.headers['www-authenticate']).toBe(`Keystone uri="${fake.url}"`);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  it.each(['/v1', '/v1?x=1', '//v1//metric', '/v1/no/such/path'])('guards %s', async (url) => {
    const res = await json(t.app, 'GET', url, undefined, {});
    expect(res.status).toBe(401);
    expect(res.body).toEqual(REFUSAL);
  });

  it('refuses before looking at the request', async () => {
    const res = await json(t.app, 'POST', '/v1/metric', '{not json', { accept: 'text/html' });
    expect(res.status).toBe(401);
  });

  it('serves the version document and the health check without a token', async () => {
    expect((await json(t.app, 'GET', '/', undefined, {})).status).toBe(200);
    expect((await json(t.app, 'GET', '/healthcheck', undefined, {})).status).toBe(200);
  });

  it('a valid token gives user, project and creator `user:project`', async () => {
    const res = await json(t.app, 'POST', '/v1/resource/generic', { id: 'kr1', project_id: 'p1' }, token(fake.issue('u1', 'p1')));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ creator: 'u1:p1', created_by_user_id: 'u1', created_by_project_id: 'p1' });
  });

  it('a token without a project records an empty project half', async () => {
    const res = await json(t.app, 'POST', '/v1/resource/generic', { id: 'kr2' }, token(fake.issue('u2', null)));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ creator: 'u2:', created_by_user_id: 'u2', created_by_project_id: '' });
  });

  it.each([
    ['admin', ['admin'], 200],
    ['Admin, any case', ['reader', 'Admin'], 200],
    ['member', ['member'], 403],
  ])('roles come from the token: %s', async (_name, roles, status) => {
    expect((await json(t.app, 'GET', '/v1/status', undefined, token(fake.issue('u3', 'p3', roles)))).status).toBe(status);
  });

  it('identity headers sent by the client are ignored', async () => {
    const headers = { ...token(fake.issue('u4', 'p4', ['member'])), 'x-roles': 'admin', 'x-user-id': 'admin', 'x-project-id': 'p0' };
    expect((await json(t.app, 'GET', '/v1/status', undefined, headers)).status).toBe(403);
  });

  it('validates a token once, then answers from the cache; a revoked token stays accepted while cached', async () => {
    const user = fake.issue('u5', 'p5');
    const before = fake.validations;
    for (let i = 0; i < 3; i++) expect((await json(t.app, 'GET', '/v1/metric', undefined, token(user))).status).toBe(200);
    expect(fake.validations - before).toBe(1);
    fake.revoke(user);
    expect((await json(t.app, 'GET', '/v1/metric', undefined, token(user))).status).toBe(200);
    expect(fake.validations - before).toBe(1);
  });

  it('gets a new service token when the identity service stops accepting the old one', async () => {
    const logins = fake.serviceLogins;
    fake.revokeServiceTokens();
    expect((await json(t.app, 'GET', '/v1/metric', undefined, token(fake.issue('u6', 'p6')))).status).toBe(200);
    expect(fake.serviceLogins).toBe(logins + 1);
  });

  it('answers 503 while the identity service fails', async () => {
    fake.broken = true;
    try {
      const res = await json(t.app, 'GET', '/v1/metric', undefined, token(fake.issue('u7', 'p7')));
      expect(res.status).toBe(503);
      expect(res.body.description).toBe('The Keystone service is temporarily unavailable.');
    } finally {
      fake.broken = false;
    }
  });
});

describe('keystone mode with wrong service credentials', () => {
  it('answers 503, not 401: the server, not the caller, is at fault', async () => {
    const fake = await startFakeKeystone();
    const t = await startTestApp(keystoneConfig(fake, { keystonePassword: 'wrong' }));
    try {
      const res = await json(t.app, 'GET', '/v1/metric', undefined, token(fake.issue('u1', 'p1')));
      expect(res.status).toBe(503);
      expect(fake.serviceLogins).toBe(0);
    } finally {
      await t.close();
      await fake.close();
    }
  });
});

describe('keystone mode without a cache', () => {
  let fake: FakeKeystone;
  let t: TestApp;
  beforeAll(async () => {
    // Service tokens that expire within the renewal margin: renewed on each use.
    fake = await startFakeKeystone({ serviceTtlMs: 5_000 });
    t = await startTestApp(keystoneConfig(fake, { keystoneCacheTtl: 0 }));
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('validates every request, so a revoked token is refused at once', async () => {
    const user = fake.issue('u1', 'p1');
    const before = fake.validations;
    expect((await json(t.app, 'GET', '/v1/metric', undefined, token(user))).status).toBe(200);
    expect((await json(t.app, 'GET', '/v1/metric', undefined, token(user))).status).toBe(200);
    expect(fake.validations - before).toBe(2);
    fake.revoke(user);
    expect((await json(t.app, 'GET', '/v1/metric', undefined, token(user))).status).toBe(401);
  });

  it('renews a service token about to expire before using it', async () => {
    const logins = fake.serviceLogins;
    await json(t.app, 'GET', '/v1/metric', undefined, token(fake.issue('u2', 'p2')));
    await json(t.app, 'GET', '/v1/metric', undefined, token(fake.issue('u3', 'p3')));
    expect(fake.serviceLogins).toBe(logins + 2);
  });
});

describe('KeystoneClient cache', () => {
  const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
  const now = () => clock.now;
  let fake: FakeKeystone;
  beforeAll(async () => {
    fake = await startFakeKeystone({ now });
  });
  afterAll(async () => fake.close());
  afterEach(() => {
    clock.now = Date.parse('2026-01-01T00:00:00Z');
  });

  const client = (cacheSize: number, cacheTtlMs: number) =>
    new KeystoneClient({
      authUrl: fake.url.replace(/\/v3$/, '/'),
      username: SERVICE_USER.username,
      password: SERVICE_USER.password,
      userDomainName: 'Default',
      projectName: SERVICE_USER.projectName,
      projectDomainName: 'Default',
      cacheSize,
      cacheTtlMs,
      now,
    });

  it('returns what the token says', async () => {
    const info = await client(10, 60_000).validate(fake.issue('u1', 'p1', ['member', 'reader'], 120_000));
    expect(info).toEqual({
      userId: 'u1',
      projectId: 'p1',
      domainId: null,
      roles: ['member', 'reader'],
      expiresAt: clock.now + 120_000,
    });
  });

  it('keeps a validation for the TTL', async () => {
    const c = client(10, 10_000);
    const user = fake.issue('u1', 'p1');
    const before = fake.validations;
    await c.validate(user);
    clock.now += 9_000;
    await c.validate(user);
    expect(fake.validations - before).toBe(1);
    clock.now += 2_000;
    expect(await c.validate(user)).not.toBeNull();
    expect(fake.validations - before).toBe(2);
  });

  it('never past the expiry of the token', async () => {
    const c = client(10, 3_600_000);
    const user = fake.issue('u1', 'p1', ['member'], 60_000);
    expect(await c.validate(user)).not.toBeNull();
    clock.now += 59_000;
    expect(await c.validate(user)).not.toBeNull();
    clock.now += 2_000;
    expect(await c.validate(user)).toBeNull();
  });

  it('forgets the least recently used token beyond its size', async () => {
    const c = client(2, 3_600_000);
    const [a, b, x] = [fake.issue('a', 'p'), fake.issue('b', 'p'), fake.issue('x', 'p')];
    const before = fake.validations;
    for (const user of [a, b, a, x, a, b]) await c.validate(user);
    // a, b validated; a from the cache; x evicts b; a from the cache; b again.
    expect(fake.validations - before).toBe(4);
  });

  it('asks once for concurrent requests with the same token', async () => {
    const c = client(10, 60_000);
    const user = fake.issue('u1', 'p1');
    const before = fake.validations;
    const results = await Promise.all([c.validate(user), c.validate(user), c.validate(user)]);
    expect(results.every((r) => r?.userId === 'u1')).toBe(true);
    expect(fake.validations - before).toBe(1);
  });

  it('does not cache refusals', async () => {
    const c = client(10, 60_000);
    const before = fake.validations;
    expect(await c.validate('forged')).toBeNull();
    expect(await c.validate('forged')).toBeNull();
    expect(fake.validations - before).toBe(2);
  });
});
