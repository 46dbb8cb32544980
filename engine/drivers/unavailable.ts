/**
 * A cluster engine (PostgreSQL, Redis...) that cannot be reached: the
 * request failed without effect that the caller can rely on, and may be
 * retried once the engine is back. The server answers 503 with Retry-After.
 */
import { EngineError } from '../errors.js';

export class EngineUnavailable extends EngineError {
  constructor(
    readonly engine: string,
    detail: string,
    readonly retryAfterSeconds = 1,
  ) {
    super(503, `${engine} is unavailable: ${detail}`);
  }
}
