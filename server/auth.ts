/**
 * Who is calling. `basic` mode (Gnocchi's default): the user name of an HTTP
 * basic `Authorization` header, password ignored; `admin` has the admin role.
 */
import type { FastifyRequest } from 'fastify';
import { unauthorized } from './errors.js';

export interface Identity {
  userId: string;
  projectId: string | null;
  roles: string[];
  /** What objects record as their creator. */
  creator: string;
}

export function basicIdentity(request: FastifyRequest): Identity {
  const header = request.headers.authorization;
  if (typeof header !== 'string') throw unauthorized();
  const match = /^\s*basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (match === null) throw unauthorized();
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) throw unauthorized();
  const userId = decoded.slice(0, colon);
  return { userId, projectId: null, roles: userId === 'admin' ? ['admin'] : [], creator: userId };
}

/** `creator` is `user` or `user:project`; these are its halves. */
export function creatorParts(creator: string): { userId: string; projectId: string } {
  const colon = creator.indexOf(':');
  return colon === -1
    ? { userId: creator, projectId: '' }
    : { userId: creator.slice(0, colon), projectId: creator.slice(colon + 1) };
}
