/**
 * The statsd listener (Gnocchi's `gnocchi-statsd`), in the server process: a
 * UDP socket gathers samples (server/statsd-interval.ts) and every flush
 * delay their measures go, through the engine's ordinary push, to metrics of
 * one generic resource, created on first sight with the configured archive
 * policy or the one the archive policy rules give. A flush the storage
 * refuses (backlog full, disk full) keeps its measures for the next one; a
 * metric that cannot be created (no rule matches, bad name) loses them.
 * Nothing received ever throws out of the listener.
 */
import { createSocket, type Socket } from 'node:dgram';
import { isIPv6, type AddressInfo } from 'node:net';
import type { Series } from '../engine/aggregation.js';
import { checkCollectorMetricName, getOrCreateResourceMetrics, type CollectorResource } from '../engine/collector.js';
import type { Engine } from '../engine/engine.js';
import { EngineError } from '../engine/errors.js';
import { resourceUuid } from '../engine/resource-id.js';
import { parseStatsdDatagram } from '../formats/statsd.js';
import type { Config } from './config.js';
import { StatsdInterval, type Points } from './statsd-interval.js';

export type StatsdConfig = Pick<
  Config,
  'statsdPort' | 'statsdHost' | 'statsdResourceId' | 'statsdCreator' | 'statsdArchivePolicyName' | 'statsdFlushDelay'
>;

/** A subset of Fastify's (pino's) logger. */
export interface StatsdLog {
  debug(message: string): void;
  error(message: string): void;
}

/** Counters since start; plain numbers, read by `GET /metrics`. */
export interface StatsdStats {
  datagramsReceived: number;
  linesAccepted: number;
  /** Lines refused, plus datagrams refused whole (not UTF-8). */
  linesMalformed: number;
  measuresFlushed: number;
  /** Measures given up: their metric could not be created, or too many were waiting for a retry. */
  measuresDropped: number;
  flushes: number;
  /** Flushes in which something failed. */
  flushErrors: number;
}

export interface StatsdListener {
  readonly address: AddressInfo;
  /** The socket's receive buffer, bytes, as the kernel granted it. */
  readonly receiveBufferSize: number;
  readonly stats: StatsdStats;
  /** Stops receiving, then flushes what was received. */
  close(): Promise<void>;
}

/** Receive buffer asked for: bursts between two reads of the socket wait there. */
const RECEIVE_BUFFER_SIZE = 8 * 1024 ** 2;
/** Measures kept for retry at most, so a storage refusing for long cannot exhaust memory. */
const MAX_RETAINED = 1_000_000;
/** Characters of a metric name shown in the log. */
const LOGGED_NAME_LENGTH = 100;

const shortName = (name: string) => (name.length > LOGGED_NAME_LENGTH ? `${name.slice(0, LOGGED_NAME_LENGTH)}...` : name);
const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));
/** The request itself is wrong (4xx): trying again cannot help. */
const isRefusal = (err: unknown) => err instanceof EngineError && err.status < 500;

/** As large as the kernel allows up to RECEIVE_BUFFER_SIZE (Linux caps at net.core.rmem_max; others refuse). */
function raiseReceiveBuffer(socket: Socket): number {
  for (let size = RECEIVE_BUFFER_SIZE; size > socket.getRecvBufferSize(); size /= 2) {
    try {
      socket.setRecvBufferSize(size);
      break;
    } catch {
      // too large for this kernel: try half
    }
  }
  return socket.getRecvBufferSize();
}

function bind(socket: Socket, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, host, () => {
      socket.off('error', reject);
      resolve();
    });
  });
}

function toSeries(points: Points): Series {
  return { timestamps: Float64Array.from(points.timestamps), values: Float64Array.from(points.values) };
}

export function newStatsdStats(): StatsdStats {
  return { datagramsReceived: 0, linesAccepted: 0, linesMalformed: 0, measuresFlushed: 0, measuresDropped: 0, flushes: 0, flushErrors: 0 };
}

/**
 * Creates the resource when missing, then listens on statsdHost:statsdPort
 * (0: any free port), counting into `stats` (made before, for /metrics).
 */
export async function startStatsd(engine: Engine, config: StatsdConfig, log: StatsdLog, stats = newStatsdStats()): Promise<StatsdListener> {
  const resource: CollectorResource = {
    type: 'generic',
    id: resourceUuid(config.statsdResourceId, config.statsdCreator),
    originalResourceId: config.statsdResourceId,
    creator: config.statsdCreator,
    attrs: {},
    metricNames: [],
    ...(config.statsdArchivePolicyName === '' ? {} : { archivePolicyName: config.statsdArchivePolicyName }),
  };
  await getOrCreateResourceMetrics(engine, resource);

  const interval = new StatsdInterval();
  /** Measures of failed pushes, by metric name, sent again with the next flush. */
  let retained = new Map<string, Points>();
  let retainedCount = 0;

  const socket = createSocket({ type: isIPv6(config.statsdHost) ? 'udp6' : 'udp4' });
  socket.on('message', (datagram) => {
    stats.datagramsReceived++;
    const { samples, errors } = parseStatsdDatagram(datagram);
    stats.linesAccepted += samples.length;
    for (const sample of samples) interval.add(sample);
    if (errors.length > 0) {
      stats.linesMalformed += errors.length;
      const { line, reason } = errors[0]!;
      log.debug(`statsd: ${errors.length} malformed line(s), first ${line === null ? '' : JSON.stringify(shortName(line))}: ${reason}`);
    }
  });
  await bind(socket, config.statsdPort, config.statsdHost);
  socket.on('error', (err) => log.error(`statsd: socket error: ${err.message}`));
  const receiveBufferSize = raiseReceiveBuffer(socket);
  const address = socket.address();

  /** Keeps measures for the next flush, as far as MAX_RETAINED allows; answers whether they were kept. */
  function retain(name: string, points: Points): boolean {
    if (retainedCount + points.values.length > MAX_RETAINED) return false;
    retainedCount += points.values.length;
    retained.set(name, points);
    return true;
  }

  function drop(name: string, points: Points, err: unknown): void {
    stats.measuresDropped += points.values.length;
    log.error(`statsd: ${points.values.length} measure(s) of ${shortName(name)} dropped: ${messageOf(err)}`);
  }

  /**
   * Metric ids by name, creating the missing metrics; a name whose metric
   * cannot be created loses its measures, or keeps them when the failure
   * may pass. Answers whether everything went well.
   */
  async function resolveMetrics(batch: Map<string, Points>, ids: Map<string, string>): Promise<boolean> {
    let ok = true;
    const missing: string[] = [];
    const known = await engine.index.metricsOf(resource.id);
    for (const [name, points] of batch) {
      try {
        checkCollectorMetricName(name);
        const id = known.get(name);
        if (id !== undefined) {
          ids.set(name, id);
          continue;
        }
        if (resource.archivePolicyName === undefined) await engine.index.policyNameForMetric(name);
        missing.push(name);
      } catch (err) {
        ok = false;
        drop(name, points, err);
      }
    }
    if (missing.length === 0) return ok;
    try {
      const created = await getOrCreateResourceMetrics(engine, { ...resource, metricNames: missing });
      for (const [name, metric] of created) ids.set(name, metric.id);
    } catch (err) {
      const refused = isRefusal(err);
      for (const name of missing) {
        const points = batch.get(name)!;
        if (refused || !retain(name, points)) drop(name, points, err);
      }
      if (!refused) log.error(`statsd: cannot create ${missing.length} metric(s), measures kept for the next flush: ${messageOf(err)}`);
      return false;
    }
    return ok;
  }

  async function flush(): Promise<void> {
    stats.flushes++;
    const batch = retained;
    retained = new Map();
    retainedCount = 0;
    for (const [name, points] of interval.drain()) {
      const earlier = batch.get(name);
      if (earlier === undefined) batch.set(name, points);
      else {
        for (let i = 0; i < points.values.length; i++) {
          earlier.timestamps.push(points.timestamps[i]!);
          earlier.values.push(points.values[i]!);
        }
      }
    }
    if (batch.size === 0) return;
    const ids = new Map<string, string>();
    let ok = await resolveMetrics(batch, ids);
    const series = new Map<string, Series>();
    let count = 0;
    for (const [name, id] of ids) {
      const points = batch.get(name)!;
      series.set(id, toSeries(points));
      count += points.values.length;
    }
    try {
      await engine.addMeasures(series);
      stats.measuresFlushed += count;
    } catch (err) {
      ok = false;
      let kept = 0;
      for (const name of ids.keys()) {
        const points = batch.get(name)!;
        if (retain(name, points)) kept += points.values.length;
        else stats.measuresDropped += points.values.length;
      }
      log.error(`statsd: push of ${count} measure(s) refused, ${kept} kept for the next flush: ${messageOf(err)}`);
    }
    if (!ok) stats.flushErrors++;
  }

  let closed = false;
  let flushing: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const runFlush = (): Promise<void> =>
    (flushing = flush()
      .catch((err: unknown) => {
        stats.flushErrors++;
        log.error(`statsd: flush failed: ${messageOf(err)}`);
      })
      .finally(() => (flushing = undefined)));
  // The next flush is scheduled when one ends: a slow flush delays the next rather than overlapping it.
  const schedule = () => {
    timer = setTimeout(() => void runFlush().then(() => closed || schedule()), config.statsdFlushDelay * 1000);
  };
  schedule();

  return {
    address,
    receiveBufferSize,
    stats,
    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      await new Promise<void>((resolve) => socket.close(resolve));
      await flushing;
      await runFlush();
    },
  };
}
