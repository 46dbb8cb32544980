/**
 * Ids of the metrics the service creates: UUIDs whose leading bits are the
 * creation time (RFC 9562 version 7, monotonic within a process), not
 * random ones. The databases keyed by metric id (metrics, metric_state;
 * PostgreSQL's index too) then receive new metrics at the end of their key
 * order, where LMDB leaves a split page full and starts the next one:
 * random ids land anywhere and leave pages two thirds full on average.
 * bench:footprint p60, 11,000 metrics: `metrics` 1.3 -> 0.9 MB,
 * `metric_state` 3.0 -> 2.0 MB. Existing metrics keep their ids and every
 * id reads as before: this orders new keys, it changes no format.
 */
import { v7 as uuidv7 } from 'uuid';

export function newMetricId(): string {
  return uuidv7();
}
