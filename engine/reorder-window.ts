/**
 * The reorder window: which of a metric's pending pushes background
 * processing may take now. Aggregating a point fixes which older points the
 * back window still accepts, so a push processed after one holding a newer
 * point of the same metric loses the points the back window no longer
 * covers, as Gnocchi drops late points. Collectors with several requests in
 * flight, or agents racing, make overtaking routine, a few ms apart, and a
 * server busy creating the resources of one push lets others overtake it
 * by seconds. So a push is taken only once it has waited the window, and
 * then only with the pushes it may have overtaken, so that they are
 * aggregated together, sorted by timestamp. Reads with `refresh=true` take
 * everything at once.
 *
 * A point is then kept whenever its push reached the server less than the
 * window after the push of any newer point of its metric was noted, unless
 * the metric's pushes keep overtaking each other for twice the window (see
 * takeable) or its push took longer than RECEIVING_HOLD_MS to handle.
 */

/** A pending push of one metric, as the rule sees it. */
export interface WindowRef {
  /** The incoming record: the metric's refs are in seq order, and a batch takes a prefix of them. */
  seq: number;
  /** The earliest and the latest timestamp among the metric's points in it. */
  oldest: number;
  newest: number;
  /** When this process noted it (ms, monotonic). */
  notedAt: number;
}

/**
 * A push whose handling (reading its body, creating the resources it names,
 * appending its points) takes longer than this holds back no processing
 * (see windowCutoff): its points are late data, as Gnocchi has them. A
 * bound, so that a slow client or a dependency that hangs cannot stop
 * processing.
 */
export const RECEIVING_HOLD_MS = 30_000;

/**
 * The latest note time of a push that has waited the window `windowMs` at
 * `now`, when the oldest push still being handled (its request's headers
 * read, its answer not yet sent) was received at `oldestReceiving`
 * (Infinity: none). Such a push may hold points older than those noted
 * since it was received: they wait for it, however long its handling takes
 * (up to RECEIVING_HOLD_MS), so that arrival order is the order in which
 * pushes reached the server, not the order in which the server was done
 * with them.
 */
export function windowCutoff(now: number, windowMs: number, oldestReceiving: number): number {
  if (windowMs <= 0) return now;
  return Math.min(now, Math.max(oldestReceiving, now - RECEIVING_HOLD_MS)) - windowMs;
}

/**
 * How many of a metric's refs (oldest first) a round may take with the
 * window `windowMs` and `cutoff` (windowCutoff; Infinity for a refresh,
 * which takes every ref), none past the seq `followed` (the records noted
 * so far: a state keeps the highest seq it consumed, so a batch is always a
 * prefix of the records that may exist).
 *
 * The refs noted by `cutoff` have waited the window, and after them come
 * the younger ones whose points are all no later than theirs: taking those
 * changes nothing of what the back window will accept, and keeps a burst
 * that the cutoff happens to split with the pushes it overtook. A younger
 * ref with a newer point waits: taken now, it would make late the older
 * points that may still arrive within its window.
 *
 * A ref left behind must hold no point older than the batch's latest,
 * which would then fall out of the back window: one noted after a younger
 * and newer ref that waits, say. The batch then stops before the first ref
 * newer than such a point. When none can be taken so, the metric waits,
 * and once its oldest ref has waited twice the window, the refs noted by
 * `cutoff` and those not newer go, as without this check: a metric whose
 * pushes keep overtaking each other is not held back for ever.
 */
export function takeable(refs: readonly WindowRef[], cutoff: number, windowMs: number, followed = Infinity): number {
  let taken = 0;
  let latest = -Infinity;
  for (; taken < refs.length; taken++) {
    const ref = refs[taken]!;
    if (ref.seq > followed) break;
    if (ref.notedAt <= cutoff) latest = Math.max(latest, ref.newest);
    else if (ref.newest > latest) break;
  }
  if (taken === 0 || cutoff === Infinity || windowMs <= 0) return taken;
  let left = Infinity;
  for (let i = taken; i < refs.length; i++) left = Math.min(left, refs[i]!.oldest);
  if (left >= latest) return taken;
  const cut = cleanCut(refs, taken, left);
  if (cut > 0) return cut;
  return refs[0]!.notedAt <= cutoff - windowMs ? taken : 0;
}

/**
 * Windows a metric whose newest pushes are still in the window waits for
 * them, past the cutoff, before taking its older ones alone (see worthTaking).
 */
export const PATIENCE_WINDOWS = 2;

/**
 * How many of the `taken` refs that takeable gives a round takes now: all
 * of them when they are all the metric's refs, or once its oldest was noted
 * PATIENCE_WINDOWS windows before the cutoff; none otherwise, so that the
 * pushes still in the window join them in one update. An update costs its
 * metric a state read, planning and a state write whether it holds one
 * point or thirty: without this, a collector with pushes in flight has its
 * metrics updated once per push, and a backlog's tail updates most metrics
 * twice (session 21: 78 batches of 256 where 40 hold every metric once).
 * Processing without a refresh comes later by up to as many windows, which
 * is still well within Gnocchi's own processing delay.
 */
export function worthTaking(refs: readonly WindowRef[], taken: number, cutoff: number, windowMs: number): number {
  if (taken === 0 || taken === refs.length || windowMs <= 0) return taken;
  return refs[0]!.notedAt <= cutoff - PATIENCE_WINDOWS * windowMs ? taken : 0;
}

/**
 * Whether a round at `cutoff` sweeps the pending metrics for those worth
 * taking, from when the oldest record still pending and the last record
 * were noted: once every record has left the window, or the oldest has
 * waited the patience past it. A metric whose pushes have all left the
 * window may so wait for others' newer pushes, up to the same patience.
 * Sweeping at every round (one comes with each push) cost the main thread
 * a sweep over all 10,000 metrics of a time-major backlog per push, each
 * found waiting for its newest pushes.
 */
export function worthSweeping(oldestNoted: number, newestNoted: number, cutoff: number, windowMs: number): boolean {
  return cutoff >= sweepCutoff(oldestNoted, newestNoted, windowMs);
}

/** The least cutoff at which worthSweeping holds: a round comes back when the cutoff reaches it. */
export function sweepCutoff(oldestNoted: number, newestNoted: number, windowMs: number): number {
  return Math.min(newestNoted, oldestNoted + PATIENCE_WINDOWS * windowMs);
}

/**
 * The longest prefix of at most `taken` refs whose points are all no later
 * than any point after it; `left` is the oldest point of refs[taken..].
 */
function cleanCut(refs: readonly WindowRef[], taken: number, left: number): number {
  const oldestFrom = new Float64Array(taken + 1);
  oldestFrom[taken] = left;
  for (let c = taken - 1; c >= 0; c--) oldestFrom[c] = Math.min(oldestFrom[c + 1]!, refs[c]!.oldest);
  let cut = 0;
  let latest = -Infinity;
  for (let c = 1; c <= taken; c++) {
    latest = Math.max(latest, refs[c - 1]!.newest);
    if (latest <= oldestFrom[c]!) cut = c;
  }
  return cut;
}
