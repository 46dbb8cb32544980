/**
 * The series Redis carries a stamp: the version of the series records its
 * nodes write. A node raises it to its own when it joins; a node of an
 * older release, which cannot read what newer ones wrote (metric states of
 * version 4 are unreadable to a node that writes version 3), refuses to
 * start rather than fail on every metric they processed.
 * Nodes of releases before the stamp do not check it: those are upgraded
 * together.
 */
import type { Redis } from 'ioredis';
import { SeriesFormatTooNew } from '../../errors.js';
import { METRIC_STATE_VERSION } from '../../metric-state.js';
import { runScript, unavailable } from './connection.js';
import { SERIES_FORMAT_KEY } from './keys.js';
import { CLAIM_FORMAT } from './scripts.js';

/**
 * What this release writes. Metric states are the records whose layout has
 * changed; a change to chunks or split keys that older releases cannot read
 * raises it too.
 */
export const SERIES_FORMAT = METRIC_STATE_VERSION;

/** Raises the stamp to SERIES_FORMAT; SeriesFormatTooNew when it is above. */
export async function claimSeriesFormat(client: Redis, ours = SERIES_FORMAT): Promise<void> {
  let found: number;
  try {
    found = Number(await runScript(client, CLAIM_FORMAT, [SERIES_FORMAT_KEY], [String(ours)]));
  } catch (err) {
    throw unavailable(err);
  }
  if (found > ours) throw new SeriesFormatTooNew(found, ours);
}
