/**
 * Authentication modes `basic` and `remoteuser` through the HTTP app, and the
 * options that choose and configure a mode.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/config.js';
import { ADMIN, startTestApp, USER, type Headers, type TestApp } from './helpers.js';

/** A request from the peer `remoteAddress`. */
async function call(
  app: FastifyInstance,
  method: 'GET' | 'POST',
  url: string,
  headers: Headers,
  remoteAddress = '127.0.0.1',
  body?: unknown,
) {
  const res = await app.inject({
    method,
    url,
    headers: { accept: 'application/json', 'content-type': 'application/json', ...headers },
    remoteAddress,
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  return { status: res.statusCode, body: res.body === '' ? undefined : res.json() };
}

describe('basic mode (default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it.each([
    ['admin is an admin', ADMIN, 200],
    ['another user is not', USER, 403],
    ['no Authorization header', {}, 401],
    ['a scheme other than basic', { authorization: 'Bearer abc' }, 401],
    ['a remote-user header is not believed', { 'x-remote-user': 'admin' }, 401],
  ])('%s', async (_name, headers, status) => {
    expect((await call(t.app, 'GET', '/v1/status', headers)).status).toBe(status);
  });

  it('records the user name as creator', async () => {
    const made = await call(t.app, 'POST', '/v1/resource/generic', USER, '127.0.0.1', { id: 'r-basic' });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ creator: 'foobar', created_by_user_id: 'foobar', created_by_project_id: '' });
  });
});

describe('remoteuser mode', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ authMode: 'remoteuser' });
  });
  afterAll(async () => t.close());

  it.each([
    ['admin from the local proxy is an admin', { 'x-remote-user': 'admin' }, '127.0.0.1', 200],
    ['IPv6 loopback is trusted', { 'x-remote-user': 'admin' }, '::1', 200],
    ['an IPv4-mapped loopback is trusted', { 'x-remote-user': 'admin' }, '::ffff:127.0.0.1', 200],
    ['another user is not an admin', { 'x-remote-user': 'foobar' }, '127.0.0.1', 403],
    ['the header from an untrusted peer', { 'x-remote-user': 'admin' }, '10.1.2.3', 401],
    ['no header', {}, '127.0.0.1', 401],
    ['an empty header', { 'x-remote-user': '' }, '127.0.0.1', 401],
    ['basic credentials are not used', ADMIN, '127.0.0.1', 401],
  ])('%s', async (_name, headers, peer, status) => {
    expect((await call(t.app, 'GET', '/v1/status', headers, peer)).status).toBe(status);
  });

  it('records the user name as creator, and permissions are as in basic mode', async () => {
    const made = await call(t.app, 'POST', '/v1/resource/generic', { 'x-remote-user': 'alice' }, '127.0.0.1', { id: 'r-remote' });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ creator: 'alice', created_by_user_id: 'alice', created_by_project_id: '' });
    const id = made.body.id as string;
    expect((await call(t.app, 'GET', `/v1/resource/generic/${id}`, { 'x-remote-user': 'alice' })).status).toBe(200);
    expect((await call(t.app, 'GET', `/v1/resource/generic/${id}`, { 'x-remote-user': 'bob' })).status).toBe(403);
    expect((await call(t.app, 'GET', `/v1/resource/generic/${id}`, { 'x-remote-user': 'admin' })).status).toBe(200);
  });

  it('the version document needs no user', async () => {
    expect((await call(t.app, 'GET', '/', {}, '10.1.2.3')).status).toBe(200);
  });
});

describe('remoteuser mode with a configured header and proxies', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ authMode: 'remoteuser', remoteUserHeader: 'X-Forwarded-User', trustedProxies: ['10.0.0.5'] });
  });
  afterAll(async () => t.close());

  it.each([
    ['the configured header from the configured proxy', { 'x-forwarded-user': 'admin' }, '10.0.0.5', 200],
    ['loopback is no longer trusted', { 'x-forwarded-user': 'admin' }, '127.0.0.1', 401],
    ['the default header name is not read', { 'x-remote-user': 'admin' }, '10.0.0.5', 401],
  ])('%s', async (_name, headers, peer, status) => {
    expect((await call(t.app, 'GET', '/v1/status', headers, peer)).status).toBe(status);
  });
});

describe('options', () => {
  it('defaults', () => {
    const c = loadConfig([], {});
    expect(c.authMode).toBe('basic');
    expect(c.remoteUserHeader).toBe('X-Remote-User');
    expect(c.trustedProxies).toEqual(['127.0.0.1', '::1']);
    expect(c.keystoneCacheSize).toBe(10000);
    expect(c.keystoneCacheTtl).toBe(300);
  });

  it('flags, environment', () => {
    expect(loadConfig(['--auth-mode', 'remoteuser'], {}).authMode).toBe('remoteuser');
    expect(loadConfig([], { GNOCCHI_AUTH_MODE: 'keystone' }).authMode).toBe('keystone');
    expect(loadConfig(['--trusted-proxies', '10.0.0.1, 10.0.0.2'], {}).trustedProxies).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(loadConfig(['--keystone-cache-ttl=60'], {}).keystoneCacheTtl).toBe(60);
  });

  it('refuses an unknown mode', () => {
    expect(() => loadConfig(['--auth-mode', 'noauth'], {})).toThrow(ConfigError);
    expect(() => loadConfig(['--auth-mode', 'noauth'], {})).toThrow('expected one of basic, remoteuser, keystone');
  });

  it('keystone mode without its endpoint and service user does not start', async () => {
    const start = startTestApp({ authMode: 'keystone', keystoneUsername: 'gnocchi' });
    await expect(start).rejects.toThrow(ConfigError);
    await expect(startTestApp({ authMode: 'keystone' })).rejects.toThrow(
      '--auth-mode keystone needs --keystone-auth-url, --keystone-username, --keystone-password, --keystone-project-name',
    );
  });
});
