/**
 * The engine's error catalogue. Each error carries the HTTP status Gnocchi
 * answers for the same condition and the description it sends (a string, or
 * an object with `cause`/`reason`/`detail`); `server/errors.ts` is the one
 * place that renders them.
 */
import { pyFloat, pyUuid } from '../formats/json.js';

export type ErrorDescription = string | Record<string, unknown>;

export class EngineError extends Error {
  constructor(
    readonly status: number,
    readonly description: ErrorDescription,
  ) {
    super(typeof description === 'string' ? description : JSON.stringify(description));
    this.name = new.target.name;
  }
}

/** 400 with Gnocchi's voluptuous-style body: `{cause, reason, detail}`. */
export class InvalidInput extends EngineError {
  constructor(reason: string, detail: (string | number)[] = []) {
    super(400, { cause: 'Invalid input', reason, detail: detail.map(String) });
  }
}

/** 400 for a bad query-string argument, keys in Gnocchi's order (`validate_qs`: cause, detail, reason). */
export class ArgumentError extends EngineError {
  constructor(reason: string, detail?: string) {
    super(400, detail === undefined
      ? { cause: 'Argument value error', reason }
      : { cause: 'Argument value error', detail, reason });
  }
}

export class BadRequest extends EngineError {
  constructor(description: ErrorDescription) {
    super(400, description);
  }
}

export class NotFound extends EngineError {
  constructor(description: ErrorDescription) {
    super(404, description);
  }
}

export class Conflict extends EngineError {
  constructor(description: ErrorDescription) {
    super(409, description);
  }
}

export class NoSuchArchivePolicy extends NotFound {
  constructor(readonly policyName: string) {
    super(`Archive policy ${policyName} does not exist`);
  }
}

export class ArchivePolicyAlreadyExists extends Conflict {
  constructor(name: string) {
    super(`Archive policy ${name} already exists`);
  }
}

export class ArchivePolicyInUse extends BadRequest {
  constructor(name: string) {
    super(`Archive policy ${name} is still in use`);
  }
}

export class UnsupportedArchivePolicyChange extends BadRequest {
  constructor(name: string, message: string) {
    super(`Archive policy ${name} does not support change: ${message}`);
  }
}

export class NoSuchArchivePolicyRule extends NotFound {
  constructor(name: string) {
    super(`Archive policy rule ${name} does not exist`);
  }
}

export class ArchivePolicyRuleAlreadyExists extends Conflict {
  constructor(name: string) {
    super(`Archive policy rule ${name} already exists`);
  }
}

export class NoSuchMetric extends NotFound {
  constructor(id: string) {
    super(`Metric ${id} does not exist`);
  }
}

export class NoArchivePolicyRuleMatch extends BadRequest {
  constructor(metricName: string | null) {
    super(
      'No archive policy name specified and no archive policy rule found ' +
        `matching the metric name ${metricName ?? 'None'}`,
    );
  }
}

export class AggregationMethodDoesNotExist extends NotFound {
  constructor(metricId: string, method: string) {
    super({
      cause: 'Aggregation method does not exist for this metric',
      // Gnocchi's detail holds the metric's uuid.UUID.
      detail: { metric: pyUuid(metricId), aggregation_method: method },
    });
  }
}

export class AggregationDoesNotExist extends NotFound {
  constructor(metricId: string, method: string, granularitySeconds: number) {
    super(
      `Aggregation method '${method}' at granularity '${pyFloat(granularitySeconds)}' ` +
        `for metric ${metricId} does not exist`,
    );
  }
}

/** The storage refused a write (map full, disk full): retry later. */
export class StorageFull extends EngineError {
  constructor(detail: string) {
    super(507, `Insufficient storage: ${detail}`);
  }
}

/**
 * Pushes refused while the measures waiting to be processed pass the bound
 * (`--max-backlog`): the client retries after `retryAfterSeconds`, by which
 * time processing has usually brought the backlog under it.
 */
export class BacklogFull extends EngineError {
  constructor(
    backlog: number,
    limit: number,
    readonly retryAfterSeconds: number,
  ) {
    super(503, `Too many measures waiting to be processed (${backlog}, limit ${limit}): retry later`);
  }
}

export class NoSuchResource extends NotFound {
  constructor(id: string) {
    super(`Resource ${id} does not exist`);
  }
}

export class NoSuchResourceType extends NotFound {
  constructor(name: string) {
    super(`Resource type ${name} does not exist`);
  }
}

export class ResourceTypeAlreadyExists extends Conflict {
  constructor(name: string) {
    super(`Resource type ${name} already exists`);
  }
}

export class ResourceTypeInUse extends BadRequest {
  constructor(name: string) {
    super(`Resource type ${name} is still in use`);
  }
}

export class UnexpectedResourceTypeState extends BadRequest {
  constructor(name: string, expected: string, state: string) {
    super(`Resource type ${name} state is ${state} (expected: ${expected})`);
  }
}

export class ResourceAlreadyExists extends Conflict {
  constructor(id: string) {
    super(`Resource ${id} already exists`);
  }
}

export class NamedMetricAlreadyExists extends Conflict {
  constructor(readonly metricName: string) {
    super(`Named metric ${metricName} already exists`);
  }
}

/** `Invalid pagination: `...'` for bad sort keys, directions and markers. */
export class InvalidPagination extends BadRequest {
  constructor(reason: string) {
    super(`Invalid pagination: \`${reason}'`);
  }
}

/**
 * A collector write part of which would have created metrics past
 * `--max-series`: those metrics' measures were dropped and the rest stored.
 * Worded as InfluxDB 1.x words its partial write, which collectors know
 * not to retry.
 */
export class SeriesLimitExceeded extends BadRequest {
  constructor(
    readonly dropped: number,
    readonly series: number,
    readonly limit: number,
  ) {
    super(`partial write: max-series limit exceeded: (${limit}) dropped=${dropped} (the measures of ${series} new series past --max-series)`);
  }
}

/**
 * An engine the data lives in (Redis, PostgreSQL) did not answer: down,
 * restarting, or refusing writes. Nothing is lost by refusing; the client
 * retries after `retryAfterSeconds`, by which time the driver has usually
 * reconnected by itself.
 */
export class EngineUnavailable extends EngineError {
  constructor(
    readonly engine: string,
    readonly detail: string,
    readonly retryAfterSeconds = 1,
  ) {
    super(503, `${engine} unavailable: ${detail}`);
  }
}

/**
 * A processing commit refused because it was computed under a lease that is
 * no longer the shard's (another holder took the shard since), or from
 * states another commit changed meanwhile. Nothing of it was applied; the
 * shard's new holder processes those measures.
 */
export class FencedCommit extends EngineError {
  constructor(
    readonly shard: number,
    readonly fence: number,
    readonly reason: string,
  ) {
    super(409, `Commit on shard ${shard} under fence ${fence} refused: ${reason}`);
  }
}

/**
 * The errors a processing worker thread throws that the main thread acts
 * on, as they cross: structured cloning keeps an Error's message but not
 * its class, so they go as data (crossing) and are made again (revived).
 */
type Crossing = { crossing: 'EngineUnavailable'; args: [string, string, number] } | { crossing: 'FencedCommit'; args: [number, number, string] };

export function crossing(err: unknown): unknown {
  if (err instanceof EngineUnavailable) return { crossing: 'EngineUnavailable', args: [err.engine, err.detail, err.retryAfterSeconds] } satisfies Crossing;
  if (err instanceof FencedCommit) return { crossing: 'FencedCommit', args: [err.shard, err.fence, err.reason] } satisfies Crossing;
  return err;
}

export function revived(err: unknown): unknown {
  const c = err as Partial<Crossing> | null;
  if (c?.crossing === 'EngineUnavailable') return new EngineUnavailable(...(c.args as [string, string, number]));
  if (c?.crossing === 'FencedCommit') return new FencedCommit(...(c.args as [number, number, string]));
  return err;
}

/**
 * Computing code asked a series snapshot for sealed splits it was not
 * loaded with (SeriesStore.load's ranges). Load again with these keys'
 * ranges added and compute again.
 */
export class SnapshotMiss extends EngineError {
  constructor(readonly keys: readonly (readonly [metricId: string, granularity: number, key: number])[]) {
    super(500, `Series snapshot was not loaded with splits ${keys.map((k) => k.join(' ')).join(', ')}`);
  }
}

/**
 * Sealed splits a metric's index names as current are not in the object
 * store: not a race (a split superseded while it was being read is read
 * again), but objects lost or deleted behind the cluster's back.
 */
export class SplitObjectMissing extends EngineError {
  constructor(readonly names: readonly string[]) {
    super(500, `Sealed split objects listed by the index are missing from the object store: ${names.join(', ')}`);
  }
}

/**
 * A cluster node's start-up refusal (engine/drivers/redis/series-format.ts),
 * as the data directory's FormatVersionMismatch: not an answer to a request.
 */
export class SeriesFormatTooNew extends Error {
  constructor(
    readonly found: number,
    readonly ours: number,
  ) {
    super(
      `The cluster's series Redis holds series records of format ${found}, written by a newer release; ` +
        `this release reads format ${ours} and older; refusing to start`,
    );
  }
}
