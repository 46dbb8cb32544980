/**
 * What the collector protocols (InfluxDB line protocol, Prometheus remote
 * write) share: Gnocchi's `get_or_create_resource_and_metrics`. A resource
 * named by a collector is created on first sight with every metric it
 * reports; later writes add the metrics it did not have yet. New metrics get
 * their archive policy from the archive policy rules.
 */
import type { Engine } from './engine.js';
import { BadRequest, Conflict, NamedMetricAlreadyExists, ResourceAlreadyExists } from './errors.js';
import type { MetricRecord } from './index.js';
import type { AttributeValue } from './resource-type.js';
import type { MetricSpec } from './resources.js';

/** Longest metric name a collector may create (Gnocchi's column is 255 wide). */
export const MAX_METRIC_NAME_LENGTH = 255;

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
  if (name === '' || [...name].length > MAX_METRIC_NAME_LENGTH) {
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
  const { resources } = engine;
  for (const name of spec.metricNames) checkCollectorMetricName(name);
  // A concurrent writer may create the resource or a metric between our read
  // and our write; the write fails cleanly and the next attempt sees it.
  for (let attempt = 0; ; attempt++) {
    try {
      const existing = resources.get(spec.type, spec.id);
      if (existing === undefined) {
        const other = resources.get('generic', spec.id);
        if (other !== undefined) throw new Conflict({ cause: 'Resource already exists', detail: spec.id });
        await resources.create(spec.type, {
          id: spec.id,
          originalResourceId: spec.originalResourceId,
          creator: spec.creator,
          userId: null,
          projectId: null,
          endedAt: null,
          attrs: spec.attrs,
          metrics: newMetrics(engine, spec.metricNames, spec.archivePolicyName),
        });
      } else {
        authorize(existing.creator);
        const have = resources.metricsOf(spec.id);
        const missing = spec.metricNames.filter((n) => !have.has(n));
        if (missing.length > 0) await resources.update(spec.type, spec.id, { metrics: newMetrics(engine, missing, spec.archivePolicyName) }, true);
      }
      break;
    } catch (err) {
      const raced = err instanceof ResourceAlreadyExists || err instanceof NamedMetricAlreadyExists;
      if (!raced || attempt >= 3) throw err;
    }
  }
  const out = new Map<string, MetricRecord>();
  for (const name of spec.metricNames) {
    const m = resources.metricByName(spec.id, name);
    if (m !== undefined) out.set(name, m);
  }
  return out;
}

function newMetrics(engine: Engine, names: readonly string[], policy: string | undefined): Map<string, MetricSpec> {
  const out = new Map<string, MetricSpec>();
  for (const name of names) out.set(name, { kind: 'new', archivePolicyName: policy ?? engine.index.policyNameForMetric(name), unit: null });
  return out;
}
