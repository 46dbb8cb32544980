/**
 * Validation of users' tokens against an OpenStack Identity (Keystone) v3
 * service, as keystonemiddleware's auth_token does for Gnocchi: the server
 * authenticates itself with a password to get a service token, then asks
 * `GET /v3/auth/tokens` about each user token it has not validated recently.
 */
import { TokenCache } from './keystone-cache.js';

export interface KeystoneOptions {
  /** Identity endpoint, with or without its `/v3` suffix. */
  authUrl: string;
  username: string;
  password: string;
  userDomainName: string;
  projectName: string;
  projectDomainName: string;
  /** Validated tokens remembered at most. */
  cacheSize: number;
  /** How long a validation is trusted, milliseconds; never past the token's expiry. */
  cacheTtlMs: number;
  /** Milliseconds since the epoch; tests move it. */
  now?: () => number;
}

/** What a valid token says about its holder. */
export interface TokenInfo {
  userId: string;
  /** Null for a token not scoped to a project. */
  projectId: string | null;
  domainId: string | null;
  roles: string[];
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/** The identity service could not be asked (unreachable, or answered an error). */
export class IdentityUnavailable extends Error {}

/** Identity requests give up after this long: the client's request is waiting. */
const REQUEST_TIMEOUT_MS = 10_000;

/** A service token is renewed this long before it expires. */
const EXPIRY_MARGIN_MS = 30_000;

function tokensUrl(authUrl: string): string {
  return `${authUrl.replace(/\/+$/, '').replace(/\/v3$/, '')}/v3/auth/tokens`;
}

function expiryOf(token: Record<string, unknown>): number {
  const t = typeof token.expires_at === 'string' ? Date.parse(token.expires_at) : NaN;
  if (Number.isNaN(t)) throw new IdentityUnavailable('identity service answered a token without a valid expires_at');
  return t;
}

function idOf(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return null;
  const id = (value as Record<string, unknown>).id;
  return typeof id === 'string' ? id : null;
}

/** The fields of a v3 token body this server uses. */
export function tokenInfo(body: unknown): TokenInfo {
  const token = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).token : undefined;
  if (typeof token !== 'object' || token === null) throw new IdentityUnavailable('identity service answered no token');
  const t = token as Record<string, unknown>;
  const userId = idOf(t.user);
  if (userId === null) throw new IdentityUnavailable('identity service answered a token without a user id');
  const roles = Array.isArray(t.roles)
    ? t.roles.map((r) => (typeof r === 'object' && r !== null ? (r as Record<string, unknown>).name : undefined))
        .filter((n): n is string => typeof n === 'string')
    : [];
  return { userId, projectId: idOf(t.project), domainId: idOf(t.domain), roles, expiresAt: expiryOf(t) };
}

async function bodyOf(response: Response): Promise<unknown> {
  try {
    return await response.json();
  } catch {
    throw new IdentityUnavailable('identity service answered a body that is not JSON');
  }
}

/** Frees the connection of an answer whose body is not read. */
async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}

export class KeystoneClient {
  private readonly url: string;
  private readonly now: () => number;
  private readonly cache: TokenCache<TokenInfo>;
  private service: { token: string; expiresAt: number } | undefined;
  private serviceRequest: Promise<string> | undefined;
  private readonly inFlight = new Map<string, Promise<TokenInfo | null>>();

  constructor(private readonly options: KeystoneOptions) {
    this.url = tokensUrl(options.authUrl);
    this.now = options.now ?? Date.now;
    this.cache = new TokenCache(options.cacheSize, this.now);
  }

  /** The holder of a user token, or null when the token is not (or no longer) valid. */
  async validate(userToken: string): Promise<TokenInfo | null> {
    const cached = this.cache.get(userToken);
    if (cached !== undefined) return cached;
    let pending = this.inFlight.get(userToken);
    if (pending === undefined) {
      pending = this.fetchValidation(userToken).finally(() => this.inFlight.delete(userToken));
      this.inFlight.set(userToken, pending);
    }
    return pending;
  }

  private async fetchValidation(userToken: string): Promise<TokenInfo | null> {
    let response = await this.askValidation(await this.serviceToken(), userToken);
    if (response.status === 401) {
      // The service token was revoked or expired early: get a new one, once.
      await discard(response);
      this.service = undefined;
      response = await this.askValidation(await this.serviceToken(), userToken);
    }
    // 404: the user token is unknown, expired or revoked. A fresh service
    // token refused is the service's problem, not the caller's (as
    // keystonemiddleware, which answers 503 then).
    if (response.status !== 200) {
      await discard(response);
      if (response.status === 404) return null;
      throw new IdentityUnavailable(`token validation answered ${response.status}`);
    }
    const info = tokenInfo(await bodyOf(response));
    const now = this.now();
    if (info.expiresAt <= now) return null;
    this.cache.set(userToken, info, Math.min(now + this.options.cacheTtlMs, info.expiresAt));
    return info;
  }

  private async askValidation(serviceToken: string, userToken: string): Promise<Response> {
    return this.request(this.url, {
      method: 'GET',
      headers: { 'X-Auth-Token': serviceToken, 'X-Subject-Token': userToken, Accept: 'application/json' },
    });
  }

  private async serviceToken(): Promise<string> {
    if (this.service !== undefined && this.service.expiresAt - EXPIRY_MARGIN_MS > this.now()) return this.service.token;
    this.serviceRequest ??= this.fetchServiceToken().finally(() => {
      this.serviceRequest = undefined;
    });
    return this.serviceRequest;
  }

  private async fetchServiceToken(): Promise<string> {
    const o = this.options;
    const body = {
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: o.username, password: o.password, domain: { name: o.userDomainName } } },
        },
        scope: { project: { name: o.projectName, domain: { name: o.projectDomainName } } },
      },
    };
    const response = await this.request(this.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(body),
    });
    const token = response.headers.get('x-subject-token');
    if (response.status !== 201 || token === null) {
      await discard(response);
      throw new IdentityUnavailable(`service authentication answered ${response.status}`);
    }
    const info = tokenInfo(await bodyOf(response));
    this.service = { token, expiresAt: info.expiresAt };
    return token;
  }

  private async request(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (err) {
      throw new IdentityUnavailable(`identity service unreachable: ${(err as Error).message}`);
    }
  }
}
