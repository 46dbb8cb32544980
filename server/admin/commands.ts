/** The subcommands of `gnocchi-ts` beside `serve`, and the overview `gnocchi-ts --help` prints. */
import { usage } from '../config.js';
import type { AdminCommand } from './args.js';
import { backup } from './backup.js';
import { check } from './check.js';
import { compact } from './compact.js';
import { restore } from './restore.js';
import { stats } from './stats.js';

export const ADMIN_COMMANDS: readonly AdminCommand[] = [check, stats, backup, restore, compact];

export const SERVE_HELP = [
  'Usage: gnocchi-ts [serve] [options]',
  '',
  'Runs the HTTP server on a data directory until SIGTERM or SIGINT. Options (flag, environment variable):',
  ...usage().split('\n').slice(1),
].join('\n');

export function overview(): string {
  const width = Math.max(...ADMIN_COMMANDS.map((c) => c.name.length), 'serve'.length);
  return [
    'Usage: gnocchi-ts [COMMAND] [options]     (gnocchi-ts COMMAND --help: its options)',
    '',
    'Commands:',
    `  ${'serve'.padEnd(width)}  run the server (the default: with no command, or options only)`,
    ...ADMIN_COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    SERVE_HELP,
  ].join('\n');
}
