/**
 * Entry point: `node dist/server/main.js [--host H] [--port P] [--data-dir D]
 * [--max-limit N] [--no-default-archive-policies] ...` (see `--help`).
 */
import { Engine } from '../engine/engine.js';
import { FormatVersionMismatch } from '../engine/storage.js';
import { buildApp } from './app.js';
import { ConfigError, engineOptions, loadConfig, usage } from './config.js';

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
  const config = loadConfig(argv, process.env);
  const engine = await Engine.open(engineOptions(config));
  const app = await buildApp({ engine, config });

  let closing: Promise<void> | undefined;
  const shutdown = (signal: string) => {
    closing ??= (async () => {
      app.log.info(`${signal}: shutting down`);
      // Stop accepting and finish in-flight requests, then let the
      // processor finish its batch, then close LMDB.
      await app.close();
      await engine.close();
    })().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  await app.listen({ host: config.host, port: config.port });
  console.log(`gnocchi-ts listening on http://${config.host}:${config.port} (data in ${config.dataDir})`);
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof FormatVersionMismatch) {
    console.error(err.message);
    process.exit(2);
  }
  console.error(err);
  process.exit(1);
});
