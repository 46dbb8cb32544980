/** `gnocchi-ts stats`: engine/db-stats.ts on a data directory, as a table or JSON. */
import { storageStats, type StorageStats } from '../../engine/db-stats.js';
import { DATA_DIR_HELP, PROGRESS_HELP, parseFlags, type AdminCommand } from './args.js';
import { readDataDir } from './data-dir.js';
import { formatAmount, progressReporter } from './progress.js';

const bytes = (n: number) => formatAmount(n, 'bytes');

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '));
}

function render(s: StorageStats, dataDir: string): string {
  const used = s.usedPages * s.pageSize;
  const share = (n: number) => (used === 0 ? '-' : `${((100 * n) / used).toFixed(1)}%`);
  const databases = [...s.databases].sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name));
  const points = s.points;
  return [
    `${dataDir}: file ${bytes(s.fileBytes)}, page ${s.pageSize} B`,
    `pages: ${s.filePages} in the file, ${s.usedPages} used (${bytes(used)}), ${s.freePages} free`,
    `incoming: ${s.incoming.segments} segment files, ${bytes(s.incoming.bytes)} (measures not yet processed, and consumed ones until their whole segment is)`,
    '',
    ...table([
      ['database', 'records', 'key bytes', 'value bytes', 'depth', 'branch', 'leaf', 'overflow', 'page bytes', 'share'],
      ...databases.map((d) => [
        d.name,
        String(d.records),
        bytes(d.keyBytes),
        bytes(d.valueBytes),
        String(d.treeDepth),
        String(d.branchPages),
        String(d.leafPages),
        String(d.overflowPages),
        bytes(d.bytes),
        share(d.bytes),
      ]),
    ]),
    '',
    `metrics ${s.metrics}, resources ${s.resources}, sealed splits ${s.splits}`,
    `stored points ${s.storedPoints}: sealed split rows ${points.sealedRows}, open split rows ${points.openRows}, tail points ${points.tailPoints}` +
      (points.unreadableSplits > 0 ? ` (${points.unreadableSplits} splits unreadable: run check)` : ''),
    `bytes per stored point: ${s.bytesPerPoint === null ? '-' : s.bytesPerPoint.toFixed(2)} (used page bytes / stored points)`,
  ].join('\n');
}

export const stats: AdminCommand = {
  name: 'stats',
  summary: 'per-database records, bytes and pages, free pages, counts and bytes per stored point',
  help: [
    'Usage: gnocchi-ts stats [--data-dir D] [--json]',
    '',
    'Read-only (safe beside a running server). For each LMDB named database: records, key and value',
    'bytes, B-tree depth and pages (branch, leaf, overflow) and their bytes and share of the pages in',
    'use; for the file: its size, its pages, those in use and those free; the incoming segment files',
    '(D/incoming/: measures accepted and not yet processed); counts of metrics, resources',
    'and sealed splits; the points stored (rows of sealed and open splits, raw back-window points) and',
    'the bytes of pages in use per stored point.',
    '',
    'Options:',
    DATA_DIR_HELP,
    '  --json         the figures as JSON (all sizes in bytes)',
    '',
    PROGRESS_HELP,
  ].join('\n'),
  async run(argv) {
    const flags = parseFlags(argv, { json: { type: 'boolean' } });
    const dataDir = flags['data-dir'];
    const s = await readDataDir(dataDir, (storage) => storageStats(storage, dataDir, progressReporter()));
    console.log(flags.json ? JSON.stringify({ dataDir, ...s }, null, 2) : render(s, dataDir));
    return 0;
  },
};
