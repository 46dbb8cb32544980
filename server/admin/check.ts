/** `gnocchi-ts check`: engine/check.ts on a data directory, its faults as a report and the exit code. */
import { checkStorage, type CheckReport } from '../../engine/check.js';
import { DATA_DIR_HELP, PROGRESS_HELP, parseFlags, type AdminCommand } from './args.js';
import { readDataDir } from './data-dir.js';
import { progressReporter } from './progress.js';

function render(report: CheckReport, dataDir: string): string {
  const read = Object.entries(report.checked).map(([db, n]) => `${db} ${n}`).join(', ');
  const lines = report.faults.map((f) => `FAULT ${f.kind} ${f.db} ${JSON.stringify(f.key)}: ${f.reason}`);
  if (report.faultCount > report.faults.length) lines.push(`... and ${report.faultCount - report.faults.length} more faults`);
  const verdict = report.faultCount === 0 ? 'clean' : `${report.faultCount} fault${report.faultCount === 1 ? '' : 's'}`;
  lines.push(`check ${dataDir}: ${verdict} (records read: ${read || 'none'})`);
  return lines.join('\n');
}

export const check: AdminCommand = {
  name: 'check',
  summary: 'verify splits, metric states, chunks and resource indexes (read-only; safe beside a running server)',
  help: [
    'Usage: gnocchi-ts check [--data-dir D] [--json]',
    '',
    'Reads every record of the data directory, read-only and in one LMDB snapshot (a running server',
    'may keep writing), and checks that:',
    '  - every sealed split decodes and matches its CRC, lies in its window, and belongs to a known',
    '    metric and one of its policy\'s granularities;',
    '  - every metric state decodes, agrees with its open-split and tail chunks and with its oldest',
    '    sealed split, and every chunk belongs to a state;',
    '  - every metric\'s archive policy exists; every resource\'s type exists;',
    '  - resources_by_revision_start, resource_values and resource_history_values hold exactly the',
    '    entries rebuilt from resources and their history; each named metric is named so on its resource,',
    '    and each resource names only such metrics.',
    '',
    'Exit status: 0 clean (a summary is printed), 1 faults (one line each: FAULT kind database key: reason),',
    '2 D is not a data directory of this release.',
    '',
    'Options:',
    DATA_DIR_HELP,
    '  --json         the report as JSON: {"faults": [{kind, db, key, reason}], "faultCount", "checked"}',
    '',
    PROGRESS_HELP,
  ].join('\n'),
  async run(argv) {
    const flags = parseFlags(argv, { json: { type: 'boolean' } });
    const dataDir = flags['data-dir'];
    const report = await readDataDir(dataDir, (storage) => checkStorage(storage, progressReporter()));
    console.log(flags.json ? JSON.stringify(report, null, 2) : render(report, dataDir));
    return report.faultCount === 0 ? 0 : 1;
  },
};
