/**
 * Named fault points for the failure tests: the places where a crash or a
 * stall is most dangerous, armed by an environment variable read once when
 * the module loads (in each thread: worker threads inherit the environment).
 *
 *   GNOCCHI_FAILPOINT=<point>:<action>[@<n>][,<point>:<action>[@<n>]...]
 *
 * `kill`: the process SIGKILLs itself there. `stall:<ms>`: waits ms there,
 * asynchronously (the rest of the process runs on), so that a test can
 * SIGSTOP the process inside the window. Either first writes `failpoint
 * <point> reached` to fd 2 synchronously, so the line is out before a kill,
 * from a worker thread too (whose process.stderr is relayed by the main
 * thread, later). `@n`: only the n-th time this thread reaches the point;
 * without it, every time.
 *
 * Unset, FAILPOINTS_ARMED is false and call sites skip the call: a point is
 * `if (FAILPOINTS_ARMED) await failpoint('name');`, so the normal path
 * gains no call, lookup or await.
 */
import { writeSync } from 'node:fs';
import { isMainThread, threadId } from 'node:worker_threads';

/** The points, and the moment each stands for (README: "Fault points"). */
export const FAILPOINTS = {
  'push.appended': 'a push durable in the incoming log, not yet noted by the processor nor answered',
  'process.computed': "a batch's updates computed from the states and records it loaded, not committed",
  'process.uploaded': "a batch's sealed splits uploaded to the object store (--splits s3://), not yet committed: objects no revision names",
  'process.committed': 'a batch committed, its results not yet back: its incoming records neither released nor dropped',
  'index.committed': 'an index write committed and notified (PostgreSQL index), not yet answered',
} as const;

export type FailpointName = keyof typeof FAILPOINTS;

export type FailpointAction = { kind: 'kill' } | { kind: 'stall'; ms: number };

export interface FailpointTrigger {
  action: FailpointAction;
  /** Fire only at this hit (1-based); undefined: at every hit. */
  nth: number | undefined;
}

export class FailpointSpecError extends Error {}

const ENTRY = /^([a-z.]+):(kill|stall:(\d+))(?:@([1-9]\d*))?$/;

/** GNOCCHI_FAILPOINT's triggers by point; FailpointSpecError naming the known points when it does not parse. */
export function parseFailpoints(spec: string): Map<FailpointName, FailpointTrigger> {
  const known = Object.keys(FAILPOINTS).join(', ');
  const triggers = new Map<FailpointName, FailpointTrigger>();
  for (const entry of spec.split(',')) {
    const m = ENTRY.exec(entry.trim());
    const name = m?.[1];
    if (m === null || name === undefined || !(name in FAILPOINTS)) {
      throw new FailpointSpecError(
        `GNOCCHI_FAILPOINT: "${entry}" is not <point>:kill|stall:<ms>[@<n>] with a known point (${known})`,
      );
    }
    if (triggers.has(name as FailpointName)) throw new FailpointSpecError(`GNOCCHI_FAILPOINT: ${name} is armed twice`);
    const action: FailpointAction = m[3] === undefined ? { kind: 'kill' } : { kind: 'stall', ms: Number(m[3]) };
    triggers.set(name as FailpointName, { action, nth: m[4] === undefined ? undefined : Number(m[4]) });
  }
  return triggers;
}

function load(spec: string): { triggers: Map<FailpointName, FailpointTrigger>; error: string | undefined } {
  if (spec === '') return { triggers: new Map(), error: undefined };
  try {
    return { triggers: parseFailpoints(spec), error: undefined };
  } catch (err) {
    return { triggers: new Map(), error: (err as Error).message };
  }
}

const { triggers, error } = load(process.env.GNOCCHI_FAILPOINT ?? '');

/** Whether any point is armed in this process. */
export const FAILPOINTS_ARMED = triggers.size > 0;

/** Why GNOCCHI_FAILPOINT does not parse (the server refuses to start), or undefined. */
export const FAILPOINT_SPEC_ERROR = error;

/** Times this thread reached each armed point. */
const hits = new Map<FailpointName, number>();

/** Acts if `name` is armed for this hit: never returns after a kill; a stall resolves after its ms. */
export function failpoint(name: FailpointName): Promise<void> | undefined {
  const trigger = triggers.get(name);
  if (trigger === undefined) return undefined;
  const hit = (hits.get(name) ?? 0) + 1;
  hits.set(name, hit);
  if (trigger.nth !== undefined && hit !== trigger.nth) return undefined;
  const { action } = trigger;
  const what = action.kind === 'kill' ? 'kill' : `stall ${action.ms} ms`;
  writeSync(2, `failpoint ${name} reached (${what}, hit ${hit}, pid ${process.pid}, ${isMainThread ? 'main thread' : `thread ${threadId}`})\n`);
  if (action.kind === 'stall') return new Promise((resolve) => setTimeout(resolve, action.ms));
  process.kill(process.pid, 'SIGKILL');
  // The process is gone before kill(2) returns; should the signal ever lag, nothing here goes on meanwhile.
  return new Promise(() => {});
}
