/**
 * `gnocchi-ts serve`: the engine and the HTTP server on one data directory,
 * until SIGTERM or SIGINT.
 */
import { Engine } from '../engine/engine.js';
import { FAILPOINT_SPEC_ERROR } from '../engine/failpoints.js';
import { progressReporter } from './admin/progress.js';
import { buildApp } from './app.js';
import { ConfigError, engineOptions, loadConfig } from './config.js';
import { newStatsdStats, startStatsd } from './statsd.js';

export async function serve(argv: readonly string[]): Promise<void> {
  if (FAILPOINT_SPEC_ERROR !== undefined) throw new ConfigError(FAILPOINT_SPEC_ERROR);
  const config = loadConfig(argv, process.env);
  const engine = await Engine.open({ ...engineOptions(config), progress: progressReporter() });
  const statsdStats = config.statsdPort > 0 ? newStatsdStats() : undefined;
  const app = await buildApp({ engine, config, ...(statsdStats === undefined ? {} : { statsdStats }) });
  const statsd = statsdStats === undefined ? undefined : await startStatsd(engine, config, app.log, statsdStats);

  let closing: Promise<void> | undefined;
  const shutdown = (signal: string) => {
    closing ??= (async () => {
      app.log.info(`${signal}: shutting down`);
      // Stop accepting and finish in-flight requests, flush what statsd
      // gathered, then let the processor finish its batch, then close LMDB.
      await app.close();
      await statsd?.close();
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
  if (statsd !== undefined) {
    const { address, port } = statsd.address;
    console.log(`gnocchi-ts statsd listening on udp ${address}:${port} (receive buffer ${statsd.receiveBufferSize} bytes)`);
  }
}
