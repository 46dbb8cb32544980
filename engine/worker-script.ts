/**
 * Piscina options that run workers/NAME.js (an ES module) through the
 * CommonJS entry workers/esm-entry.cjs (see there why). From the TypeScript
 * sources (tests) the build's copies are used.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import type { ResourceLimits } from 'node:worker_threads';
import type { Piscina } from 'piscina';

const here = import.meta.url;
const workers = here.endsWith('.ts') ? new URL('../dist/workers/', here) : new URL('../workers/', here);

/** `data` is passed on to the module as the rest of workerData. */
export function workerScript<D extends object>(name: string, data?: D): { filename: string; workerData: { module: string } & D } {
  return { filename: new URL('esm-entry.cjs', workers).href, workerData: { ...(data as D), module: new URL(`${name}.js`, workers).href } };
}

/**
 * Options that give a pool's threads a young generation of `mb` (V8's
 * resourceLimits). V8's `--max-semi-space-size`, which the server is started
 * with for its main thread (see README), overrides a thread's resourceLimits
 * while it is set: it is cleared, which changes no isolate already made, so
 * that each pool sizes its own threads.
 */
export function youngGeneration(mb: number): { resourceLimits: ResourceLimits } {
  setFlagsFromString('--max-semi-space-size=0');
  return { resourceLimits: { maxYoungGenerationSizeMb: mb } };
}

/** The key of the message a worker entry posts once its task module has loaded or failed to (workers/esm-entry.cts). */
const MODULE_SETTLED = 'moduleSettled';

/** How long a destroy waits for threads still loading their module; one that never settles is terminated all the same. */
const LOAD_PATIENCE_MS = 10_000;
const LOAD_POLL_MS = 10;

/**
 * A destroy of `pool` that first waits for each of its threads to have
 * loaded its task module. A thread terminated while Node registers a native
 * addon its module imports (lmdb's) aborts the whole process (FATAL ERROR:
 * Error::ThrowAsJavaScriptException napi_throw): a server stopped within a
 * second of starting died so about once in 40 on a loaded machine, since
 * threads load their module at start-up (esm-entry.cts). Call it as the
 * pool is made, so that no thread's message is missed.
 */
export function destroyOnceLoaded(pool: Piscina): () => Promise<void> {
  const settled = new Set<number>();
  pool.on('message', (message: unknown) => {
    if (typeof message === 'object' && message !== null && MODULE_SETTLED in message) settled.add((message as Record<string, number>)[MODULE_SETTLED]!);
  });
  return async () => {
    const deadline = performance.now() + LOAD_PATIENCE_MS;
    while (pool.threads.some((thread) => !settled.has(thread.threadId)) && performance.now() < deadline) await sleep(LOAD_POLL_MS);
    await pool.destroy();
  };
}
