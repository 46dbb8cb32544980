/**
 * The server's log lines beyond errors, through fastify's logger: one line
 * per request and a processing summary per interval, both at `info`.
 */
import { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Engine } from '../engine/engine.js';
import { identify } from './auth.js';

/** The level is set once, at start: nothing is prepared for lines that would not be written. */
const infoEnabled = (level: string) => ['trace', 'debug', 'info'].includes(level);

/** Who made a request, when it authenticated (logged, so never a 401 of its own). */
function userOf(request: FastifyRequest): string | null {
  try {
    return identify(request).userId;
  } catch {
    return null;
  }
}

/**
 * fastify's request lines, replaced: none when a request comes in, one when
 * it completes (method, route pattern, status, duration, bytes sent, user).
 */
export class RequestLog extends LogController {
  private readonly info: boolean;

  constructor(level: string) {
    super();
    this.info = infoEnabled(level);
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (!this.info && !error) return;
    const length = Number(reply.getHeader('content-length'));
    const line = {
      method: request.method,
      url: request.url,
      route: request.routeOptions.url ?? null,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 1000) / 1000,
      bytes: Number.isFinite(length) ? length : null,
      user: userOf(request),
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else request.log.info(line, 'request');
  }

  /** The request line says 404 already. */
  override routeNotFound(): void {}
}

/** Every `seconds`, what processing did since the last line; quiet while there is nothing to say. */
export function installProcessingLog(app: FastifyInstance, engine: Engine, seconds: number): void {
  if (!infoEnabled(app.log.level)) return;
  const { activity, processor } = engine;
  let last = { ...activity };
  const timer = setInterval(() => {
    const now = { ...activity };
    const backlog = processor.backlog(false);
    const batches = now.batches - last.batches;
    const accepted = now.measuresAccepted - last.measuresAccepted;
    if (batches === 0 && accepted === 0 && backlog.measures === 0) return;
    app.log.info(
      {
        seconds,
        accepted,
        batches,
        failed_batches: now.failedBatches - last.failedBatches,
        metrics: now.metricsProcessed - last.metricsProcessed,
        measures: now.measuresProcessed - last.measuresProcessed,
        busy_seconds: Math.round((now.busySeconds - last.busySeconds) * 1000) / 1000,
        backlog_measures: backlog.measures,
        backlog_metrics: backlog.metrics,
        lag_seconds: Math.round(processor.processingLag() * 1000) / 1000,
      },
      'processing',
    );
    last = now;
  }, seconds * 1000);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
}
