/**
 * Shared plumbing for the HTTP tests: a real Fastify app on a real engine in
 * a throw-away data directory, driven through `app.inject()`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { Engine } from '../../engine/engine.js';
import { buildApp } from '../../server/app.js';
import { defaultConfig, engineOptions, type Config } from '../../server/config.js';

export interface TestApp {
  app: FastifyInstance;
  engine: Engine;
  config: Config;
  close(): Promise<void>;
}

export async function startTestApp(overrides: Partial<Config> = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-ts-server-test-'));
  const config: Config = {
    ...defaultConfig(),
    dataDir,
    defaultArchivePolicies: false,
    workers: 0,
    maxLimit: 7,
    processingIntervalMs: 10,
    logLevel: 'silent',
    ...overrides,
  };
  const engine = await Engine.open(engineOptions(config));
  let app: FastifyInstance;
  try {
    app = await buildApp({ engine, config });
  } catch (err) {
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  let closed = false;
  return {
    app,
    engine,
    config,
    async close() {
      if (closed) return;
      closed = true;
      try {
        await app.close();
        await engine.close();
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

export type Headers = Record<string, string>;

const basic = (user: string): Headers => ({ authorization: 'basic ' + Buffer.from(`${user}:`).toString('base64') });

/** The user `admin`, who has the admin role in basic mode. */
export const ADMIN: Headers = basic('admin');
/** A plain user. */
export const USER: Headers = basic('foobar');

export interface JsonResponse {
  status: number;
  /** Parsed JSON, or undefined when the body is empty or not JSON. */
  body: any;
  headers: Record<string, string | string[] | number | undefined>;
  /** The raw text of the body. */
  text: string;
}

function parse(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * One request with `Content-Type: application/json` and `Accept:
 * application/json` (as Gnocchi, the server answers errors in JSON only to
 * clients that accept it); the body, when given, is JSON-encoded unless it is
 * already a string. Headers given replace the defaults (pass
 * `{ 'content-type': ... }` or `{ accept: ... }` to test other media types).
 */
export async function json(
  app: FastifyInstance,
  method: InjectOptions['method'],
  url: string,
  body?: unknown,
  headers: Headers = ADMIN,
): Promise<JsonResponse> {
  const options: InjectOptions = {
    method,
    url,
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
  };
  if (body !== undefined) options.payload = typeof body === 'string' ? body : JSON.stringify(body);
  const res = await app.inject(options);
  return { status: res.statusCode, body: parse(res.body), headers: res.headers, text: res.body };
}

/** Creates an archive policy as admin and checks it was created. */
export async function createPolicy(app: FastifyInstance, policy: Record<string, unknown>): Promise<any> {
  const res = await json(app, 'POST', '/v1/archive_policy', policy);
  if (res.status !== 201) throw new Error(`cannot create policy: ${res.status} ${res.text}`);
  return res.body;
}

/** A server whose metrics all get policy `low` (1 hour), with InfluxDB database `db1` created. */
export async function startInfluxTestApp(): Promise<TestApp> {
  const t = await startTestApp();
  await createPolicy(t.app, { name: 'low', definition: [{ granularity: '1 hour', points: 100000 }] });
  await json(t.app, 'POST', '/v1/archive_policy_rule', { name: 'all', metric_pattern: '*', archive_policy_name: 'low' });
  const created = await json(t.app, 'POST', '/v1/influxdb/query?q=create+database+db1');
  if (created.status !== 204) throw new Error(`cannot create database db1: ${created.status} ${created.text}`);
  return t;
}

/** Creates a metric and returns its id. */
export async function createMetric(
  app: FastifyInstance,
  body: Record<string, unknown>,
  headers: Headers = ADMIN,
): Promise<string> {
  const res = await json(app, 'POST', '/v1/metric', body, headers);
  if (res.status !== 201) throw new Error(`cannot create metric: ${res.status} ${res.text}`);
  return res.body.id as string;
}

/** Pushes measures and checks the 202. */
export async function pushMeasures(app: FastifyInstance, metricId: string, measures: unknown): Promise<void> {
  const res = await json(app, 'POST', `/v1/metric/${metricId}/measures`, measures);
  if (res.status !== 202) throw new Error(`cannot push measures: ${res.status} ${res.text}`);
}

/** Reads aggregated measures with `refresh=true` plus the given query. */
export async function readMeasures(app: FastifyInstance, metricId: string, query = ''): Promise<JsonResponse> {
  const sep = query === '' ? '' : '&';
  return json(app, 'GET', `/v1/metric/${metricId}/measures?refresh=true${sep}${query}`);
}
