/**
 * A small OpenStack Identity v3 service on loopback for the keystone-mode
 * tests: password authentication of the service user, issuing and
 * validating tokens, revocation, and counters of what was asked.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const SERVICE_USER = { username: 'gnocchi', password: 'service-secret', projectName: 'service' };

interface Token {
  userId: string;
  projectId: string | null;
  roles: string[];
  expiresAt: number;
}

export interface FakeKeystone {
  /** Endpoint with its `/v3` suffix. */
  url: string;
  /** Calls of `GET /v3/auth/tokens`. */
  validations: number;
  /** Successful service-user authentications. */
  serviceLogins: number;
  /** A new user token; `ttlMs` from now. */
  issue(user: string, project: string | null, roles?: string[], ttlMs?: number): string;
  revoke(token: string): void;
  /** Makes every issued service token invalid (as a Keystone restart with new keys). */
  revokeServiceTokens(): void;
  /** Answers 500 to everything while true. */
  broken: boolean;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function tokenBody(t: Token) {
  return {
    token: {
      user: { id: t.userId, name: t.userId, domain: { id: 'default', name: 'Default' } },
      ...(t.projectId === null ? {} : { project: { id: t.projectId, name: t.projectId, domain: { id: 'default' } } }),
      roles: t.roles.map((name, i) => ({ id: `role-${i}`, name })),
      expires_at: new Date(t.expiresAt).toISOString(),
      issued_at: new Date().toISOString(),
    },
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export interface FakeKeystoneOptions {
  /** Lifetime of the service tokens it issues. */
  serviceTtlMs?: number;
  /** Its clock, milliseconds since the epoch. */
  now?: () => number;
}

export async function startFakeKeystone(options: FakeKeystoneOptions = {}): Promise<FakeKeystone> {
  const serviceTtlMs = options.serviceTtlMs ?? 3_600_000;
  const now = options.now ?? Date.now;
  const users = new Map<string, Token>();
  const services = new Map<string, Token>();
  let counter = 0;

  const fake: FakeKeystone = {
    url: '',
    validations: 0,
    serviceLogins: 0,
    broken: false,
    issue(user, project, roles = ['member'], ttlMs = 3_600_000) {
      const token = `user-token-${++counter}`;
      users.set(token, { userId: user, projectId: project, roles, expiresAt: now() + ttlMs });
      return token;
    },
    revoke(token) {
      users.delete(token);
    },
    revokeServiceTokens() {
      services.clear();
    },
    async close() {
      // fetch keeps connections alive; close them or the server never closes.
      server.close();
      server.closeAllConnections();
      await once(server, 'close');
    },
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (fake.broken) return send(res, 500, { error: { code: 500 } });
    if (req.url !== '/v3/auth/tokens') return send(res, 404, { error: { code: 404 } });
    if (req.method === 'POST') {
      const body = JSON.parse(await readBody(req));
      const user = body?.auth?.identity?.password?.user;
      const project = body?.auth?.scope?.project;
      if (user?.name !== SERVICE_USER.username || user?.password !== SERVICE_USER.password || project?.name !== SERVICE_USER.projectName) {
        return send(res, 401, { error: { code: 401, title: 'Unauthorized' } });
      }
      fake.serviceLogins++;
      const token = `service-token-${++counter}`;
      const t: Token = { userId: 'gnocchi-id', projectId: 'service-id', roles: ['service'], expiresAt: now() + serviceTtlMs };
      services.set(token, t);
      return send(res, 201, tokenBody(t), { 'X-Subject-Token': token });
    }
    if (req.method === 'GET') {
      fake.validations++;
      const service = services.get(String(req.headers['x-auth-token']));
      if (service === undefined || service.expiresAt <= now()) return send(res, 401, { error: { code: 401 } });
      const user = users.get(String(req.headers['x-subject-token']));
      if (user === undefined || user.expiresAt <= now()) return send(res, 404, { error: { code: 404, title: 'Not Found' } });
      return send(res, 200, tokenBody(user));
    }
    return send(res, 405, { error: { code: 405 } });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => send(res, 400, { error: { code: 400 } }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v3`;
  return fake;
}
