/**
 * Who is calling, in the three modes of Gnocchi's `api.auth_mode`:
 * - `basic` (default): the user name of an HTTP basic `Authorization`
 *   header, password ignored;
 * - `remoteuser`: the user name a trusted reverse proxy that authenticated
 *   the client puts in a header (Gnocchi reads the web server's REMOTE_USER);
 * - `keystone`: the holder of the `X-Auth-Token`, validated by an OpenStack
 *   Identity service, which rejects every /v1 request without a valid token
 *   before any route runs, as keystonemiddleware does.
 * In basic and remoteuser modes the user `admin` has the admin role.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { pyJson } from '../formats/json.js';
import type { Config } from './config.js';
import { ConfigError } from './config.js';
import { HttpError, unauthorized } from './errors.js';
import { IdentityUnavailable, KeystoneClient, type TokenInfo } from './keystone.js';
import { Policy } from './policy.js';
import type { Credentials } from './policy-rules.js';

export interface Identity {
  userId: string;
  projectId: string | null;
  roles: string[];
  /** What objects record as their creator. */
  creator: string;
  /** The caller as policy rules see it (oslo.policy's `creds`). */
  credentials: Credentials;
  /** The access policy in force. */
  policy: Policy;
  /**
   * Whether listings and searches are narrowed to what the policy lets this
   * caller see. Gnocchi narrows them in keystone mode only.
   */
  narrowsListings: boolean;
}

/** `creator` is `user` or `user:project`; these are its halves. */
export function creatorParts(creator: string): { userId: string; projectId: string } {
  const colon = creator.indexOf(':');
  return colon === -1
    ? { userId: creator, projectId: '' }
    : { userId: creator.slice(0, colon), projectId: creator.slice(colon + 1) };
}

/** A user of basic or remoteuser mode: no project, `admin` is an admin. */
function namedUser(userId: string, policy: Policy): Identity {
  const roles = userId === 'admin' ? ['admin'] : [];
  return {
    userId,
    projectId: null,
    roles,
    creator: userId,
    credentials: { user: userId, roles },
    policy,
    narrowsListings: false,
  };
}

function basicUser(request: FastifyRequest): string {
  const header = request.headers.authorization;
  if (typeof header !== 'string') throw unauthorized();
  const match = /^\s*basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (match === null) throw unauthorized();
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) throw unauthorized();
  return decoded.slice(0, colon);
}

/** `::ffff:127.0.0.1` is how a dual-stack socket reports an IPv4 peer. */
const plainAddress = (address: string) => address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');

function remoteUser(request: FastifyRequest, header: string, proxies: ReadonlySet<string>): string {
  const peer = request.socket.remoteAddress;
  if (peer === undefined || !proxies.has(plainAddress(peer))) throw unauthorized();
  const value = request.headers[header];
  const user = Array.isArray(value) ? value[0] : value;
  if (user === undefined || user === '') throw unauthorized();
  return user;
}

export function keystoneIdentity(info: TokenInfo, policy: Policy): Identity {
  // Gnocchi records `user_id:project_id`, with an empty half when absent.
  const creator = `${info.userId}:${info.projectId ?? ''}`;
  return {
    userId: info.userId,
    projectId: info.projectId,
    roles: info.roles,
    creator,
    credentials: {
      user: creator,
      user_id: info.userId,
      project_id: info.projectId,
      domain_id: info.domainId,
      roles: info.roles,
    },
    policy,
    narrowsListings: true,
  };
}

type Resolver = () => Identity;
const resolvers = new WeakMap<FastifyRequest, Resolver>();

/** The caller of a request; 401 when it cannot be authenticated. */
export function identify(request: FastifyRequest): Identity {
  const resolve = resolvers.get(request);
  if (resolve === undefined) throw unauthorized();
  return resolve();
}

const KEYSTONE_REFUSAL = pyJson({
  error: { code: 401, title: 'Unauthorized', message: 'The request you have made requires authentication.' },
});

/**
 * Paths behind Gnocchi's auth pipeline: the API, not the version document
 * nor the health check. Repeated slashes are collapsed as the router does.
 * A route outside these that asked for the caller would get a 401 anyway.
 */
const isApiPath = (url: string) => /^\/v1(?:[/?]|$)/.test(url.replace(/\/{2,}/g, '/'));

function keystoneClient(config: Config): KeystoneClient {
  const missing = (
    [
      ['keystoneAuthUrl', '--keystone-auth-url'],
      ['keystoneUsername', '--keystone-username'],
      ['keystonePassword', '--keystone-password'],
      ['keystoneProjectName', '--keystone-project-name'],
    ] as const
  ).filter(([key]) => config[key] === '').map(([, flag]) => flag);
  if (missing.length > 0) throw new ConfigError(`--auth-mode keystone needs ${missing.join(', ')}`);
  return new KeystoneClient({
    authUrl: config.keystoneAuthUrl,
    username: config.keystoneUsername,
    password: config.keystonePassword,
    userDomainName: config.keystoneUserDomainName,
    projectName: config.keystoneProjectName,
    projectDomainName: config.keystoneProjectDomainName,
    cacheSize: config.keystoneCacheSize,
    cacheTtlMs: config.keystoneCacheTtl * 1000,
  });
}

/**
 * The `onRequest` hook that authenticates requests in the configured mode.
 * Basic and remoteuser callers are read when a route asks (a route may
 * refuse the request for another reason first, as Gnocchi's do); keystone
 * callers are validated up front.
 */
export function authHook(config: Config) {
  const policy = Policy.load(config.policyFile);
  switch (config.authMode) {
    case 'basic':
      return async (request: FastifyRequest) => {
        resolvers.set(request, () => namedUser(basicUser(request), policy));
      };
    case 'remoteuser': {
      const header = config.remoteUserHeader.toLowerCase();
      const proxies = new Set(config.trustedProxies.map(plainAddress));
      return async (request: FastifyRequest) => {
        resolvers.set(request, () => namedUser(remoteUser(request, header, proxies), policy));
      };
    }
    case 'keystone': {
      const client = keystoneClient(config);
      const challenge = `Keystone uri="${config.keystoneWwwAuthenticateUri || config.keystoneAuthUrl}"`;
      return async (request: FastifyRequest, reply: FastifyReply) => {
        if (!isApiPath(request.url)) return;
        const token = request.headers['x-auth-token'];
        let info: TokenInfo | null = null;
        if (typeof token === 'string' && token !== '') {
          try {
            info = await client.validate(token);
          } catch (err) {
            if (!(err instanceof IdentityUnavailable)) throw err;
            request.log.error({ err }, 'token validation failed');
            throw new HttpError(503, 'The Keystone service is temporarily unavailable.');
          }
        }
        if (info === null) {
          return reply.code(401).header('WWW-Authenticate', challenge).type('application/json').send(KEYSTONE_REFUSAL);
        }
        const who = keystoneIdentity(info, policy);
        resolvers.set(request, () => who);
      };
    }
  }
}
