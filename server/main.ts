/**
 * Entry point: `node dist/server/main.js [--host H] [--port P] [--data-dir D]
 * [--max-limit N] [--no-default-archive-policies] ...` (see `--help`).
 */
import { FormatVersionMismatch } from '../engine/storage.js';
import { ConfigError, usage } from './config.js';
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

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(usage());
    return;
  }
  await serve(argv);
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof FormatVersionMismatch) {
    console.error(err.message);
    process.exit(2);
  }
  console.error(err);
  process.exit(1);
});
