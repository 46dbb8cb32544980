/**
 * The file piscina loads in each worker thread, as CommonJS: piscina loads
 * task files with require(), and for an ES module Node 20 instantiates it
 * synchronously inside require(), where a worker terminated mid-load (a
 * shutdown right after startup) aborts the whole process with a V8 fatal
 * error. A dynamic import() of the real task module (named in workerData)
 * fails that worker gracefully instead.
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';

const task: Promise<{ default: (input: unknown) => unknown }> = import((workerData as { module: string }).module);

async function run(input: unknown): Promise<unknown> {
  return (await task).default(input);
}

// Piscina awaits a default export that is not a function before the thread
// takes tasks, so the module loads at start-up. Exported as the function itself, it
// loaded during the first task: an idle thread of a pool with atomics blocks
// in Atomics.wait, where the import makes no progress, so the first batch
// after start-up paid ~0.2-0.4 s of module loading. A module that fails to
// load fails each task with its error, as before. Once it settled, the thread
// says so (the key is engine/worker-script.ts' MODULE_SETTLED): a pool is not
// destroyed before, as terminating a thread while Node loads a native addon
// aborts the process.
export default task.then(
  () => run,
  () => run,
).finally(() => parentPort?.postMessage({ moduleSettled: threadId }));
