import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const WORKER_SCRIPT = new URL('../../dist/engine/worker-script.js', import.meta.url).href;

/**
 * In a process started as the server is (`--max-semi-space-size=1`), a worker
 * made with these options (an ES module, as the process' code is) churns
 * short-lived objects; answers the most new space its heap reported, MB.
 */
function newSpaceMb(options: string): number {
  const churn = `
    import v8 from 'node:v8';
    import { parentPort } from 'node:worker_threads';
    let most = 0;
    for (let round = 0; round < 40; round++) {
      let kept = [];
      for (let i = 0; i < 100000; i++) { kept.push({ i }); if (kept.length > 5000) kept = []; }
      most = Math.max(most, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
    }
    parentPort.postMessage(most / 1048576);`;
  const script = `
    import { Worker } from 'node:worker_threads';
    import { youngGeneration } from ${JSON.stringify(WORKER_SCRIPT)};
    const worker = new Worker(${JSON.stringify(churn)}, { eval: true, ...${options} });
    worker.on('message', (mb) => { console.log(mb); worker.terminate(); });`;
  return Number(execFileSync(process.execPath, ['--max-semi-space-size=1', '--input-type=module', '-e', script]).toString());
}

describe('youngGeneration', () => {
  // V8's flag overrides a thread's resourceLimits while set: without the clearing, 2 MB whatever the limit.
  it.each([
    ['the flag\'s young generation with resourceLimits alone', '{ resourceLimits: { maxYoungGenerationSizeMb: 48 } }', (mb: number) => expect(mb).toBeLessThanOrEqual(2)],
    ['a larger one through youngGeneration', 'youngGeneration(48)', (mb: number) => expect(mb).toBeGreaterThan(2)],
    ['the flag\'s through youngGeneration(3)', 'youngGeneration(3)', (mb: number) => expect(mb).toBeLessThanOrEqual(2)],
  ])('gives a thread %s', (_name, options, check) => {
    check(newSpaceMb(options));
  });
});
