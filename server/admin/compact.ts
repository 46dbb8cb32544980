/**
 * `gnocchi-ts compact`: a compacting copy of a data directory's environment
 * (engine/repack.ts: free pages left out, pages filled) swapped in for the
 * original. LMDB never gives pages back to the file system: after large
 * deletions (or a backlog that was processed) the file keeps its size, and
 * only a compacting copy shrinks it; and trees grown at random places keep
 * their pages a half to two thirds full.
 */
import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { repackEnvironment } from '../../engine/repack.js';
import { DATA_DIR_HELP, PROGRESS_HELP, parseFlags, type AdminCommand } from './args.js';
import { dataFile, fileSize, openDataDir, refuseWhileOpen } from './data-dir.js';
import { formatAmount, progressReporter } from './progress.js';

export const compact: AdminCommand = {
  name: 'compact',
  summary: 'rewrite the database without its free pages (server stopped)',
  help: [
    'Usage: gnocchi-ts compact [--data-dir D]',
    '',
    "Writes a compacting copy of D's LMDB environment next to D/db (free pages left out, every database",
    'rewritten in key order with its pages filled, 8 KB pages), then swaps it in and reports the bytes',
    'before, after and saved.',
    '',
    'The server must be stopped: a server keeps the old file open and would go on writing to it. The',
    "command refuses when another process has D open, as seen in LMDB's reader table (checked before the",
    'copy and again before the swap). That table only shows processes of this host and pid namespace:',
    'do not compact a directory a server in another container or host may be using.',
    '',
    'Options:',
    DATA_DIR_HELP,
    '',
    PROGRESS_HELP,
  ].join('\n'),
  async run(argv) {
    const flags = parseFlags(argv, {});
    const dataDir = flags['data-dir'];
    const storage = openDataDir(dataDir, false);
    const before = fileSize(dataFile(dataDir));
    let after: number;
    let staging: string | undefined;
    try {
      try {
        refuseWhileOpen(storage, dataDir, 'compacting it');
        staging = mkdtempSync(join(dataDir, '.compacting-'));
        after = await repackEnvironment(storage, staging, progressReporter());
        refuseWhileOpen(storage, dataDir, 'compacting it');
      } finally {
        await storage.close();
      }
      // One rename: D holds either the old file or the new one, whatever happens.
      renameSync(join(staging, 'data.mdb'), dataFile(dataDir));
    } finally {
      if (staging !== undefined) rmSync(staging, { recursive: true, force: true });
    }
    const saved = before - after;
    console.log(
      `compacted ${dataDir}: ${formatAmount(before, 'bytes')} before, ${formatAmount(after, 'bytes')} after, ` +
        `${formatAmount(saved, 'bytes')} saved (${before === 0 ? 0 : ((100 * saved) / before).toFixed(1)}%)` +
        ` [${before} -> ${after} bytes]`,
    );
    return 0;
  },
};
