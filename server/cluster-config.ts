/**
 * Cluster mode from the configuration: the engines' URLs checked together,
 * so that a node refuses to start with half a cluster (two nodes sharing a
 * Redis but each with its own index would each answer with its own
 * resources) and says everything that is missing at once.
 */
import { hostname } from 'node:os';
import type { ClusterOptions } from '../engine/cluster.js';
import { isObjectStoreUrl, OBJECT_STORE_SCHEMES, parseObjectStoreUrl } from '../engine/drivers/s3/url.js';
import { ConfigError, type Config } from './config.js';

type Role = 'index' | 'incoming' | 'series' | 'splits' | 'coordination';

const ROLES: readonly { role: Role; schemes: readonly string[]; what: string }[] = [
  { role: 'index', schemes: ['postgresql:', 'postgres:'], what: 'the PostgreSQL database of resources, metrics and policies' },
  { role: 'incoming', schemes: ['redis:'], what: 'the Redis of accepted measures' },
  { role: 'series', schemes: ['redis:'], what: 'the Redis of metric states and recent rows' },
  { role: 'splits', schemes: ['redis:', ...OBJECT_STORE_SCHEMES], what: 'where sealed splits go' },
  { role: 'coordination', schemes: ['redis:'], what: 'the Redis of shard leases: without it two nodes would process the same metrics' },
];

/** The lease renewals must fit in a lease with room for a slow round trip. */
const LEAST_LEASE_MS = 1000;

/** Undefined in the embedded mode (no engine URL given). */
export function clusterSettings(config: Config): ClusterOptions | undefined {
  if (ROLES.every(({ role }) => config[role] === '')) return undefined;
  const urls = { ...config, splits: config.splits === '' ? config.series : config.splits };
  const problems: string[] = [];
  for (const { role, schemes, what } of ROLES) {
    const raw = urls[role];
    if (raw === '') {
      problems.push(`--${role} (${what}) is missing`);
      continue;
    }
    let scheme: string;
    try {
      scheme = new URL(raw).protocol;
    } catch {
      problems.push(`--${role}: not a URL: ${raw}`);
      continue;
    }
    if (!schemes.includes(scheme)) problems.push(`--${role}: expected a ${schemes.map((s) => `${s}//`).join(' or ')} URL, got ${raw}`);
    else if (isObjectStoreUrl(raw)) {
      try {
        parseObjectStoreUrl(raw);
      } catch (err) {
        problems.push(`--${role}: ${(err as Error).message}`);
      }
    }
  }
  if (problems.length === 0 && urls.coordination !== urls.series) {
    problems.push('--coordination must be the Redis of --series: a commit checks its lease in the same script that writes it');
  }
  const objectStore = isObjectStoreUrl(urls.splits);
  if (problems.length === 0 && !objectStore && urls.splits !== urls.series) {
    problems.push('--splits: a Redis of sealed splits must be the Redis of --series (a commit writes them in the same script); for another store give an s3:// URL');
  }
  if (config.shards < 1) problems.push('--shards must be at least 1');
  if (config.leaseMs < LEAST_LEASE_MS) problems.push(`--lease must be at least ${LEAST_LEASE_MS} ms`);
  if (problems.length > 0) throw new ConfigError(`cluster mode: ${problems.join('; ')}`);
  return {
    index: urls.index,
    incoming: urls.incoming,
    series: urls.series,
    ...(objectStore ? { splits: urls.splits } : {}),
    shards: config.shards,
    nodeId: config.nodeId === '' ? `${hostname()}:${config.port}` : config.nodeId,
    leaseMs: config.leaseMs,
  };
}
