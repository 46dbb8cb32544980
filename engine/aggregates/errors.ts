/** The errors of cross-metric aggregation, in Gnocchi's shapes. */
import { BadRequest, NotFound } from '../errors.js';

type Detail = readonly (readonly (string | number)[])[];

/** Gnocchi's UnAggregableTimeseries: 400 naming the series involved. */
export function unaggregable(references: Detail, reason: string): BadRequest {
  return new BadRequest({
    cause: "Metrics can't being aggregated",
    reason,
    detail: references.map((r) => [...r]),
  });
}

/** A referenced aggregation method that a metric's policy lacks. */
export function unknownAggregation(metricId: string, method: string): NotFound {
  return new NotFound({ cause: 'Metrics with unknown aggregation', detail: [[metricId, method]] });
}
