// A stock Prometheus (Debian's `prometheus`) scrapes GET /metrics: the
// target is up and the scraped counters are the server's. Skipped, saying
// so, where the binary is missing (.ci/run installs it).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetric, createPolicy, pushMeasures, startTestApp, type TestApp } from './helpers.js';
import { freePort } from './process-helpers.js';

const PROMETHEUS = process.env.PROMETHEUS_PATH ?? '/usr/bin/prometheus';
const present = existsSync(PROMETHEUS);
if (!present) console.warn(`${PROMETHEUS} is missing: the Prometheus scrape test is skipped (apt-get install prometheus)`);

let t: TestApp;
let prometheus: ChildProcess | undefined;
let exited: Promise<void>;
let dir: string;
let api: string;
let output = '';

beforeAll(async () => {
  if (!present) return;
  t = await startTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const target = `127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  dir = mkdtempSync(join(tmpdir(), 'gnocchi-ts-prometheus-'));
  writeFileSync(
    join(dir, 'prometheus.yml'),
    `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: gnocchi\n    static_configs:\n      - targets: ['${target}']\n`,
  );
  const port = await freePort();
  api = `http://127.0.0.1:${port}/api/v1`;
  prometheus = spawn(PROMETHEUS, [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  prometheus.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  prometheus.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  exited = new Promise((resolve) => prometheus!.once('exit', () => resolve()));
}, 30_000);

afterAll(async () => {
  if (!present) return;
  prometheus?.kill('SIGTERM');
  await exited;
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The value Prometheus holds for an instant query, once it has one satisfying `ok`. */
async function queryUntil(query: string, ok: (v: number) => boolean): Promise<number> {
  const deadline = Date.now() + 30_000;
  let last: unknown;
  for (;;) {
    try {
      const res = await fetch(`${api}/query?query=${encodeURIComponent(query)}`);
      last = await res.json();
      const value = Number((last as { data?: { result?: { value: [number, string] }[] } }).data?.result?.[0]?.value[1]);
      if (ok(value)) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${query}: ${JSON.stringify(last)}\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.skipIf(!present)('GET /metrics scraped by Prometheus', () => {
  it('is up, and the counters Prometheus holds are the server\'s', async () => {
    await createPolicy(t.app, { name: 'p', aggregation_methods: ['mean'], definition: [{ granularity: '1 second', points: 100 }] });
    const metric = await createMetric(t.app, { archive_policy_name: 'p' });
    const points = Array.from({ length: 17 }, (_, i) => ({ timestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(), value: i }));
    await pushMeasures(t.app, metric, points);
    expect(await queryUntil('up{job="gnocchi"}', (v) => v === 1)).toBe(1);
    expect(await queryUntil('gnocchi_measures_accepted_total', (v) => v === 17)).toBe(17);
    expect(await queryUntil('sum(gnocchi_http_request_duration_seconds_count{route="/v1/metric/:id/measures",method="POST",status="202"})', (v) => v === 1)).toBe(1);
    expect(await queryUntil('process_resident_memory_bytes', (v) => v > 0)).toBeGreaterThan(0);
  }, 60_000);
});
