import { Piscina } from 'piscina';
import { BroadcastChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { destroyOnceLoaded } from '../../engine/worker-script.js';

const entry = new URL('../../dist/workers/esm-entry.cjs', import.meta.url).href;
const fixture = new URL('./fixtures/', import.meta.url).href;

let pool: Piscina | undefined;
afterEach(async () => {
  await pool?.destroy();
  pool = undefined;
});

describe('the worker entry', () => {
  it.each(['sync', 'disabled'] as const)('loads the task module at start-up, before any task, with atomics %s', async (atomics) => {
    const name = `esm-entry-${atomics}-${process.pid}`;
    const channel = new BroadcastChannel(name);
    const loaded = new Promise((resolve) => (channel.onmessage = (event) => resolve((event as { data: unknown }).data)));
    try {
      pool = new Piscina({ filename: entry, workerData: { module: `${fixture}announce-load.mjs`, channel: name }, minThreads: 1, maxThreads: 1, atomics });
      // An idle thread with atomics blocks in Atomics.wait: a module still loading then makes no progress until a task comes.
      expect(await loaded).toBe('loaded');
      expect(await pool.run('echo')).toBe('echo');
    } finally {
      channel.close();
    }
  });

  it('is destroyed, through destroyOnceLoaded, only once its threads have loaded their module', async () => {
    // Terminated while Node registers a native addon (lmdb's), a thread aborts the whole process.
    const name = `esm-entry-slow-${process.pid}`;
    const channel = new BroadcastChannel(name);
    let loaded = false;
    channel.onmessage = () => (loaded = true);
    try {
      const slow = new Piscina({ filename: entry, workerData: { module: `${fixture}slow-load.mjs`, channel: name, loadMs: 300 }, minThreads: 2, maxThreads: 2, atomics: 'sync' });
      const destroy = destroyOnceLoaded(slow);
      await destroy();
      // The announcement crosses threads: give it a moment once the pool is gone.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(loaded).toBe(true);
    } finally {
      channel.close();
    }
  });

  it('fails every task with the error of a module that does not load, and keeps the pool up', async () => {
    pool = new Piscina({ filename: entry, workerData: { module: `${fixture}missing.mjs` }, minThreads: 1, maxThreads: 1, atomics: 'sync' });
    for (let i = 0; i < 2; i++) await expect(pool.run('echo')).rejects.toThrow(/missing\.mjs/);
  });
});
