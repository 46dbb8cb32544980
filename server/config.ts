/**
 * Configuration from, in increasing precedence: built-in defaults, an
 * optional JSON config file (`--config FILE` / `GNOCCHI_CONFIG`), environment
 * variables, command-line flags.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { DEFAULT_AGGREGATION_METHODS, isValidAggregationMethod } from '../engine/archive-policy.js';
import type { EngineOptions } from '../engine/engine.js';
import { BUILTIN_RESOURCE_TYPES } from '../engine/resource-type.js';
import { clusterSettings } from './cluster-config.js';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  maxLimit: number;
  defaultArchivePolicies: boolean;
  defaultAggregationMethods: string[];
  workers: number;
  processingIntervalMs: number;
  /** Milliseconds a push waits before background processing takes it (engine/processor.ts). */
  reorderWindowMs: number;
  settleAfterMs: number;
  /** Bytes. */
  bodyLimit: number;
  /** Bytes. */
  mapSize: number;
  /** Measures waiting to be processed past which pushes answer 503; 0: no bound. */
  maxBacklog: number;
  /** Metrics past which the collector endpoints (InfluxDB, Prometheus) create no more; 0: no bound. */
  maxSeries: number;
  /** Bytes of encoded single-metric read answers kept; 0: none. */
  readCacheSize: number;
  /** Nice value of the processing worker threads (Linux); 0: the server's priority. */
  processingNice: number;
  /** Bytes of decoded sealed splits kept for reads; 0: none. */
  splitCacheSize: number;
  corsOrigins: string[];
  proxyHeaders: boolean;
  logLevel: string;
  /** Seconds between processing summaries in the log (at info). */
  logInterval: number;
  /** Built-in resource types (e.g. `instance`) created at startup when missing. */
  builtinResourceTypes: string[];
  /** Gnocchi's `api.auth_mode`. */
  authMode: AuthMode;
  /** YAML or JSON policy; empty: the built-in default policy. */
  policyFile: string;
  /** remoteuser mode: the header carrying the authenticated user name. */
  remoteUserHeader: string;
  /** remoteuser mode: peer addresses whose header is believed. */
  trustedProxies: string[];
  keystoneAuthUrl: string;
  /** Sent back in `WWW-Authenticate` on 401; empty: `keystoneAuthUrl`. */
  keystoneWwwAuthenticateUri: string;
  keystoneUsername: string;
  keystonePassword: string;
  keystoneUserDomainName: string;
  keystoneProjectName: string;
  keystoneProjectDomainName: string;
  /** Validated tokens remembered at most. */
  keystoneCacheSize: number;
  /** Seconds a token validation is trusted (never past the token's expiry). */
  keystoneCacheTtl: number;
  /** Serve `GET /metrics` (Prometheus text format). */
  metrics: boolean;
  /** `GET /metrics` needs the admin role. */
  metricsAdminOnly: boolean;
  /** Serve the web console at `/ui/`. */
  ui: boolean;
  /** UDP port of the statsd listener; 0: off. */
  statsdPort: number;
  statsdHost: string;
  /** Resource the statsd metrics belong to (created when missing); needed with --statsd-port. */
  statsdResourceId: string;
  /** Creator of that resource and its metrics. */
  statsdCreator: string;
  /** Policy of new statsd metrics; empty: the archive policy rules decide. */
  statsdArchivePolicyName: string;
  /** Seconds between statsd flushes. */
  statsdFlushDelay: number;
  /** Cluster mode (server/cluster-config.ts): PostgreSQL URL of the index; empty: LMDB in dataDir. */
  index: string;
  /** Redis URL of the incoming measures. */
  incoming: string;
  /** Redis URL of metric states and open-split chunks. */
  series: string;
  /** Redis or S3 URL of sealed splits; empty: where the series are. */
  splits: string;
  /** Redis URL of shard leases and node membership. */
  coordination: string;
  /** Shards of the cluster: the same on every node. */
  shards: number;
  /** This node's name among the cluster's; empty: host name and port. */
  nodeId: string;
  /** Milliseconds a shard lease lasts unless renewed: how long a stalled node's shards wait. */
  leaseMs: number;
}

export const AUTH_MODES = ['basic', 'remoteuser', 'keystone'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

interface Option {
  key: keyof Config;
  flag: string;
  env: string;
  kind: 'string' | 'int' | 'number' | 'bool' | 'list';
  help: string;
}

export const OPTIONS: readonly Option[] = [
  { key: 'host', flag: 'host', env: 'GNOCCHI_HOST', kind: 'string', help: 'listen address' },
  { key: 'port', flag: 'port', env: 'GNOCCHI_PORT', kind: 'int', help: 'listen port' },
  { key: 'dataDir', flag: 'data-dir', env: 'GNOCCHI_DATA_DIR', kind: 'string', help: 'data directory (LMDB)' },
  { key: 'maxLimit', flag: 'max-limit', env: 'GNOCCHI_MAX_LIMIT', kind: 'int', help: 'default and maximum page size' },
  {
    key: 'defaultArchivePolicies',
    flag: 'default-archive-policies',
    env: 'GNOCCHI_DEFAULT_ARCHIVE_POLICIES',
    kind: 'bool',
    help: 'create bool/low/medium/high and the `*` rule in a new data directory',
  },
  {
    key: 'defaultAggregationMethods',
    flag: 'default-aggregation-methods',
    env: 'GNOCCHI_DEFAULT_AGGREGATION_METHODS',
    kind: 'list',
    help: 'methods of policies created without aggregation_methods',
  },
  { key: 'workers', flag: 'workers', env: 'GNOCCHI_WORKERS', kind: 'int', help: 'processing worker threads (0: main thread)' },
  {
    key: 'processingIntervalMs',
    flag: 'processing-interval',
    env: 'GNOCCHI_PROCESSING_INTERVAL',
    kind: 'int',
    help: 'milliseconds between processing rounds',
  },
  {
    key: 'reorderWindowMs',
    flag: 'reorder-window',
    env: 'GNOCCHI_REORDER_WINDOW',
    kind: 'int',
    help: 'milliseconds a push waits before background processing, so that pushes arriving out of order are aggregated together (0: none)',
  },
  {
    key: 'settleAfterMs',
    flag: 'settle-after',
    env: 'GNOCCHI_SETTLE_AFTER',
    kind: 'int',
    help: "milliseconds after its last points that a metric's newest rows are compressed like the older ones (0: never)",
  },
  { key: 'bodyLimit', flag: 'body-limit', env: 'GNOCCHI_BODY_LIMIT', kind: 'int', help: 'maximum request body, bytes' },
  { key: 'mapSize', flag: 'map-size', env: 'GNOCCHI_MAP_SIZE', kind: 'int', help: 'maximum LMDB size, bytes' },
  {
    key: 'maxBacklog',
    flag: 'max-backlog',
    env: 'GNOCCHI_MAX_BACKLOG',
    kind: 'int',
    help: 'measures waiting to be processed past which pushes answer 503 (0: no bound)',
  },
  {
    key: 'maxSeries',
    flag: 'max-series',
    env: 'GNOCCHI_MAX_SERIES',
    kind: 'int',
    help: 'metrics past which the InfluxDB and Prometheus writes create no more, refusing the points of new series (0: no bound)',
  },
  {
    key: 'readCacheSize',
    flag: 'read-cache-size',
    env: 'GNOCCHI_READ_CACHE_SIZE',
    kind: 'int',
    help: 'bytes of metric measure answers kept for repeated reads (0: no cache)',
  },
  {
    key: 'splitCacheSize',
    flag: 'split-cache-size',
    env: 'GNOCCHI_SPLIT_CACHE_SIZE',
    kind: 'int',
    help: 'bytes of decoded sealed splits kept for reads of overlapping windows (0: no cache)',
  },
  {
    key: 'processingNice',
    flag: 'processing-nice',
    env: 'GNOCCHI_PROCESSING_NICE',
    kind: 'int',
    help: 'nice value (up to 19) of the processing worker threads, Linux only (0: the server priority)',
  },
  { key: 'corsOrigins', flag: 'cors-origins', env: 'GNOCCHI_CORS_ORIGINS', kind: 'list', help: 'allowed CORS origins' },
  {
    key: 'proxyHeaders',
    flag: 'proxy-headers',
    env: 'GNOCCHI_PROXY_HEADERS',
    kind: 'bool',
    help: 'build links from Forwarded / X-Forwarded-* headers',
  },
  { key: 'logLevel', flag: 'log-level', env: 'GNOCCHI_LOG_LEVEL', kind: 'string', help: 'fatal, error, warn, info (a line per request), debug' },
  {
    key: 'logInterval',
    flag: 'log-interval',
    env: 'GNOCCHI_LOG_INTERVAL',
    kind: 'number',
    help: 'seconds between processing summaries in the log (info)',
  },
  {
    key: 'builtinResourceTypes',
    flag: 'builtin-resource-types',
    env: 'GNOCCHI_BUILTIN_RESOURCE_TYPES',
    kind: 'list',
    help: `built-in resource types to create at startup if missing (${Object.keys(BUILTIN_RESOURCE_TYPES).join(', ')})`,
  },
  { key: 'authMode', flag: 'auth-mode', env: 'GNOCCHI_AUTH_MODE', kind: 'string', help: `authentication: ${AUTH_MODES.join(', ')}` },
  { key: 'policyFile', flag: 'policy-file', env: 'GNOCCHI_POLICY_FILE', kind: 'string', help: 'access policy, YAML or JSON (default: built-in)' },
  {
    key: 'remoteUserHeader',
    flag: 'remote-user-header',
    env: 'GNOCCHI_REMOTE_USER_HEADER',
    kind: 'string',
    help: 'remoteuser mode: header naming the authenticated user',
  },
  {
    key: 'trustedProxies',
    flag: 'trusted-proxies',
    env: 'GNOCCHI_TRUSTED_PROXIES',
    kind: 'list',
    help: 'remoteuser mode: proxy addresses allowed to set that header',
  },
  { key: 'keystoneAuthUrl', flag: 'keystone-auth-url', env: 'GNOCCHI_KEYSTONE_AUTH_URL', kind: 'string', help: 'keystone mode: Identity v3 endpoint' },
  {
    key: 'keystoneWwwAuthenticateUri',
    flag: 'keystone-www-authenticate-uri',
    env: 'GNOCCHI_KEYSTONE_WWW_AUTHENTICATE_URI',
    kind: 'string',
    help: 'keystone mode: public Identity endpoint named in 401 answers',
  },
  { key: 'keystoneUsername', flag: 'keystone-username', env: 'GNOCCHI_KEYSTONE_USERNAME', kind: 'string', help: 'keystone mode: service user' },
  { key: 'keystonePassword', flag: 'keystone-password', env: 'GNOCCHI_KEYSTONE_PASSWORD', kind: 'string', help: 'keystone mode: service user password' },
  {
    key: 'keystoneUserDomainName',
    flag: 'keystone-user-domain-name',
    env: 'GNOCCHI_KEYSTONE_USER_DOMAIN_NAME',
    kind: 'string',
    help: 'keystone mode: domain of the service user',
  },
  {
    key: 'keystoneProjectName',
    flag: 'keystone-project-name',
    env: 'GNOCCHI_KEYSTONE_PROJECT_NAME',
    kind: 'string',
    help: 'keystone mode: project of the service token',
  },
  {
    key: 'keystoneProjectDomainName',
    flag: 'keystone-project-domain-name',
    env: 'GNOCCHI_KEYSTONE_PROJECT_DOMAIN_NAME',
    kind: 'string',
    help: 'keystone mode: domain of that project',
  },
  {
    key: 'keystoneCacheSize',
    flag: 'keystone-cache-size',
    env: 'GNOCCHI_KEYSTONE_CACHE_SIZE',
    kind: 'int',
    help: 'keystone mode: validated tokens cached (0: none)',
  },
  {
    key: 'keystoneCacheTtl',
    flag: 'keystone-cache-ttl',
    env: 'GNOCCHI_KEYSTONE_CACHE_TTL',
    kind: 'int',
    help: 'keystone mode: seconds a validation is cached',
  },
  { key: 'metrics', flag: 'metrics', env: 'GNOCCHI_METRICS', kind: 'bool', help: 'serve GET /metrics (Prometheus text format)' },
  {
    key: 'metricsAdminOnly',
    flag: 'metrics-admin-only',
    env: 'GNOCCHI_METRICS_ADMIN_ONLY',
    kind: 'bool',
    help: 'GET /metrics needs the admin role',
  },
  { key: 'ui', flag: 'ui', env: 'GNOCCHI_UI', kind: 'bool', help: 'serve the web console at /ui/' },
  { key: 'statsdPort', flag: 'statsd-port', env: 'GNOCCHI_STATSD_PORT', kind: 'int', help: 'UDP port of the statsd listener (0: off)' },
  { key: 'statsdHost', flag: 'statsd-host', env: 'GNOCCHI_STATSD_HOST', kind: 'string', help: 'statsd listen address' },
  {
    key: 'statsdResourceId',
    flag: 'statsd-resource-id',
    env: 'GNOCCHI_STATSD_RESOURCE_ID',
    kind: 'string',
    help: 'resource of the statsd metrics (created when missing)',
  },
  { key: 'statsdCreator', flag: 'statsd-creator', env: 'GNOCCHI_STATSD_CREATOR', kind: 'string', help: 'creator of the statsd resource and metrics' },
  {
    key: 'statsdArchivePolicyName',
    flag: 'statsd-archive-policy-name',
    env: 'GNOCCHI_STATSD_ARCHIVE_POLICY_NAME',
    kind: 'string',
    help: 'archive policy of new statsd metrics (default: the archive policy rules)',
  },
  {
    key: 'statsdFlushDelay',
    flag: 'statsd-flush-delay',
    env: 'GNOCCHI_STATSD_FLUSH_DELAY',
    kind: 'number',
    help: 'seconds between statsd flushes',
  },
  { key: 'index', flag: 'index', env: 'GNOCCHI_INDEX', kind: 'string', help: 'cluster mode: postgresql:// URL of the index' },
  { key: 'incoming', flag: 'incoming', env: 'GNOCCHI_INCOMING', kind: 'string', help: 'cluster mode: redis:// URL of the incoming measures' },
  { key: 'series', flag: 'series', env: 'GNOCCHI_SERIES', kind: 'string', help: 'cluster mode: redis:// URL of metric states and recent rows' },
  {
    key: 'splits',
    flag: 'splits',
    env: 'GNOCCHI_SPLITS',
    kind: 'string',
    help: 'cluster mode: redis:// or s3:// URL of sealed splits (default: with the series)',
  },
  {
    key: 'coordination',
    flag: 'coordination',
    env: 'GNOCCHI_COORDINATION',
    kind: 'string',
    help: 'cluster mode: redis:// URL of shard leases and node membership',
  },
  { key: 'shards', flag: 'shards', env: 'GNOCCHI_SHARDS', kind: 'int', help: 'cluster mode: shards of the cluster, the same on every node' },
  { key: 'nodeId', flag: 'node-id', env: 'GNOCCHI_NODE_ID', kind: 'string', help: "cluster mode: this node's name (default: host name and port)" },
  {
    key: 'leaseMs',
    flag: 'lease',
    env: 'GNOCCHI_LEASE',
    kind: 'int',
    help: 'milliseconds a shard lease lasts unless renewed (how long the shards of a stalled node wait)',
  },
];

export function defaultConfig(): Config {
  return {
    host: '127.0.0.1',
    port: 8041,
    dataDir: './data',
    maxLimit: 1000,
    defaultArchivePolicies: true,
    defaultAggregationMethods: [...DEFAULT_AGGREGATION_METHODS],
    // A core left to the main thread, which parses and appends every push: on 2 cores, 1 processing
    // thread beside it took 12-19% less CPU than 2, accepted line protocol 30% faster and kept the
    // queryable rates (bench/RESULTS.md, session 14).
    workers: Math.max(1, availableParallelism() - 1),
    processingIntervalMs: 100,
    reorderWindowMs: 250,
    settleAfterMs: 10_000,
    bodyLimit: 128 * 1024 * 1024,
    mapSize: 64 * 1024 ** 3,
    maxBacklog: 5_000_000,
    maxSeries: 1_000_000,
    readCacheSize: 64 * 1024 ** 2,
    processingNice: 10,
    splitCacheSize: 64 * 1024 ** 2,
    corsOrigins: ['http://foobar.com'],
    proxyHeaders: true,
    logLevel: 'warn',
    logInterval: 10,
    builtinResourceTypes: [],
    authMode: 'basic',
    policyFile: '',
    remoteUserHeader: 'X-Remote-User',
    trustedProxies: ['127.0.0.1', '::1'],
    keystoneAuthUrl: '',
    keystoneWwwAuthenticateUri: '',
    keystoneUsername: '',
    keystonePassword: '',
    keystoneUserDomainName: 'Default',
    keystoneProjectName: '',
    keystoneProjectDomainName: 'Default',
    keystoneCacheSize: 10000,
    keystoneCacheTtl: 300,
    metrics: true,
    metricsAdminOnly: false,
    ui: true,
    statsdPort: 0,
    statsdHost: '127.0.0.1',
    statsdResourceId: '',
    statsdCreator: 'admin',
    statsdArchivePolicyName: '',
    statsdFlushDelay: 10,
    index: '',
    incoming: '',
    series: '',
    splits: '',
    coordination: '',
    shards: 16,
    nodeId: '',
    leaseMs: 30_000,
  };
}

export class ConfigError extends Error {}

function convert(option: Option, raw: unknown): unknown {
  const where = `--${option.flag}`;
  switch (option.kind) {
    case 'string':
      return String(raw);
    case 'int': {
      const n = typeof raw === 'number' ? raw : Number(String(raw));
      if (!Number.isInteger(n) || n < 0) throw new ConfigError(`${where}: expected a non-negative integer, got ${String(raw)}`);
      return n;
    }
    case 'number': {
      const n = typeof raw === 'number' ? raw : Number(String(raw));
      if (!Number.isFinite(n) || n < 0 || String(raw).trim() === '') throw new ConfigError(`${where}: expected a non-negative number, got ${String(raw)}`);
      return n;
    }
    case 'bool': {
      if (typeof raw === 'boolean') return raw;
      const s = String(raw).toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(s)) return true;
      if (['0', 'false', 'no', 'off'].includes(s)) return false;
      throw new ConfigError(`${where}: expected a boolean, got ${String(raw)}`);
    }
    case 'list':
      return (Array.isArray(raw) ? raw.map(String) : String(raw).split(',')).map((s) => s.trim()).filter((s) => s !== '');
  }
}

function apply(config: Config, option: Option, raw: unknown): void {
  (config as unknown as Record<string, unknown>)[option.key] = convert(option, raw);
}

export function usage(): string {
  const lines = OPTIONS.map((o) => `  --${o.flag.padEnd(30)} ${o.env.padEnd(38)} ${o.help}`);
  return ['Usage: node dist/server/main.js [options]', '  --config FILE (GNOCCHI_CONFIG)  JSON file of options', ...lines].join('\n');
}

export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): Config {
  const config = defaultConfig();
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new ConfigError(`unexpected argument ${arg}`);
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    if (eq !== -1) flags.set(name, arg.slice(eq + 1));
    else if (name.startsWith('no-')) flags.set(name.slice(3), 'false');
    else {
      const option = OPTIONS.find((o) => o.flag === name);
      if (option?.kind === 'bool') flags.set(name, true);
      else if (i + 1 < argv.length) flags.set(name, argv[++i]!);
      else throw new ConfigError(`--${name} needs a value`);
    }
  }
  const file = flags.get('config') ?? env.GNOCCHI_CONFIG;
  flags.delete('config');
  if (typeof file === 'string' && file !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null) throw new ConfigError(`config file ${file}: expected an object`);
    for (const [k, v] of Object.entries(parsed)) {
      const option = OPTIONS.find((o) => o.key === k || o.flag === k);
      if (option === undefined) throw new ConfigError(`config file ${file}: unknown option ${k}`);
      apply(config, option, v);
    }
  }
  for (const option of OPTIONS) {
    const raw = env[option.env];
    if (raw !== undefined && raw !== '') apply(config, option, raw);
  }
  for (const [name, raw] of flags) {
    const option = OPTIONS.find((o) => o.flag === name);
    if (option === undefined) throw new ConfigError(`unknown option --${name}\n${usage()}`);
    apply(config, option, raw);
  }
  if (config.maxLimit < 1) throw new ConfigError('--max-limit must be at least 1');
  const bad = config.defaultAggregationMethods.filter((m) => !isValidAggregationMethod(m));
  if (bad.length > 0) throw new ConfigError(`--default-aggregation-methods: invalid ${bad.join(', ')}`);
  const unknown = config.builtinResourceTypes.filter((t) => !Object.hasOwn(BUILTIN_RESOURCE_TYPES, t));
  if (unknown.length > 0) {
    throw new ConfigError(
      `--builtin-resource-types: unknown ${unknown.join(', ')} (known: ${Object.keys(BUILTIN_RESOURCE_TYPES).join(', ')})`,
    );
  }
  if (!(AUTH_MODES as readonly string[]).includes(config.authMode)) {
    throw new ConfigError(`--auth-mode: expected one of ${AUTH_MODES.join(', ')}, got ${config.authMode}`);
  }
  if (config.statsdPort > 0 && config.statsdResourceId === '') {
    throw new ConfigError('--statsd-port needs --statsd-resource-id: the resource the statsd metrics belong to');
  }
  if (config.logInterval <= 0) throw new ConfigError('--log-interval must be above 0');
  if (config.statsdFlushDelay <= 0) throw new ConfigError('--statsd-flush-delay must be above 0');
  clusterSettings(config);
  return config;
}

/** The engine's share of the configuration. */
export function engineOptions(config: Config): EngineOptions {
  const cluster = clusterSettings(config);
  return {
    ...(cluster === undefined ? {} : { cluster }),
    dataDir: config.dataDir,
    defaultArchivePolicies: config.defaultArchivePolicies,
    defaultAggregationMethods: config.defaultAggregationMethods,
    workers: config.workers,
    processingIntervalMs: config.processingIntervalMs,
    reorderWindowMs: config.reorderWindowMs,
    settleAfterMs: config.settleAfterMs,
    mapSize: config.mapSize,
    maxBacklog: config.maxBacklog,
    readCacheSize: config.readCacheSize,
    processingNice: config.processingNice,
    splitCacheSize: config.splitCacheSize,
  };
}
