/**
 * The cluster tests' load and their one invariant (SCALE-OUT.md §7): pushes
 * spread over the nodes with a journal of what each push's answer says
 * about it, then a check through any node that no acknowledged measure is
 * lost and none counted twice. Every metric has one writer, distinct
 * seconds and values unique across the run, and the policy keeps each
 * second in its own bucket: a measure counted twice shows as a count of 2,
 * a lost one as a missing bucket, and a value from another push as a
 * wrong sum.
 */
import { BASE_SECONDS, call, isoSeconds, prng, randInt, request, type Outcome } from '../reliability/harness.js';

export const WORKLOAD_POLICY = {
  name: 'cluster-invariant',
  back_window: 0,
  aggregation_methods: ['count', 'sum'],
  // A timespan far past any run's: every push takes its seconds, refused or
  // not, and a Ceph run (measures 30 s apart, thousands of pushes refused)
  // passed 1,000,000 s, where the policy rightly dropped the oldest splits,
  // which the check then read as lost.
  definition: [{ granularity: '1 second', points: 100_000_000 }],
};

/** What the answers to a push say about one of its measures. */
export type Fate = 'acked' | 'maybe';

export interface Journal {
  metricIds: string[];
  /** Per metric: second -> value and what is known of it. Refused pushes are not kept: they were not applied. */
  measures: Map<number, { value: number; fate: Fate }>[];
  /** Answers by status (or `refused` / `lost`), e.g. `202: 120, 503: 4`. */
  statuses: Map<string, number>;
  /** Per metric, its next second; and the next value, unique across metrics. */
  nextSecond: number[];
  nextValue: number;
  /** Seconds between a metric's consecutive measures: 1 s rows seal a split every 3,600 / secondsApart measures. */
  secondsApart: number;
}

export async function createWorkload(node: string, metrics: number, secondsApart = 1): Promise<Journal> {
  const policy = await call(node, 'POST', '/v1/archive_policy', WORKLOAD_POLICY);
  if (policy.status !== 201 && policy.status !== 409) throw new Error(`archive policy: ${policy.status} ${policy.text}`);
  const metricIds: string[] = [];
  for (let i = 0; i < metrics; i++) {
    const m = await call(node, 'POST', '/v1/metric', { archive_policy_name: WORKLOAD_POLICY.name });
    if (m.status !== 201) throw new Error(`metric: ${m.status} ${m.text}`);
    metricIds.push(m.body.id as string);
  }
  return { metricIds, measures: metricIds.map(() => new Map()), statuses: new Map(), nextSecond: metricIds.map(() => 0), nextValue: 1, secondsApart };
}

/** The fate of a push's measures from its outcome; undefined: not applied. */
function fateOf(o: Outcome): Fate | undefined {
  if (o.kind === 'refused') return undefined;
  if (o.kind === 'lost') return 'maybe';
  if (o.answer.status === 202) return 'acked';
  // A 503 may come from a connection to Redis lost after the append was
  // sent: recorded or not, the node cannot tell (its client repeating it
  // is harmless: the same timestamps replace the same values).
  if (o.answer.status === 503) return 'maybe';
  return undefined;
}

export interface PushOptions {
  /** The node each push goes to, asked before each push (nodes may come and go). */
  nodes: () => readonly string[];
  clients: number;
  seed: number;
  running: () => boolean;
  /** Measures per metric per push, at most. */
  perPush?: number;
}

/**
 * Pushes batches until `running()` turns false: client c writes the
 * metrics i with i mod clients = c (one writer per metric), round robin
 * over the nodes.
 */
export async function push(journal: Journal, options: PushOptions): Promise<void> {
  let turn = 0;
  const client = async (c: number) => {
    const rand = prng(options.seed ^ (c * 104_729));
    const mine = journal.metricIds.map((_, i) => i).filter((i) => i % options.clients === c);
    while (options.running()) {
      const nodes = options.nodes();
      const node = nodes[turn++ % nodes.length]!;
      const pushed: [metric: number, second: number, value: number][] = [];
      const body: Record<string, { timestamp: string; value: number }[]> = {};
      for (const m of mine) {
        const n = randInt(rand, 1, options.perPush ?? 10);
        body[journal.metricIds[m]!] = Array.from({ length: n }, () => {
          const second = journal.nextSecond[m]!;
          journal.nextSecond[m] = second + journal.secondsApart;
          const value = journal.nextValue++;
          pushed.push([m, second, value]);
          return { timestamp: isoSeconds(second), value };
        });
      }
      const o = await request(node, 'POST', '/v1/batch/metrics/measures', body);
      const status = o.kind === 'answer' ? String(o.answer.status) : o.kind;
      journal.statuses.set(status, (journal.statuses.get(status) ?? 0) + 1);
      const fate = fateOf(o);
      if (fate !== undefined) for (const [m, second, v] of pushed) journal.measures[m]!.set(second, { value: v, fate });
    }
  };
  await Promise.all(Array.from({ length: options.clients }, (_, c) => client(c)));
}

type Point = [timestamp: string, granularity: number, value: number];

const secondOf = (timestamp: string) => Math.round(Date.parse(timestamp) / 1000 - BASE_SECONDS);

/**
 * Violations of the invariant as read through `node` with refresh=true:
 * every acknowledged measure there once with its value, a maybe-applied
 * one at most once with its value, nothing else.
 */
export async function violations(node: string, journal: Journal): Promise<string[]> {
  const found: string[] = [];
  for (const [m, id] of journal.metricIds.entries()) {
    const read = async (aggregation: string) => {
      const r = await call(node, 'GET', `/v1/metric/${id}/measures?refresh=true&aggregation=${aggregation}&granularity=1`, undefined, 120_000);
      if (r.status !== 200) throw new Error(`read ${id} ${aggregation}: ${r.status} ${r.text}`);
      return new Map((r.body as Point[]).map(([t, , v]) => [secondOf(t), v]));
    };
    const counts = await read('count');
    const sums = await read('sum');
    const expected = journal.measures[m]!;
    for (const [second, { value, fate }] of expected) {
      const count = counts.get(second);
      if (count === undefined) {
        if (fate === 'acked') found.push(`metric ${m}: acknowledged measure at second ${second} lost`);
      } else if (count !== 1) found.push(`metric ${m}: measure at second ${second} counted ${count} times`);
      else if (sums.get(second) !== value) found.push(`metric ${m}: second ${second} holds ${sums.get(second)}, pushed ${value}`);
    }
    for (const second of counts.keys()) {
      if (!expected.has(second)) found.push(`metric ${m}: a measure at second ${second} that no push applied`);
    }
  }
  return found;
}

/** Acknowledged measures in the journal. */
export function acknowledged(journal: Journal): number {
  return journal.measures.reduce((n, m) => n + [...m.values()].filter((x) => x.fate === 'acked').length, 0);
}
