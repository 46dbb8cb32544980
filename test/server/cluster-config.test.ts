import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { clusterSettings } from '../../server/cluster-config.js';
import { ConfigError, loadConfig } from '../../server/config.js';
import { spawnServer, tempDir } from '../reliability/harness.js';

const PG = 'postgresql://postgres@127.0.0.1:25432/gnocchi';
const REDIS = 'redis://127.0.0.1:26379';
const S3 = 's3://gnocchi:gnocchi-secret@127.0.0.1:27480/gnocchi';
const FULL = ['--index', PG, '--incoming', REDIS, '--series', REDIS, '--coordination', REDIS];

const settings = (argv: string[], env: NodeJS.ProcessEnv = {}) => clusterSettings(loadConfig(argv, env));

describe('cluster settings', () => {
  it('no engine URL: the embedded mode', () => {
    expect(settings([])).toBeUndefined();
  });

  it('every engine given: splits default to the series store, node id to host and port', () => {
    expect(settings([...FULL, '--port', '18101'])).toEqual({
      index: PG,
      incoming: REDIS,
      series: REDIS,
      shards: 16,
      nodeId: `${hostname()}:18101`,
      leaseMs: 30_000,
    });
  });

  it.each([
    ['the series Redis', REDIS, undefined],
    ['an S3 store over http', S3, S3],
    ['an S3 store over https, with options', 's3+https://k:s@store.example:443/bucket?region=eu-west-1&cache=0&janitor=60', 's3+https://k:s@store.example:443/bucket?region=eu-west-1&cache=0&janitor=60'],
    ["Swift's key, its colon escaped", 's3://test%3Atester:testing@127.0.0.1:28080/gnocchi', 's3://test%3Atester:testing@127.0.0.1:28080/gnocchi'],
  ])('takes --splits as %s', (_name, splits, kept) => {
    const cluster = settings([...FULL, '--splits', splits]);
    expect(cluster?.splits).toBe(kept);
    expect(cluster?.series).toBe(REDIS);
  });

  it('takes the URLs from the environment too', () => {
    const env = { GNOCCHI_INDEX: PG, GNOCCHI_INCOMING: REDIS, GNOCCHI_SERIES: REDIS, GNOCCHI_COORDINATION: REDIS, GNOCCHI_NODE_ID: 'n1', GNOCCHI_SHARDS: '4' };
    expect(settings([], env)).toMatchObject({ nodeId: 'n1', shards: 4, series: REDIS });
    expect(settings([], { ...env, GNOCCHI_SPLITS: S3 })).toMatchObject({ series: REDIS, splits: S3 });
  });

  it.each([
    ['coordination missing', ['--index', PG, '--incoming', REDIS, '--series', REDIS], /--coordination .*is missing/],
    ['only a Redis', ['--incoming', REDIS], /--index .*is missing; --series .*is missing; --coordination .*is missing/],
    ['index not PostgreSQL', [...FULL, '--index', REDIS], /--index: expected a postgresql:\/\/ or postgres:\/\/ URL/],
    ['incoming not Redis', [...FULL, '--incoming', PG], /--incoming: expected a redis:\/\/ URL/],
    ['not a URL', [...FULL, '--series', 'localhost:6379'], /--series: expected a redis:\/\/ URL|--series: not a URL/],
    ['coordination on another Redis', [...FULL, '--coordination', 'redis://127.0.0.1:26380'], /--coordination must be the Redis of --series/],
    ['splits on another Redis', [...FULL, '--splits', 'redis://127.0.0.1:26380'], /--splits: a Redis of sealed splits must be the Redis of --series/],
    ['splits of an unknown scheme', [...FULL, '--splits', 'swift://127.0.0.1:8080/gnocchi'], /--splits: expected a redis:\/\/ or s3:\/\/ or s3\+https:\/\/ URL/],
    ['splits with no bucket', [...FULL, '--splits', 's3://k:s@127.0.0.1:27480'], /--splits: the object store URL names no bucket/],
    ['splits with a path past the bucket', [...FULL, '--splits', 's3://k:s@127.0.0.1:27480/a/b'], /--splits: the bucket is one path segment/],
    ['splits with no credentials', [...FULL, '--splits', 's3://127.0.0.1:27480/gnocchi'], /--splits: the object store URL has no ACCESS:SECRET@ credentials/],
    ['splits with an unknown option', [...FULL, '--splits', `${S3}?tls=1`], /--splits: unknown option tls/],
    ['splits with a bad cache size', [...FULL, '--splits', `${S3}?cache=lots`], /--splits: cache must be an integer of at least 0/],
    ['only an object store', ['--splits', S3], /--index .*is missing; --incoming .*is missing; --series .*is missing; --coordination .*is missing/],
    ['no shard', [...FULL, '--shards', '0'], /--shards must be at least 1/],
    ['lease too short', [...FULL, '--lease', '10'], /--lease must be at least 1000 ms/],
  ])('refuses %s and says what is wrong', (_name, argv, message) => {
    expect(() => settings(argv)).toThrow(ConfigError);
    expect(() => settings(argv)).toThrow(message);
  });
});

describe('a node started with part of a cluster', () => {
  it('refuses to start, naming what is missing, before it touches any engine', async () => {
    const dir = tempDir('half-cluster');
    const server = await spawnServer(dir, ['--index', PG, '--incoming', REDIS]);
    const exit = await server.exited;
    rmSync(dir, { recursive: true, force: true });
    expect(exit.code).toBe(2);
    expect(server.stderr()).toMatch(/cluster mode: --series .*is missing; --coordination .*is missing/);
  });
});
