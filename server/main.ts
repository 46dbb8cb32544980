#!/usr/bin/env -S node --max-semi-space-size=1 --heap-growing-percent=100
/**
 * Entry point of `gnocchi-ts` (package.json `bin`): `gnocchi-ts [serve]
 * [--host H] [--port P] [--data-dir D] ...` runs the server, as
 * `node dist/server/main.js --port P` always did; `gnocchi-ts check|stats|
 * backup|restore|compact ...` are the admin commands (server/admin/). See
 * `--help`. Started with `--max-semi-space-size=1 --heap-growing-percent=100`
 * (here and by `npm start`): a young generation of 2 MB instead of V8's 32
 * in every thread, and a full collection once the old generation has doubled
 * its live data rather than grown up to 4x, hold the peak of a burst lower
 * (README, Memory).
 */
import { FormatVersionMismatch } from '../engine/storage.js';
import { exitCodeOf, UsageError } from './admin/args.js';
import { ADMIN_COMMANDS, overview, SERVE_HELP } from './admin/commands.js';
import { ConfigError } from './config.js';
import { EngineUnavailable, SeriesFormatTooNew } from '../engine/errors.js';
import { serve } from './serve.js';

// lmdb-js also rejects an internal promise of a failed commit (a full disk)
// that nobody awaits; the caller already got its own rejection (a 507, or a
// processing error that is retried), so this one must not kill the server.
process.on('unhandledRejection', (reason) => {
  if (reason instanceof Error && 'commitError' in reason) {
    console.error(`storage: ${reason.message}`);
    return;
  }
  throw reason;
});

const wantsHelp = (argv: readonly string[]) => argv.includes('--help') || argv.includes('-h');

/** The exit code of an admin command; undefined while the server runs. */
async function main(): Promise<number | undefined> {
  const argv = process.argv.slice(2);
  const [first, ...rest] = argv;
  if (first === undefined || first.startsWith('-') || first === 'serve') {
    const options = first === 'serve' ? rest : argv;
    if (wantsHelp(options)) {
      console.log(first === 'serve' ? SERVE_HELP : overview());
      return 0;
    }
    await serve(options);
    return undefined;
  }
  if (first === 'help') {
    console.log(ADMIN_COMMANDS.find((c) => c.name === rest[0])?.help ?? (rest[0] === 'serve' ? SERVE_HELP : overview()));
    return 0;
  }
  const command = ADMIN_COMMANDS.find((c) => c.name === first);
  if (command === undefined) throw new UsageError(`unknown command ${first}\n\n${overview()}`);
  if (wantsHelp(rest)) {
    console.log(command.help);
    return 0;
  }
  return command.run(rest);
}

main().then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (err: unknown) => {
    // A cluster engine down or of a newer format at start-up: say which, rather than a stack.
    if (err instanceof ConfigError || err instanceof FormatVersionMismatch || err instanceof SeriesFormatTooNew || err instanceof EngineUnavailable) {
      console.error(err.message);
      process.exit(2);
    }
    const code = exitCodeOf(err);
    if (code !== undefined) {
      console.error(`gnocchi-ts: ${(err as Error).message}`);
      process.exit(code);
    }
    console.error(err);
    process.exit(1);
  },
);
