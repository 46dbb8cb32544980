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
