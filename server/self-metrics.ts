/**
 * `GET /metrics`: the server's own metrics in Prometheus' text format, from
 * a registry of this app (tests run many apps in one process): requests,
 * measures accepted and refused, backlog and processing, caches, worker
 * pool, storage room, and prom-client's process metrics.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { collectorState } from '../engine/collector.js';
import type { Engine } from '../engine/engine.js';
import type { AppContext } from './app.js';
import { identify } from './auth.js';
import { forbidden } from './errors.js';
import type { StatsdStats } from './statsd.js';

/** Why a push was refused, by its status (the reasons an operator acts on differently). */
const REFUSALS: Record<number, string> = { 400: 'invalid', 413: 'too_large', 503: 'backlog', 507: 'storage_full' };

/** Label of requests no route matched: their paths must not become label values. */
const UNMATCHED = '(unmatched)';

/**
 * A counter whose value is read at scrape time from a running total kept
 * elsewhere (the engine's counts are plain numbers, bumped on hot paths).
 */
function totalCounter(registry: Registry, name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

function gauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

function engineMetrics(registry: Registry, engine: Engine, mapSize: number): () => void {
  const { activity } = engine;
  totalCounter(registry, 'gnocchi_measures_accepted_total', 'Measures acknowledged to clients (durable, waiting or processed).', () => activity.measuresAccepted);
  const collector = collectorState(engine);
  totalCounter(registry, 'gnocchi_series_refused_total', 'New series whose measures InfluxDB and Prometheus writes dropped past --max-series (once per write naming them).', () =>
    collector.refusedSeries,
  );
  totalCounter(registry, 'gnocchi_fenced_commits_total', 'Processing commits refused because their shard lease had passed to another node (cluster mode).', () =>
    engine.processor.fencedCommits(),
  );
  totalCounter(registry, 'gnocchi_janitor_deleted_objects_total', 'Split objects the janitor deleted, nothing referencing them any more (cluster mode, --splits s3://).', () =>
    engine.janitorDeletedObjects() ?? 0,
  );
  gauge(registry, 'gnocchi_backlog_measures', 'Measures acknowledged and not yet processed.', () => engine.processor.pendingMeasureCount());
  gauge(registry, 'gnocchi_backlog_metrics', 'Metrics with measures waiting to be processed.', () => engine.processor.backlog(false).metrics);
  gauge(registry, 'gnocchi_processing_lag_seconds', 'Age of the oldest measure waiting to be processed (0 when none waits).', () =>
    engine.processor.processingLag(),
  );
  new Counter({
    name: 'gnocchi_processing_batches_total',
    help: 'Processing batches run, by result.',
    labelNames: ['result'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ result: 'ok' }, activity.batches - activity.failedBatches);
      this.inc({ result: 'failed' }, activity.failedBatches);
    },
  });
  totalCounter(registry, 'gnocchi_processing_metrics_total', 'Metrics processed (one per metric per successful batch).', () => activity.metricsProcessed);
  totalCounter(registry, 'gnocchi_processing_measures_total', 'Measures aggregated into the archive policies.', () => activity.measuresProcessed);
  totalCounter(registry, 'gnocchi_processing_busy_seconds_total', 'Time batches spent running, summed over batches run side by side.', () => activity.busySeconds);
  totalCounter(registry, 'gnocchi_metrics_settled_total', 'Quiet metrics whose newest rows were compressed like the older ones (--settle-after).', () => activity.metricsSettled);
  const batchSeconds = new Histogram({
    name: 'gnocchi_processing_batch_duration_seconds',
    help: 'Duration of processing batches.',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  gauge(registry, 'gnocchi_processing_workers', 'Processing worker threads (0: processing runs on the main thread).', () => engine.options.workers);
  if (engine.options.workers > 0) {
    gauge(registry, 'gnocchi_worker_utilization_ratio', 'Share of the processing pool busy since it started.', () => engine.workerUtilization() ?? 0);
  }
  for (const [cache, label, what] of [
    [engine.readCache, 'read_cache', 'read answer cache'],
    [engine.decodedSplits, 'split_cache', 'decoded split cache'],
  ] as const) {
    totalCounter(registry, `gnocchi_${label}_hits_total`, `Lookups answered by the ${what}.`, () => cache.hits);
    totalCounter(registry, `gnocchi_${label}_misses_total`, `Lookups the ${what} could not answer.`, () => cache.misses);
    gauge(registry, `gnocchi_${label}_bytes`, `Bytes held by the ${what}.`, () => cache.bytes);
  }
  gauge(registry, 'gnocchi_lmdb_map_size_bytes', 'Largest size the database may reach (--map-size).', () => mapSize);
  gauge(registry, 'gnocchi_lmdb_used_bytes', "The database file's high-water mark (pages ever used, free ones included).", () => engine.fileBytes());
  gauge(registry, 'gnocchi_disk_free_bytes', "Room left to the server on the data directory's file system.", () => engine.freeDiskBytes());
  return activity.onBatch((report) => batchSeconds.observe(report.seconds));
}

/** The statsd listener's counts, by the names of its stats. */
const STATSD_COUNTERS: [keyof StatsdStats, string, string][] = [
  ['datagramsReceived', 'datagrams_received', 'Datagrams read from the statsd socket.'],
  ['linesAccepted', 'lines_accepted', 'statsd lines parsed into samples.'],
  ['linesMalformed', 'lines_malformed', 'statsd lines (or whole datagrams that are not UTF-8) dropped as malformed.'],
  ['measuresFlushed', 'measures_flushed', 'Measures statsd flushes pushed.'],
  ['measuresDropped', 'measures_dropped', 'Measures statsd gave up (no metric could be created, or too many waiting for a retry).'],
  ['flushes', 'flushes', 'statsd flushes run.'],
  ['flushErrors', 'flush_errors', 'statsd flushes in which something failed.'],
];

/**
 * Counts every request (route pattern, method, status, duration) and serves
 * `GET /metrics`. Installed on the app itself, not as an encapsulated
 * plugin, so that its hook sees every route.
 */
export function installSelfMetrics(app: FastifyInstance, ctx: AppContext): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const stopBatches = engineMetrics(registry, ctx.engine, ctx.config.mapSize);
  const { statsdStats } = ctx;
  if (statsdStats !== undefined) {
    for (const [key, name, help] of STATSD_COUNTERS) totalCounter(registry, `gnocchi_statsd_${name}_total`, help, () => statsdStats[key]);
  }
  const requests = new Histogram({
    name: 'gnocchi_http_request_duration_seconds',
    help: 'HTTP requests by route pattern, method and status, and how long they took.',
    labelNames: ['route', 'method', 'status'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const refused = new Counter({
    name: 'gnocchi_measure_pushes_refused_total',
    help: 'Measure pushes refused, by reason: invalid (400), too_large (413), backlog (503), storage_full (507).',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of Object.values(REFUSALS)) refused.inc({ reason }, 0);

  // A callback hook, not an async one: no promise per request.
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const options = request.routeOptions;
    const route = options.url ?? UNMATCHED;
    const status = reply.statusCode;
    requests.observe({ route, method: request.method, status }, reply.elapsedTime / 1000);
    const reason = REFUSALS[status];
    if (reason !== undefined && options.config.pushesMeasures === true) refused.inc({ reason });
    done();
  });
  app.addHook('onClose', async () => stopBatches());

  app.get('/metrics', { config: { anyAccept: true } }, async (request, reply) => {
    if (ctx.config.metricsAdminOnly && !identify(request).roles.includes('admin')) throw forbidden();
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}
