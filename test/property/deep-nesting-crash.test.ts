// Pins a defect fast-check found: a resource filter nested just below the
// depth at which the recursive validator overflowed did not get a 500 -- it
// aborted the whole Node process ("FATAL ERROR: RegExpCompiler Allocation
// failed - process out of memory", V8 compiling a regexp with the stack
// nearly exhausted). POST /v1/search/resource/<type> with '{"not":' x 3908 +
// '{"=":{"id":"x"}}' + '}' x 3908, sent after the depths 10000, 1, 5001,
// 2501, 3751, 4376, 4064, killed the server. formats/nesting.ts now refuses
// such nesting before any recursion.
//
// The server runs in a child process (from the compiled dist/, which
// `npm test` builds first) so that an abort cannot take the test runner
// with it. The property: across depths around the old stack limit, the
// server process survives and keeps answering /healthcheck.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const dist = resolve(import.meta.dirname, '../../dist');

const script = (depths: number[]) => `
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const { Engine } = await import(${JSON.stringify(join(dist, 'engine/engine.js'))});
const { buildApp } = await import(${JSON.stringify(join(dist, 'server/app.js'))});
const { defaultConfig } = await import(${JSON.stringify(join(dist, 'server/config.js'))});
const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-ts-deep-'));
const config = { ...defaultConfig(), dataDir, defaultArchivePolicies: false, workers: 0, logLevel: 'silent' };
const engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: config.defaultAggregationMethods, workers: 0, processingIntervalMs: config.processingIntervalMs, mapSize: config.mapSize });
const app = await buildApp({ engine, config });
const headers = { 'content-type': 'application/json', accept: 'application/json', authorization: 'basic ' + Buffer.from('admin:').toString('base64') };
for (const depth of ${JSON.stringify(depths)}) {
  const payload = '{"not":'.repeat(depth) + '{"=":{"id":"x"}}' + '}'.repeat(depth);
  const res = await app.inject({ method: 'POST', url: '/v1/search/resource/generic', headers, payload });
  const health = await app.inject({ method: 'GET', url: '/healthcheck' });
  console.log(JSON.stringify({ depth, status: res.statusCode, health: health.statusCode }));
}
await app.close();
await engine.close();
console.log('SURVIVED');
`;

describe('deep nesting near the stack limit', () => {
  it('does not abort the server process', () => {
    expect(existsSync(join(dist, 'server/app.js')), 'run `npx tsc -p tsconfig.json` first').toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'gnocchi-ts-deep-script-'));
    try {
      const file = join(dir, 'probe.mjs');
      // The depths fast-check tried, in order, when the worker died (the
      // abort needs a request that overflows first, then one that ends just
      // short of the limit), then a sweep around the limit.
      const depths = [10_000, 1, 5001, 2501, 3751, 4376, 4064, 3908];
      for (let d = 3000; d <= 6000; d += 50) depths.push(d);
      writeFileSync(file, script(depths));
      const run = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 60_000 });
      const fatal = /FATAL ERROR[^\n]*/.exec(run.stderr)?.[0];
      const lastDepth = run.stdout.trim().split('\n').filter((l) => l.startsWith('{')).pop();
      expect(
        { survived: run.stdout.includes('SURVIVED'), signal: run.signal, fatal },
        `child died after ${lastDepth ?? 'no request'}; stderr: ${run.stderr.slice(0, 300)}`,
      ).toEqual({ survived: true, signal: null, fatal: undefined });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
