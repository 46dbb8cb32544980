/**
 * A data directory as the admin commands find it: opened read-only (so a
 * running server is not disturbed), recognised as ours by its LMDB
 * environment under `db/` and the `format` in its meta database, and the
 * processes that have it open, from LMDB's reader table.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FORMAT_VERSION, dbPath, openStorage, type Storage } from '../../engine/storage.js';
import { NotADataDir, Refused } from './args.js';

/** The one file of an LMDB environment that holds data (lock.mdb only coordinates). */
export function dataFile(dataDir: string): string {
  return join(dbPath(dataDir), 'data.mdb');
}

export function holdsData(dataDir: string): boolean {
  return existsSync(dataFile(dataDir));
}

export function fileSize(path: string): number {
  return statSync(path).size;
}

/** The magic of LMDB's meta page, after its page header (24 bytes in the LMDB lmdb-js builds). */
const LMDB_MAGIC = 0xbeefc0de;
const MAGIC_OFFSET = 24;

/** Whether `file` starts with an LMDB meta page: LMDB is not to be trusted with any other file (it may crash). */
export function looksLikeLmdb(file: string): boolean {
  const head = Buffer.alloc(MAGIC_OFFSET + 4);
  const fd = openSync(file, 'r');
  try {
    return readSync(fd, head, 0, head.length, 0) === head.length && head.readUInt32LE(MAGIC_OFFSET) === LMDB_MAGIC;
  } finally {
    closeSync(fd);
  }
}

/**
 * `dataDir`'s storage, read-only; `currentFormat`: only in the format this
 * release writes (check and stats read its layout; copies do not care).
 */
export function openDataDir(dataDir: string, currentFormat: boolean): Storage {
  if (!holdsData(dataDir)) throw new NotADataDir(dataDir, 'no LMDB environment in its db/');
  if (!looksLikeLmdb(dataFile(dataDir))) throw new NotADataDir(dataDir, 'its db/data.mdb is not an LMDB file');
  let storage: Storage;
  try {
    storage = openStorage(dataDir, { readOnly: true });
  } catch (err) {
    throw new NotADataDir(dataDir, `its db/ does not open as LMDB (${(err as Error).message})`);
  }
  // Read-only, lmdb-js answers undefined for a named database the file lacks.
  const missing = Object.entries(storage).filter(([, db]) => db === undefined).map(([name]) => name);
  const format = (storage.meta as Storage['meta'] | undefined)?.get('format');
  let problem: string | undefined;
  if (format === undefined) problem = 'its LMDB environment has no format in meta';
  else if (currentFormat && (format !== FORMAT_VERSION || missing.length > 0)) {
    problem = `it holds on-disk format ${String(format)}, this command reads format ${FORMAT_VERSION} (start the server on it once to upgrade it)`;
  }
  if (problem !== undefined) {
    void storage.close();
    throw new NotADataDir(dataDir, problem);
  }
  return storage;
}

/** `read` over D opened read-only in the current format, closed after. */
export async function readDataDir<T>(dataDir: string, read: (storage: Storage) => T): Promise<T> {
  const storage = openDataDir(dataDir, true);
  try {
    return read(storage);
  } finally {
    await storage.close();
  }
}

/**
 * Ids of the other processes that have the environment open. LMDB keeps a
 * reader slot per process that has read (a server reads at start, and its
 * slot stays while it runs); slots of processes that died are cleared
 * first. A process on another host or in another pid namespace sharing
 * the directory would not be seen.
 */
export function otherProcesses(storage: Storage): number[] {
  storage.root.readerCheck();
  const pids = storage.root
    .readerList()
    .split('\n')
    .slice(1)
    .map((line) => Number(line.trim().split(/\s+/)[0]))
    .filter((pid) => Number.isInteger(pid) && pid > 0 && pid !== process.pid);
  return [...new Set(pids)];
}

/** Refuses when another process (a server) has the environment open. */
export function refuseWhileOpen(storage: Storage, dataDir: string, what: string): void {
  const pids = otherProcesses(storage);
  if (pids.length > 0) {
    throw new Refused(`${dataDir} is open in process ${pids.join(', ')} (a running server?): stop it before ${what}`);
  }
}
