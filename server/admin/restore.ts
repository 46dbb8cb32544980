/**
 * `gnocchi-ts restore`: a backup file (see backup.ts) becomes a data
 * directory's environment. It is copied and opened beside the current one
 * first, so a bad file leaves D as it was.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { incomingDir } from '../../engine/drivers/lmdb/segment-log.js';
import { dbPath } from '../../engine/storage.js';
import { DATA_DIR_HELP, NotADataDir, PROGRESS_HELP, Refused, parseFlags, required, type AdminCommand } from './args.js';
import { copyFile } from './copy.js';
import { dataFile, holdsData, looksLikeLmdb, openDataDir, refuseWhileOpen } from './data-dir.js';
import { progressReporter } from './progress.js';

/** Refuses while a server has `dataDir` open. */
async function refuseWhileServed(dataDir: string): Promise<void> {
  const storage = openDataDir(dataDir, false);
  try {
    refuseWhileOpen(storage, dataDir, 'restoring into it');
  } finally {
    await storage.close();
  }
}

export const restore: AdminCommand = {
  name: 'restore',
  summary: "put a backup file in place as a data directory's database",
  help: [
    'Usage: gnocchi-ts restore --from FILE [--data-dir D] [--force]',
    '',
    'Makes the backup FILE (written by `gnocchi-ts backup`) the database of D (D/db/data.mdb); a server',
    'started on D then answers with the backed-up data. FILE is copied next to D/db and checked to be',
    "a gnocchi-ts database before D's current database, if any, is replaced.",
    '',
    'Options:',
    '  --from FILE    the backup file',
    DATA_DIR_HELP,
    '  --force        replace the data D already holds (refused while a server has D open)',
    '',
    PROGRESS_HELP,
  ].join('\n'),
  async run(argv) {
    const flags = parseFlags(argv, { from: { type: 'string' }, force: { type: 'boolean' } });
    const dataDir = flags['data-dir'];
    const from = required(flags.from, 'from');
    if (!existsSync(from) || !statSync(from).isFile() || !looksLikeLmdb(from)) throw new Refused(`${from} is not a gnocchi-ts backup: not an LMDB data file`);
    const replacing = holdsData(dataDir);
    if (replacing) {
      if (!flags.force) throw new Refused(`${dataDir} already holds data (${dataFile(dataDir)}): give --force to replace it`);
      await refuseWhileServed(dataDir);
    }
    mkdirSync(dataDir, { recursive: true });
    // A data directory of its own inside D, so that the copy opens as one before it moves in.
    const staging = mkdtempSync(join(dataDir, '.restoring-'));
    try {
      mkdirSync(dbPath(staging));
      await copyFile(from, dataFile(staging), progressReporter());
      try {
        await openDataDir(staging, false).close();
      } catch (err) {
        if (err instanceof NotADataDir) throw new Refused(`${from} is not a gnocchi-ts backup: ${err.reason}`);
        throw err;
      }
      mkdirSync(dbPath(dataDir), { recursive: true });
      // The former data's pending measures are not the backup's (the backup's own are in its file).
      if (existsSync(incomingDir(dataDir))) renameSync(incomingDir(dataDir), join(staging, 'former-incoming'));
      // One rename: D holds either its former data or the backup, whatever happens.
      renameSync(dataFile(staging), dataFile(dataDir));
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
    console.log(`restored ${from} into ${dataDir}${replacing ? ' (its former data is gone)' : ''}`);
    return 0;
  },
};
