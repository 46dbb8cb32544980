// Processing workers run at a lower priority than the thread serving the
// API: their nice value is the configured one, the main thread's is not
// touched; 10 by default from the server's options.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../engine/engine.js';
import { engineOptions, loadConfig } from '../../server/config.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Nice value of each thread of this process, by thread id (field 19 of /proc/PID/task/TID/stat). */
function niceByThread(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // Fields after the command name (in parentheses, which may hold spaces).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(Number(tid), Number(fields[16]));
  }
  return out;
}

describe.runIf(process.platform === 'linux')('processing worker priority', () => {
  it('sets the workers nice value and leaves the main thread alone', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-nice-'));
    dirs.push(dataDir);
    const before = niceByThread();
    const engine = await Engine.open({ dataDir, workers: 2, processingNice: 7, processingIntervalMs: 10, defaultArchivePolicies: true, defaultAggregationMethods: ['mean'] });
    try {
      // Measures processed: the workers have loaded their module.
      const metric = await engine.index.createMetric({ id: engine.newMetricId(), name: null, unit: null, archivePolicyName: 'low', creator: 'x', resourceId: null });
      await engine.addMeasures(new Map([[metric.id, { timestamps: Float64Array.of(Date.now() * 1000), values: Float64Array.of(1) }]]));
      await engine.processor.drained();
      const after = niceByThread();
      const lowered = [...after].filter(([tid, nice]) => !before.has(tid) && nice === 7);
      expect(lowered.length).toBeGreaterThanOrEqual(1);
      expect(after.get(process.pid)).toBe(before.get(process.pid));
    } finally {
      await engine.close();
    }
  });
});

describe('the processing nice value', () => {
  it.each<[string, string[], NodeJS.ProcessEnv, number]>([
    ['10 by default', [], {}, 10],
    ['a flag', ['--processing-nice', '3'], {}, 3],
    ['an environment variable', [], { GNOCCHI_PROCESSING_NICE: '0' }, 0],
  ])('is %s, passed to the engine', (_how, argv, env, nice) => {
    expect(engineOptions(loadConfig(argv, env)).processingNice).toBe(nice);
  });
});
