/**
 * What the collector protocols (InfluxDB line protocol, Prometheus remote
 * write, statsd) share: Gnocchi's `get_or_create_resource_and_metrics`. A
 * resource named by a collector is created on first sight with every metric
 * it reports; later writes add the metrics it did not have yet. New metrics
 * get their archive policy from the archive policy rules.
 *
 * The line protocol and remote write routes go through CollectorBatch and
 * writeCollectorBatch: points gathered straight into typed arrays by metric,
 * metrics remembered across writes (slots kept by engine/series-cache.ts),
 * every missing resource and metric of a write created in one transaction,
 * and an optional bound on the number of metrics they may bring about.
 */
import type { Engine } from './engine.js';
import { newMetricId } from './metric-id.js';
import { BadRequest, Conflict, NamedMetricAlreadyExists, ResourceAlreadyExists, SeriesLimitExceeded } from './errors.js';
import { metricsById } from './drivers/index-store.js';
import type { IncomingPoints } from './incoming-batch.js';
import type { MetricRecord } from './index.js';
import type { AttributeValue } from './resource-type.js';
import type { MetricSpec, NewResource, ResourceRecord } from './resources.js';
import { SeriesCache, type MetricSlot, type ResourceSlot } from './series-cache.js';

/** Longest metric name a collector may create (Gnocchi's column is 255 wide). */
export const MAX_METRIC_NAME_LENGTH = 255;

/** Attempts at a write that raced with another creating the same resource or metric. */
const ATTEMPTS = 4;

export interface CollectorResource {
  /** Resource type; it must exist. */
  type: string;
  /** The stored resource UUID (from `resourceUuid(original, creator)`). */
  id: string;
  originalResourceId: string;
  creator: string;
  /** Attributes set when the resource is created. */
  attrs: Record<string, AttributeValue>;
  metricNames: readonly string[];
  /** Policy of the metrics created; absent: the archive policy rules choose by name. */
  archivePolicyName?: string;
}

/** Checks a metric name a collector asks for, with Gnocchi's message for `/`. */
export function checkCollectorMetricName(name: string): void {
  if (name.includes('/')) throw new BadRequest("'/' is not supported in metric name");
  // Code points, as Python counts; never more than UTF-16 units.
  if (name === '' || (name.length > MAX_METRIC_NAME_LENGTH && [...name].length > MAX_METRIC_NAME_LENGTH)) {
    throw new BadRequest({ cause: 'Invalid metric name', reason: `metric name must be 1 to ${MAX_METRIC_NAME_LENGTH} characters`, detail: name.slice(0, 64) });
  }
}

/**
 * The metrics named `metricNames` of the resource, creating the resource
 * and the missing metrics as needed. `authorize` is called with the existing
 * resource's creator before it is changed (Gnocchi's "update resource").
 * A resource id already used by a resource of another type is a 409.
 */
export async function getOrCreateResourceMetrics(
  engine: Engine,
  spec: CollectorResource,
  authorize: (resourceCreator: string) => void = () => {},
): Promise<Map<string, MetricRecord>> {
  const resources = engine.index;
  for (const name of spec.metricNames) checkCollectorMetricName(name);
  // A concurrent writer may create the resource or a metric between our read
  // and our write; the write fails cleanly and the next attempt sees it.
  for (let attempt = 1; ; attempt++) {
    try {
      const existing = await resources.get(spec.type, spec.id);
      if (existing === undefined) {
        const other = await resources.get('generic', spec.id);
        if (other !== undefined) throw new Conflict({ cause: 'Resource already exists', detail: spec.id });
        await resources.create(spec.type, {
          id: spec.id,
          originalResourceId: spec.originalResourceId,
          creator: spec.creator,
          userId: null,
          projectId: null,
          endedAt: null,
          attrs: spec.attrs,
          metrics: await newMetrics(engine, spec.metricNames, spec.archivePolicyName),
        });
      } else {
        authorize(existing.creator);
        const have = await resources.metricsOf(spec.id);
        const missing = spec.metricNames.filter((n) => !have.has(n));
        if (missing.length > 0) await resources.update(spec.type, spec.id, { metrics: await newMetrics(engine, missing, spec.archivePolicyName) }, true);
      }
      break;
    } catch (err) {
      if (!raced(err) || attempt >= ATTEMPTS) throw err;
    }
  }
  const named = await resources.metricsOf(spec.id);
  const records = await metricsById(resources, [...named.values()]);
  const out = new Map<string, MetricRecord>();
  for (const name of spec.metricNames) {
    const id = named.get(name);
    const m = id === undefined ? undefined : records.get(id);
    if (m !== undefined) out.set(name, m);
  }
  return out;
}

const raced = (err: unknown) => err instanceof ResourceAlreadyExists || err instanceof NamedMetricAlreadyExists;

async function newMetrics(engine: Engine, names: readonly string[], policy: string | undefined): Promise<Map<string, MetricSpec>> {
  const policies = await Promise.all(names.map((name) => policy ?? engine.index.policyNameForMetric(name)));
  return new Map(names.map((name, i) => [name, { kind: 'new', archivePolicyName: policies[i]!, unit: null }]));
}

/** Stamps of the batches: a slot's stamp says which batch last counted it. */
let lastStamp = 0;

/** Metric indices of a batch grouped by resource (see CollectorBatch.metricsByResource). */
export interface ByResource {
  start: Int32Array;
  order: Int32Array;
}

/** A batch's points laid out by metric: metric m's are [start[m], start[m] + count[m]) of the columns. */
export interface BatchPoints {
  start: Uint32Array;
  count: Uint32Array;
  timestamps: Float64Array;
  values: Float64Array;
}

/** A copy of `a` twice as long. */
function grownInt32(a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const next = new Int32Array(2 * a.length);
  next.set(a);
  return next;
}

/** Slots a batch reserves ahead at most (a huge write's arrays grow past them as they fill). */
const MAX_RESERVED_SLOTS = 1 << 16;

/**
 * Slot arrays of released batches, for the next ones. A time-major push of
 * 10,000 series reserved two arrays of 80 KB, which lived across its
 * append, were promoted to the old generation and died there: ~160 KB of
 * old-generation garbage a push. They still point to the slots of their
 * last batch, which the series cache holds anyway (bounded: at most
 * MAX_SPARE_SLOT_ARRAYS arrays of MAX_RESERVED_SLOTS).
 */
const spareSlotArrays: unknown[][] = [];
/** Two a batch: enough for 8 writes in flight. */
const MAX_SPARE_SLOT_ARRAYS = 16;

/** An array of `length` slots, holes or stale ones, to fill from the start. */
function slotArray<T>(length: number): T[] {
  // Popped first: a collector's writes reserve the same lengths.
  for (let i = spareSlotArrays.length - 1; i >= 0; i--) {
    const spare = spareSlotArrays[i]!;
    if (spare.length < length) continue;
    spareSlotArrays[i] = spareSlotArrays[spareSlotArrays.length - 1]!;
    spareSlotArrays.pop();
    spare.length = length;
    return spare as T[];
  }
  return new Array<T>(length);
}

function spareSlotArray(slots: unknown[]): void {
  if (spareSlotArrays.length < MAX_SPARE_SLOT_ARRAYS && slots.length > 0) spareSlotArrays.push(slots);
}

/** `slots` cut to its first `count` (a reserved array's holes dropped: its store is trimmed in place). */
function trimmed<T>(slots: T[], count: number): T[] {
  if (slots.length !== count) slots.length = count;
  return slots;
}

/** Columns of points a batch takes runs of (see CollectorBatch.run). */
export interface PointColumns {
  timestamps: Float64Array;
  values: Float64Array;
}

/** Points as they come: the metric of each, its timestamp and value. */
interface Scratch {
  owners: Int32Array;
  timestamps: Float64Array;
  values: Float64Array;
}

/**
 * Scratch arrays of finished batches, for the next ones: a write of 10,000
 * points would otherwise leave 200 KB of them to the collector.
 */
const spare: Scratch[] = [];
const MAX_SPARE = 4;
/** Larger scratch arrays are not kept (a huge write would hold them forever). */
const MAX_SPARE_POINTS = 1 << 20;

/** The scratch of a batch on columns, which adds no point. */
const NO_SCRATCH: Scratch = { owners: new Int32Array(0), timestamps: new Float64Array(0), values: new Float64Array(0) };

function scratch(capacity: number): Scratch {
  const i = spare.findIndex((s) => s.owners.length >= capacity);
  if (i !== -1) return spare.splice(i, 1)[0]!;
  return { owners: new Int32Array(capacity), timestamps: new Float64Array(capacity), values: new Float64Array(capacity) };
}

/**
 * The points of one collector write by metric, resources and metrics in
 * order of first appearance (the order Gnocchi creates them in and reports
 * the first refusal of). Points go into typed arrays as they come and are
 * laid out by metric once (`series`).
 *
 * A batch tells resources and metrics apart by their slot objects (a stamp
 * on each, no lookup): its caller must give one slot per resource key and
 * one per metric identity, slots of resources sharing an id marked
 * `shared` (see CollectorScope).
 *
 * A batch made on columns (remote write, whose samples the scanner has put
 * in columns, each series' together) takes each metric's points as a run
 * of them instead (`run`): nothing is copied point by point.
 */
export class CollectorBatch {
  /**
   * Slots in order, `resourceCount` and `metricCount` of them: arrays
   * reserved for the points expected, as a write of known series names as
   * many resources and metrics as lines and arrays grown by push copied
   * them through every size (~470 KB of garbage per 10,000 lines).
   */
  private resourceSlots: ResourceSlot[];
  private metricSlots: MetricSlot[];
  private resourceCount = 0;
  private metricCount = 0;
  /**
   * The batch index of each metric's resource, and where its points start
   * (points before were replaced); typed arrays, which the garbage
   * collector never looks into, reserved as the slots are and grown by
   * doubling past that.
   */
  private resourceOf: Int32Array<ArrayBuffer>;
  private from: Int32Array<ArrayBuffer>;
  /** On columns: where each metric's run ends (it starts at `from`). */
  private to: Int32Array<ArrayBuffer> | undefined;
  private readonly stamp = ++lastStamp;
  private points: Scratch;
  private n = 0;

  /**
   * `expected`: the points, resources and metrics the write likely has (a
   * collector's writes name the same series; by default as many of each as
   * points). `columns`: the points are runs of these (see `run`), taken as
   * they are, with no point added.
   */
  constructor(
    expectedPoints: number,
    expected?: { resources: number; metrics: number },
    readonly columns?: PointColumns,
  ) {
    const capacity = Math.max(16, expectedPoints);
    this.points = columns === undefined ? scratch(capacity) : NO_SCRATCH;
    const reserve = <T>(slots: number | undefined) => slotArray<T>(Math.min(slots !== undefined && slots > 0 ? slots : capacity, MAX_RESERVED_SLOTS));
    this.resourceSlots = reserve(expected?.resources);
    this.metricSlots = reserve(expected?.metrics);
    // As many as the metrics reserved: grown by doubling from a few, they were copied through every size.
    this.resourceOf = new Int32Array(Math.max(1, this.metricSlots.length));
    this.from = new Int32Array(Math.max(1, this.metricSlots.length));
    if (columns !== undefined) this.to = new Int32Array(this.from.length);
  }

  /**
   * Gives the batch's slot arrays to the next batches: it is left empty,
   * without resources, metrics or points. For its writer, once done with it.
   */
  release(): void {
    spareSlotArray(trimmed(this.resourceSlots, this.resourceCount));
    spareSlotArray(trimmed(this.metricSlots, this.metricCount));
    this.resourceSlots = [];
    this.metricSlots = [];
    this.resourceCount = this.metricCount = this.n = 0;
  }

  /** The resources of the batch in order of first appearance. */
  get resources(): readonly ResourceSlot[] {
    return trimmed(this.resourceSlots, this.resourceCount);
  }

  /** The metrics of the batch in order of first appearance. */
  get metrics(): readonly MetricSlot[] {
    return trimmed(this.metricSlots, this.metricCount);
  }

  /** The index of a resource in this batch. */
  resource(slot: ResourceSlot): number {
    if (slot.stamp !== this.stamp) {
      slot.stamp = this.stamp;
      slot.index = this.resourceCount;
      this.resourceSlots[this.resourceCount++] = slot;
    }
    return slot.index;
  }

  /** The index of a metric in this batch (its resource counted too). */
  metric(slot: MetricSlot): number {
    if (slot.stamp !== this.stamp) {
      const m = this.metricCount++;
      if (m === this.from.length) {
        this.from = grownInt32(this.from);
        this.resourceOf = grownInt32(this.resourceOf);
        if (this.to !== undefined) this.to = grownInt32(this.to);
      }
      slot.stamp = this.stamp;
      slot.index = m;
      this.metricSlots[m] = slot;
      this.from[m] = 0;
      if (this.to !== undefined) this.to[m] = 0;
      this.resourceOf[m] = this.resource(slot.resource);
    }
    return slot.index;
  }

  add(metric: number, timestamp: number, value: number): void {
    if (this.n === this.points.owners.length) this.grow();
    const p = this.points;
    p.owners[this.n] = metric;
    p.timestamps[this.n] = timestamp;
    p.values[this.n++] = value;
  }

  /**
   * On columns: the points of `metric` are [from, to) of them, in place of
   * any run given before (remote write: the last series of a name wins).
   */
  run(metric: number, from: number, to: number): void {
    if (this.to === undefined) throw new Error('only a batch on columns takes runs');
    this.from[metric] = from;
    this.to[metric] = to;
  }

  /** The metrics of each resource in order of first appearance: resource r has order[start[r]..start[r + 1]). */
  metricsByResource(): ByResource {
    const n = this.metricCount;
    const { resourceOf } = this;
    const start = new Int32Array(this.resourceCount + 1);
    for (let m = 0; m < n; m++) start[resourceOf[m]! + 1]!++;
    for (let r = 0; r < this.resourceCount; r++) start[r + 1]! += start[r]!;
    const next = start.slice(0, -1);
    const order = new Int32Array(n);
    for (let m = 0; m < n; m++) order[next[resourceOf[m]!]!++] = m;
    return { start, order };
  }

  /**
   * Each metric's points in the order added, laid out by metric in one pair
   * of arrays (no view per metric: a write has 10,000 of them). Done with
   * adding: the batch takes no more points.
   */
  series(): BatchPoints {
    if (this.columns !== undefined) return this.runs(this.columns, this.to!);
    const { owners, timestamps: ts, values: vs } = this.points;
    const { from } = this;
    const count = new Uint32Array(this.metricCount);
    let total = 0;
    for (let i = 0; i < this.n; i++) {
      const m = owners[i]!;
      if (i >= from[m]!) {
        count[m]!++;
        total++;
      }
    }
    const start = new Uint32Array(count.length);
    for (let m = 1; m < count.length; m++) start[m] = start[m - 1]! + count[m - 1]!;
    const timestamps = new Float64Array(total);
    const values = new Float64Array(total);
    const next = start.slice();
    for (let i = 0; i < this.n; i++) {
      const m = owners[i]!;
      if (i < from[m]!) continue;
      const at = next[m]!++;
      timestamps[at] = ts[i]!;
      values[at] = vs[i]!;
    }
    if (spare.length < MAX_SPARE && owners.length <= MAX_SPARE_POINTS) spare.push(this.points);
    this.points = NO_SCRATCH;
    this.n = 0;
    return { start, count, timestamps, values };
  }

  /** The points of a batch on columns: each metric's run. */
  private runs({ timestamps, values }: PointColumns, to: Int32Array): BatchPoints {
    const n = this.metricCount;
    const start = new Uint32Array(n);
    const count = new Uint32Array(n);
    for (let m = 0; m < n; m++) {
      start[m] = this.from[m]!;
      count[m] = to[m]! - this.from[m]!;
    }
    return { start, count, timestamps, values };
  }

  private grow(): void {
    // A batch on columns has an empty scratch: its first point comes here.
    if (this.columns !== undefined) throw new Error('a batch on columns takes runs of them, not points');
    const old = this.points;
    const next = scratch(2 * old.owners.length);
    next.owners.set(old.owners);
    next.timestamps.set(old.timestamps);
    next.values.set(old.values);
    this.points = next;
  }
}

export interface CollectorWrite {
  /** Resource type of the resources; it must exist. */
  type: string;
  /** Creator of the resources created. */
  creator: string;
  /**
   * Called for each resource in order before its metrics are looked at:
   * the attributes it gets if created (throws to refuse the write).
   */
  prepare(resource: ResourceSlot): Record<string, AttributeValue>;
  /** Throws unless the writer may add metrics to a resource of this creator (Gnocchi's "update resource"). */
  mayUpdate(resourceCreator: string): void;
  /** Throws unless the writer may push measures to a metric of this creator. */
  mayPost(metricCreator: string): void;
  /** Most metrics the write may bring the index to by creating some; 0: no bound. */
  maxSeries: number;
}

/**
 * Stores a batch as Gnocchi's collector endpoints do, resource by resource
 * in order: each resource's metric names are checked, an existing resource
 * must be the writer's to update, an id taken by another type is a 409,
 * and the writer must be allowed to post to each metric. All of that is
 * checked before anything is written, then every missing resource and
 * metric is created in one transaction and the points stored in one
 * push. Metrics the batch resolved before are trusted without reading the
 * index as long as their records are unchanged.
 *
 * New metrics past `maxSeries` are not created: once the rest is stored,
 * SeriesLimitExceeded says how many points were dropped.
 *
 * Once its points are taken, the batch is released (CollectorBatch.release).
 */
export async function writeCollectorBatch(engine: Engine, batch: CollectorBatch, write: CollectorWrite): Promise<void> {
  const series = batch.series();
  const groups = batch.metricsByResource();
  const mayUpdate = memo(write.mayUpdate);
  const mayPost = memo(write.mayPost);
  const known = knownPoints(engine, batch, groups, series, write, mayUpdate, mayPost);
  if (known !== undefined) {
    batch.release();
    return engine.addPoints(known);
  }
  let refusedMetrics: Set<number>;
  let plan: Plan;
  for (let attempt = 1; ; attempt++) {
    const found = await lookUp(engine, batch, groups);
    plan = planCollectorWrite(batch, groups, write, found, mayUpdate, mayPost);
    refusedMetrics = await capNewMetrics(engine, plan, write.maxSeries);
    try {
      const extended = [...plan.extended].filter(([, metrics]) => metrics.size > 0).map(([id, metrics]) => ({ id, metrics }));
      if (plan.created.size > 0 || extended.length > 0) await engine.index.createAndExtend(write.type, [...plan.created.values()], extended);
      break;
    } catch (err) {
      if (!raced(err) || attempt >= ATTEMPTS) throw err;
    }
  }
  await resolveCreated(engine, batch, groups, write.type, refusedMetrics, plan);
  const { points, dropped } = pushedPoints(batch, groups, series, refusedMetrics);
  batch.release();
  await engine.addPoints(points);
  if (refusedMetrics.size > 0) {
    collectorState(engine).refusedSeries += refusedMetrics.size;
    throw new SeriesLimitExceeded(dropped, refusedMetrics.size, write.maxSeries);
  }
}

/**
 * The points of a write of known series, in one pass over its resources
 * and metrics: what lookUp, planCollectorWrite, resolveCreated and
 * pushedPoints come to when every metric holds the record an earlier write
 * found current at the index's metricRecordsVersion (its resource then
 * exists, of the write's type, by the creator on its slot) and no resource
 * shares its id with another. Undefined when the write needs those steps:
 * a series not resolved, a record that may have changed, or any refusal,
 * which they make and throw in Gnocchi's order (every resource prepared
 * before any right is checked).
 */
function knownPoints(
  engine: Engine,
  batch: CollectorBatch,
  { start, order }: ByResource,
  series: BatchPoints,
  write: CollectorWrite,
  mayUpdate: (creator: string) => void,
  mayPost: (creator: string) => void,
): IncomingPoints | undefined {
  const version = engine.index.metricRecordsVersion?.() ?? -1;
  if (version === -1) return undefined;
  const { resources, metrics } = batch;
  const n = metrics.length;
  const pointsStart = new Uint32Array(n);
  const pointsCount = new Uint32Array(n);
  // The last write's ids as long as they are this one's: records' entries share them (see incoming-batch.ts), so they never change once given.
  let ids = lastKnownIds.length === n ? lastKnownIds : new Array<string>(n);
  let at = 0;
  for (let r = 0; r < resources.length; r++) {
    const slot = resources[r]!;
    const creator = slot.creator;
    if (creator === undefined || slot.shared || typeof slot.id !== 'string' || start[r + 1] === start[r]) return undefined;
    for (let i = start[r]!; i < start[r + 1]!; i++) {
      const metric = metrics[order[i]!]!;
      if (metric.record === undefined || metric.checked !== version) return undefined;
    }
    try {
      write.prepare(slot);
      mayUpdate(creator);
      for (let i = start[r]!; i < start[r + 1]!; i++) {
        const m = order[i]!;
        const metric = metrics[m]!;
        checkName(metric);
        const record = metric.record!;
        mayPost(record.creator ?? creator);
        if (ids[at] !== record.id) {
          if (ids === lastKnownIds) ids = prefixOf(ids, at);
          ids[at] = record.id;
        }
        pointsStart[at] = series.start[m]!;
        pointsCount[at++] = series.count[m]!;
      }
    } catch {
      return undefined;
    }
  }
  lastKnownIds = ids;
  return { metricIds: ids, start: pointsStart, count: pointsCount, timestamps: series.timestamps, values: series.values };
}

/** A new array as long as `items`, its first `n` copied. */
function prefixOf<T>(items: readonly T[], n: number): T[] {
  const out = new Array<T>(items.length);
  for (let i = 0; i < n; i++) out[i] = items[i]!;
  return out;
}

/**
 * The metric ids of the last write of known series: a collector writes the
 * same metrics in the same order, and a new array of 10,000 ids a push,
 * alive across its append, was promoted to the old generation to die there.
 */
let lastKnownIds: string[] = [];

/**
 * The points of a write's resolved metrics, resource by resource, in the
 * batch's columns; and how many points the refused ones had. A metric
 * named twice (a resource under two keys) pushes its last points at its
 * first place, as a Map would; only a batch with such a resource pays for
 * the map (a write may name 10,000 metrics).
 */
function pushedPoints(batch: CollectorBatch, { start, order }: ByResource, series: BatchPoints, refused: Set<number>): { points: IncomingPoints; dropped: number } {
  const { resources, metrics } = batch;
  const n = metrics.length;
  const metricIds = new Array<string>(n);
  const points: IncomingPoints = { metricIds, start: new Uint32Array(n), count: new Uint32Array(n), timestamps: series.timestamps, values: series.values };
  let shared = false;
  for (let r = 0; r < resources.length && !shared; r++) shared = resources[r]!.shared;
  const placed = shared ? new Map<string, number>() : undefined;
  let pushed = 0;
  let dropped = 0;
  for (let r = 0; r < resources.length; r++) {
    for (let i = start[r]!; i < start[r + 1]!; i++) {
      const m = order[i]!;
      if (refused.size > 0 && refused.has(m)) {
        dropped += series.count[m]!;
        continue;
      }
      const id = metrics[m]!.record?.id;
      if (id === undefined) continue;
      let at = placed?.get(id);
      if (at === undefined) {
        at = pushed++;
        metricIds[at] = id;
        placed?.set(id, at);
      }
      points.start[at] = series.start[m]!;
      points.count[at] = series.count[m]!;
    }
  }
  metricIds.length = pushed;
  points.start = points.start.subarray(0, pushed);
  points.count = points.count.subarray(0, pushed);
  return { points, dropped };
}

/** `check` once per distinct argument: every metric of a write is usually of the same creator. */
function memo(check: (creator: string) => void): (creator: string) => void {
  const passed = new Set<string>();
  // The creator last passed, compared before hashing: a write checks each of its 10,000 metrics.
  let last: string | undefined;
  return (creator) => {
    if (creator === last) return;
    if (!passed.has(creator)) {
      check(creator);
      passed.add(creator);
    }
    last = creator;
  };
}

/** checkCollectorMetricName once per slot: its name never changes. */
function checkName(metric: MetricSlot): void {
  if (metric.nameChecked) return;
  checkCollectorMetricName(metric.name);
  metric.nameChecked = true;
}

interface Plan {
  /** Resources to create, by id. */
  created: Map<string, NewResource>;
  /** Metrics to add to existing resources, by resource id. */
  extended: Map<string, Map<string, MetricSpec>>;
  /** The metrics to create in order: batch index, resource id, name. */
  newMetrics: { metric: number; id: string; name: string }[];
}

/** What a write's plan reads from the index, looked up before it in one round. */
interface Found {
  /** Resources whose metrics all hold the records a write found: the resource has existed since, unchanged in type and creator. */
  known: Uint8Array;
  /** The resources not known, that exist (any type). */
  resources: Map<string, ResourceRecord>;
  /** The policy of each new metric's name, from the rules (or why none). */
  policies: Map<string, PromiseSettledResult<string>>;
}

/** The metric ids of resources, by resource id and name, and their records. */
interface NamedMetrics {
  named: Map<string, Map<string, string>>;
  records: Map<string, MetricRecord>;
}

/** The metric ids of the batch's resources, by resource id and name. */
async function namedMetrics(engine: Engine, resourceIds: readonly string[]): Promise<NamedMetrics> {
  const named = await engine.index.metricsOfResources(resourceIds);
  const records = await metricsById(engine.index, [...named.values()].flatMap((byName) => [...byName.values()]));
  return { named, records };
}

function recordOf(found: NamedMetrics, resourceId: string, name: string): MetricRecord | undefined {
  const id = found.named.get(resourceId)?.get(name);
  return id === undefined ? undefined : found.records.get(id);
}

/**
 * Resolves the slots of the metrics that exist: records the batch resolved
 * before are trusted as long as the index holds them unchanged (the same
 * record; without a lookup while its metricRecordsVersion has not moved
 * since one found it so), the others are looked up by resource and name.
 */
async function lookUp(engine: Engine, batch: CollectorBatch, { start, order }: ByResource): Promise<Found> {
  // Read before the lookups: a change during them moves it on, and the next write looks again.
  const version = engine.index.metricRecordsVersion?.() ?? -1;
  const unchecked = (m: MetricSlot) => m.record !== undefined && (version === -1 || m.checked !== version);
  const { metrics } = batch;
  const held: string[] = [];
  // Indexed loops: this runs once per write, too rarely to be optimized, and a for-of there allocates a result per metric.
  for (let m = 0; m < metrics.length; m++) if (unchecked(metrics[m]!)) held.push(metrics[m]!.record!.id);
  const current = held.length === 0 ? [] : await engine.index.getMetrics(held);
  for (let m = 0, k = 0; m < metrics.length && k < held.length; m++) {
    const metric = metrics[m]!;
    if (!unchecked(metric)) continue;
    if (current[k++] === metric.record) metric.checked = version;
    else metric.record = undefined;
  }
  const known = new Uint8Array(batch.resources.length);
  const unknown: string[] = [];
  for (let r = 0; r < batch.resources.length; r++) {
    const slot = batch.resources[r]!;
    let trusted = start[r + 1]! > start[r]! && slot.creator !== undefined;
    for (let i = start[r]!; i < start[r + 1]!; i++) {
      if (batch.metrics[order[i]!]!.record !== undefined) continue;
      trusted = false;
    }
    known[r] = trusted ? 1 : 0;
    if (!trusted && typeof slot.id === 'string') unknown.push(slot.id);
  }
  const policies = new Map<string, PromiseSettledResult<string>>();
  if (unknown.length === 0) return { known, resources: new Map(), policies };
  const resources = await engine.index.getResources(unknown);
  // A collector's first write names only resources to create: none has metrics to look for.
  const existing = unknown.filter((id) => resources.has(id));
  const found: NamedMetrics = existing.length === 0 ? { named: new Map(), records: new Map() } : await namedMetrics(engine, existing);
  const missing = new Set<string>();
  for (let r = 0; r < batch.resources.length; r++) {
    const id = batch.resources[r]!.id;
    if (known[r] === 1 || typeof id !== 'string') continue;
    for (let i = start[r]!; i < start[r + 1]!; i++) {
      const metric = batch.metrics[order[i]!]!;
      metric.record = recordOf(found, id, metric.name);
      if (metric.record === undefined) missing.add(metric.name);
    }
  }
  const names = [...missing];
  const settled = await Promise.allSettled(names.map((name) => engine.index.policyNameForMetric(name)));
  names.forEach((name, i) => policies.set(name, settled[i]!));
  return { known, resources, policies };
}

/**
 * The slots of created resources and metrics, once the write is committed.
 * The resources this write created are of its type and creator, and the
 * metrics it created have the ids it chose: those are read by id (LMDB's
 * index has kept the records it wrote), only the rest (a metric another
 * write created meanwhile) by resource and name.
 */
async function resolveCreated(
  engine: Engine,
  batch: CollectorBatch,
  { start, order }: ByResource,
  type: string,
  refused: Set<number>,
  { created, extended }: Plan,
): Promise<void> {
  const chosen: number[] = [];
  const chosenIds: string[] = [];
  // A write of known series created nothing: no lookup by id per resource.
  const wrote = created.size > 0 || extended.size > 0;
  for (let r = 0; wrote && r < batch.resources.length; r++) {
    const slot = batch.resources[r]!;
    const resource = created.get(slot.id as string);
    if (resource !== undefined && slot.creator === undefined) slot.creator = resource.creator;
    const specs = resource?.metrics ?? extended.get(slot.id as string);
    if (specs === undefined) continue;
    for (let i = start[r]!; i < start[r + 1]!; i++) {
      const m = order[i]!;
      const spec = batch.metrics[m]!.record === undefined && !refused.has(m) ? specs.get(batch.metrics[m]!.name) : undefined;
      if (spec?.kind !== 'new' || spec.id === undefined) continue;
      chosen.push(m);
      chosenIds.push(spec.id);
    }
  }
  if (chosen.length > 0) {
    const records = await engine.index.getMetrics(chosenIds);
    chosen.forEach((m, k) => (batch.metrics[m]!.record = records[k]));
  }
  const ids: string[] = [];
  const { metrics } = batch;
  for (let r = 0; r < batch.resources.length; r++) {
    const slot = batch.resources[r]!;
    let open = slot.creator === undefined;
    for (let i = start[r]!; i < start[r + 1]! && !open; i++) open = metrics[order[i]!]!.record === undefined && !refused.has(order[i]!);
    if (open) ids.push(slot.id as string);
  }
  if (ids.length === 0) return;
  const [resources, found] = await Promise.all([engine.index.getResources(ids), namedMetrics(engine, ids)]);
  for (let r = 0; r < batch.resources.length; r++) {
    const slot = batch.resources[r]!;
    const id = slot.id as string;
    const resource = resources.get(id);
    if (slot.creator === undefined) slot.creator = ofType(resource, type) ? resource!.creator : undefined;
    for (let i = start[r]!; i < start[r + 1]!; i++) {
      const metric = batch.metrics[order[i]!]!;
      if (metric.record === undefined && !refused.has(order[i]!)) metric.record = recordOf(found, id, metric.name);
    }
  }
}

/** Whether a resource exists and is of `type` (any type for generic), as IndexStore.get answers. */
const ofType = (r: ResourceRecord | undefined, type: string): boolean => r !== undefined && (type === 'generic' || r.type === type);

/** A settled lookup's value, or its error thrown. */
function settledValue<T>(result: PromiseSettledResult<T>): T {
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}

/**
 * Every check of the write, resource by resource in order as Gnocchi makes
 * them, and what it has to create; throws the first refusal.
 */
function planCollectorWrite(
  batch: CollectorBatch,
  { start, order }: ByResource,
  write: CollectorWrite,
  found: Found,
  mayUpdate: (creator: string) => void,
  mayPost: (creator: string) => void,
): Plan {
  const { known } = found;
  // Kept for the resources that may be created only: a write of known series would grow an array of 10,000 for nothing.
  const attrs: Record<string, AttributeValue>[] = [];
  const policies = new Map<string, string>();
  const { resources, metrics } = batch;
  // Gnocchi gives every missing metric its policy first, which may refuse the write.
  for (let r = 0; r < resources.length; r++) {
    const slot = resources[r]!;
    const prepared = write.prepare(slot);
    if (slot.id instanceof Error) throw slot.id;
    // A known resource's metrics are all resolved: none needs a policy.
    if (known[r] === 1) continue;
    attrs[r] = prepared;
    for (let i = start[r]!; i < start[r + 1]!; i++) {
      const metric = metrics[order[i]!]!;
      if (metric.record === undefined && !policies.has(metric.name)) policies.set(metric.name, settledValue(found.policies.get(metric.name)!));
    }
  }
  const plan: Plan = { created: new Map(), extended: new Map(), newMetrics: [] };
  for (let r = 0; r < resources.length; r++) {
    const slot = resources[r]!;
    const id = slot.id as string;
    for (let i = start[r]!; i < start[r + 1]!; i++) checkName(metrics[order[i]!]!);
    if (known[r] === 1) {
      // Its metrics all resolved and its creator found: nothing to create, only the writer's rights to check.
      const creator = slot.creator!;
      mayUpdate(creator);
      for (let i = start[r]!; i < start[r + 1]!; i++) mayPost(metrics[order[i]!]!.record?.creator ?? creator);
      continue;
    }
    // A resource named again under another key (its id coinciding) is found as the write leaves it.
    let created = plan.created.get(id);
    const existing = found.resources.get(id);
    let creator = created?.creator ?? (ofType(existing, write.type) ? existing!.creator : undefined);
    if (creator === undefined) {
      if (existing !== undefined) throw new Conflict({ cause: 'Resource already exists', detail: id });
      creator = write.creator;
      created = { id, originalResourceId: slot.original, creator, userId: null, projectId: null, endedAt: null, attrs: attrs[r]!, metrics: new Map() };
      plan.created.set(id, created);
    } else {
      if (created === undefined) slot.creator = creator;
      mayUpdate(creator);
    }
    for (let i = start[r]!; i < start[r + 1]!; i++) {
      const m = order[i]!;
      const metric = metrics[m]!;
      if (metric.record !== undefined) continue;
      let specs = created?.metrics;
      if (specs === undefined) {
        specs = plan.extended.get(id);
        if (specs === undefined) plan.extended.set(id, (specs = new Map()));
      }
      if (specs.has(metric.name)) continue;
      specs.set(metric.name, { kind: 'new', archivePolicyName: policies.get(metric.name)!, unit: null, id: newMetricId() });
      plan.newMetrics.push({ metric: m, id, name: metric.name });
    }
    for (let i = start[r]!; i < start[r + 1]!; i++) mayPost(metrics[order[i]!]!.record?.creator ?? creator);
  }
  return plan;
}

/**
 * Takes out of the plan the new metrics past `maxSeries` (the first ones in
 * order are created while there is room), and the new resources left
 * without any; answers the batch indices of the metrics taken out.
 */
async function capNewMetrics(engine: Engine, plan: Plan, maxSeries: number): Promise<Set<number>> {
  const refused = new Set<number>();
  if (maxSeries === 0 || plan.newMetrics.length === 0) return refused;
  const room = Math.max(0, maxSeries - (await engine.index.countMetrics()));
  for (const { metric, id, name } of plan.newMetrics.slice(room)) {
    refused.add(metric);
    const created = plan.created.get(id);
    if (created === undefined) plan.extended.get(id)!.delete(name);
    else if (created.metrics!.delete(name) && created.metrics!.size === 0) plan.created.delete(id);
  }
  return refused;
}

/** What the collector routes keep for an engine: the series they remember and what they refused. */
export interface CollectorState {
  series: SeriesCache;
  /** New series the routes refused past --max-series (once per write naming them). */
  refusedSeries: number;
}

/** Beside each engine rather than in it: only the collector routes and /metrics use it. */
const states = new WeakMap<Engine, CollectorState>();

/** The collector state of an engine (one per engine: tests run several in one process). */
export function collectorState(engine: Engine): CollectorState {
  let state = states.get(engine);
  if (state === undefined) states.set(engine, (state = { series: new SeriesCache(), refusedSeries: 0 }));
  return state;
}
