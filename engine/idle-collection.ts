/**
 * One full garbage collection of the main thread once a burst of writes is
 * over. Measures waiting to be processed (their refs, the series of the
 * writes in flight) live long enough to be promoted to V8's old generation
 * and die there; V8 sets the next full collection to a multiple of the live
 * size (up to 4x on a machine with memory to spare), and when the writes
 * stop nothing brings it about: V8's memory reducer was never seen to run
 * on this server. bench:footprint p60 after a 2.3M-point burst and 30 s
 * idle: 190 MB of old generation in use of which 40 MB live, ArrayBuffers
 * 44 MB of which 18 MB live (their bytes are malloc'ed, freed only by that
 * collection). A collection of the ~40 MB live set takes tens of
 * milliseconds, once per burst.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Milliseconds between looks at the work done. */
export const IDLE_CHECK_MS = 5000;
/** Measures (accepted plus processed) since the last collection below which a quiet spell does not call for one. */
export const BURST_MEASURES = 100_000;

/** Tries at getting `gc()` before giving up: each loses only to another thread's unset in between. */
const GC_TRIES = 100;

/**
 * V8's `gc()`, which node gives only with --expose-gc: the flag is set
 * while a new context is made (it gets the function), then unset so that
 * contexts and workers made later do not see it. The flag is the process'
 * own: processing threads asked at once to release do this together, and
 * one's unset may come between another's set and its context, which then
 * has no `gc`; that one tries again.
 */
export function fullCollection(): () => void {
  for (let i = 0; i < GC_TRIES; i++) {
    setFlagsFromString('--expose-gc');
    let gc: unknown;
    try {
      gc = runInNewContext('globalThis.gc');
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
    if (typeof gc === 'function') return gc as () => void;
  }
  throw new Error(`gc() not exposed after ${GC_TRIES} tries`);
}

export interface IdleCollectionOptions {
  /** Work done so far (measures accepted plus processed): a running total. */
  work: () => number;
  /** Whether nothing waits to be done (the processing backlog is empty). */
  idle: () => boolean;
  collect: () => void;
}

export class IdleCollection {
  private seen: number;
  /** Work counted at the last collection (or start). */
  private collectedAt: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: IdleCollectionOptions) {
    this.seen = this.collectedAt = options.work();
  }

  start(intervalMs = IDLE_CHECK_MS): void {
    this.timer = setInterval(() => this.look(), intervalMs).unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * One look: collects when no work was done since the previous look, the
   * backlog is empty and a burst was done since the last collection.
   */
  look(): boolean {
    const work = this.options.work();
    const quiet = work === this.seen;
    this.seen = work;
    if (!quiet || work - this.collectedAt < BURST_MEASURES || !this.options.idle()) return false;
    this.collectedAt = work;
    this.options.collect();
    return true;
  }
}
