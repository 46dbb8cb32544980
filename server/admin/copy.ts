/**
 * Copies with progress: LMDB's hot copy of an environment (consistent while
 * a server writes: it copies one read snapshot), and plain file copies.
 */
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { environmentPages } from '../../engine/db-stats.js';
import type { Progress } from '../../engine/progress.js';
import type { Storage } from '../../engine/storage.js';

/** The copy is written by LMDB on its own thread; its file is looked at this often. */
const POLL_MS = 200;

/**
 * Copies the environment into `dir` (which must exist) as `dir`/data.mdb;
 * `compact` leaves out free pages and rewrites the trees in order (slower,
 * smaller). Answers the copy's size in bytes.
 */
export async function copyEnvironment(storage: Storage, dir: string, compact: boolean, progress: Progress): Promise<number> {
  const pages = environmentPages(storage);
  const total = (compact ? pages.usedPages : pages.filePages) * pages.pageSize;
  const target = join(dir, 'data.mdb');
  const task = progress.task(compact ? 'compacting copy' : 'copying', total, 'bytes');
  let reported = 0;
  const poll = () => {
    let size: number;
    try {
      size = statSync(target).size;
    } catch {
      return; // not created yet
    }
    task.advance(size - reported);
    reported = size;
  };
  const timer = setInterval(poll, POLL_MS);
  try {
    await storage.root.backup(dir, compact);
  } finally {
    clearInterval(timer);
    poll();
    task.finish();
  }
  return statSync(target).size;
}

/** Copies `from` to `to`, which must not exist. */
export async function copyFile(from: string, to: string, progress: Progress): Promise<void> {
  const task = progress.task('copying', statSync(from).size, 'bytes');
  const count = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      task.advance(chunk.length);
      callback(null, chunk);
    },
  });
  try {
    await pipeline(createReadStream(from), count, createWriteStream(to, { flags: 'wx' }));
  } finally {
    task.finish();
  }
}
