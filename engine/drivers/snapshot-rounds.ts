/**
 * Computing on a snapshot that may lack sealed splits: a network series
 * store loads only the split ranges asked for, and a computation that
 * reads another split (a back-window merge into an old split, a read whose
 * ranges were guessed short) throws SnapshotMiss. Load again with the
 * missed splits and compute again: the computation is pure over the
 * snapshot, so a second round gives what one round with every split would.
 */
import { SnapshotMiss } from '../errors.js';
import type { SeriesRange, SeriesSnapshot, SeriesStore } from './types.js';

/** One round per missed split is possible in principle; more than a few means the computation reads what it never says. */
const MAX_ROUNDS = 8;

/** The exact ranges of the missed splits' keys. */
function missedRanges(miss: SnapshotMiss): SeriesRange[] {
  return miss.keys.map(([metricId, granularity, key]) => ({ metricId, granularity, start: key, end: key + 1 }));
}

/**
 * Loads these metrics with `ranges` and runs `compute` on the snapshot,
 * loading again with what it missed until it has all it reads. The
 * snapshot is released after each round: `compute` copies out what it
 * keeps.
 */
export async function withSnapshot<T>(
  series: SeriesStore,
  metricIds: readonly string[],
  ranges: readonly SeriesRange[],
  compute: (snapshot: SeriesSnapshot) => T | Promise<T>,
): Promise<T> {
  let wanted = ranges;
  for (let round = 1; ; round++) {
    const snapshot = await series.load(metricIds, wanted);
    try {
      return await compute(snapshot);
    } catch (err) {
      if (!(err instanceof SnapshotMiss) || round >= MAX_ROUNDS) throw err;
      wanted = [...wanted, ...missedRanges(err)];
    } finally {
      snapshot.release();
    }
  }
}
