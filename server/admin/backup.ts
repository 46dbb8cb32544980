/**
 * `gnocchi-ts backup`: LMDB's hot copy of a data directory's environment
 * into one file (the environment's data.mdb as of one snapshot), while a
 * server may keep writing. Measures accepted but not yet processed wait in
 * segment files beside the environment (engine/drivers/lmdb/segment-log.ts):
 * they are read first and put into the copy's `incoming_batches` under
 * their seqs, which a server started on the restored copy reads as pending
 * records of the previous layout. Read before the snapshot, a record
 * consumed meanwhile is one the copy's metric states say they hold, and is
 * skipped; one appended after the read is newer than the backup.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { incomingDir, readSegments } from '../../engine/drivers/lmdb/segment-log.js';
import { dbPath, openStorage } from '../../engine/storage.js';
import { DATA_DIR_HELP, PROGRESS_HELP, Refused, parseFlags, required, type AdminCommand } from './args.js';
import { copyEnvironment } from './copy.js';
import { dataFile, openDataDir } from './data-dir.js';
import { formatAmount, progressReporter } from './progress.js';

async function keepPending(copyDir: string, pending: [number, Uint8Array][]): Promise<void> {
  const copy = openStorage(copyDir);
  try {
    await copy.root.transaction(() => {
      for (const [seq, body] of pending) void copy.incomingBatches.put(seq, body as Buffer);
    });
  } finally {
    await copy.close();
  }
}

export const backup: AdminCommand = {
  name: 'backup',
  summary: 'consistent copy of the data into one file, while the server runs',
  help: [
    'Usage: gnocchi-ts backup [--data-dir D] --to FILE [--force] [--compact]',
    '',
    "Copies D's LMDB environment as of one snapshot (LMDB's hot copy: a server may keep running and",
    "writing) into FILE, a single file: the environment's data.mdb, with the measures accepted but not",
    'yet processed (read from D/incoming/ just before the snapshot). Restore it with',
    '`gnocchi-ts restore --from FILE --data-dir D2`. The copy is written next to FILE first and',
    'renamed into place once complete.',
    '',
    'Options:',
    DATA_DIR_HELP,
    '  --to FILE      the backup file to write; refused when it exists, unless --force',
    '  --force        replace an existing FILE',
    '  --compact      leave out free pages (smaller, slower; the same as `compact` does)',
    '',
    PROGRESS_HELP,
  ].join('\n'),
  async run(argv) {
    const flags = parseFlags(argv, { to: { type: 'string' }, force: { type: 'boolean' }, compact: { type: 'boolean' } });
    const dataDir = flags['data-dir'];
    const target = resolve(required(flags.to, 'to'));
    if (existsSync(target)) {
      if (statSync(target).isDirectory()) throw new Refused(`${target} is a directory; --to names the backup file`);
      if (!flags.force) throw new Refused(`${target} exists: give --force to replace it`);
    }
    const storage = openDataDir(dataDir, false);
    mkdirSync(dirname(target), { recursive: true });
    const staging = mkdtempSync(join(dirname(target), '.gnocchi-ts-backup-'));
    try {
      const pending: [number, Uint8Array][] = [];
      readSegments(incomingDir(dataDir), (seq, body) => pending.push([seq, body]));
      mkdirSync(dbPath(staging));
      await copyEnvironment(storage, dbPath(staging), flags.compact === true, progressReporter());
      if (pending.length > 0) await keepPending(staging, pending);
      renameSync(dataFile(staging), target);
      const size = statSync(target).size;
      console.log(`backed up ${dataDir} to ${target} (${formatAmount(size, 'bytes')})`);
    } finally {
      rmSync(staging, { recursive: true, force: true });
      await storage.close();
    }
    return 0;
  },
};
