/**
 * The file piscina loads in each worker thread, as CommonJS: piscina loads
 * task files with require(), and for an ES module Node 20 instantiates it
 * synchronously inside require(), where a worker terminated mid-load (a
 * shutdown right after startup) aborts the whole process with a V8 fatal
 * error. A dynamic import() of the real task module (named in workerData)
 * fails that worker gracefully instead.
 */
import { workerData } from 'node:worker_threads';

const task: Promise<{ default: (input: unknown) => unknown }> = import((workerData as { module: string }).module);

export = async function run(input: unknown): Promise<unknown> {
  return (await task).default(input);
};
