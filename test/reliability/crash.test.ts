// Crash safety of the compiled server (issue 7): SIGKILL at random moments
// under concurrent writes, kills while the processor is mid-batch, the
// on-disk format version check, and the LMDB map-size limit. Every kill is
// driven by a seeded PRNG: the seed is printed, and `CRASH_SEED=N` replays it.
import { rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { open } from 'lmdb';
import { afterAll, describe, expect, it } from 'vitest';
import { dbPath, FORMAT_VERSION } from '../../engine/storage.js';
import {
  BASE_SECONDS, call, isoSeconds, kill, prng, randInt, request, seedFromEnv, sleep, spawnServer, startServer, tempDir,
  type Outcome, type Server,
} from './harness.js';

const SEED = seedFromEnv('CRASH_SEED');
console.log(`crash.test.ts seed: ${SEED} (replay with CRASH_SEED=${SEED})`);

const servers: Server[] = [];
const dirs: string[] = [];

async function start(dir: string, args: string[] = []): Promise<Server> {
  const s = await startServer(dir, args);
  servers.push(s);
  return s;
}

function dir(prefix: string): string {
  const d = tempDir(prefix);
  dirs.push(d);
  return d;
}

afterAll(async () => {
  for (const s of servers) await kill(s);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const secondsOf = (ts: string) => Math.round(Date.parse(ts) / 1000 - BASE_SECONDS);

/** `[[ts, granularity, value], ...]` of one aggregation at one granularity. */
async function points(url: string, metric: string, aggregation: string, granularity: number): Promise<[string, number, number][]> {
  const r = await call(url, 'GET', `/v1/metric/${metric}/measures?refresh=true&aggregation=${aggregation}&granularity=${granularity}`, undefined, 60_000);
  expect(r.status, r.text).toBe(200);
  return r.body as [string, number, number][];
}

// ---------------------------------------------------------------------------
// 1. Random kills under concurrent pushes and resource churn: the client model
// ---------------------------------------------------------------------------

interface PushedMeasure {
  metric: number;
  second: number;
  value: number;
}

interface PushRequest {
  measures: PushedMeasure[];
  outcome: 'acked' | 'maybe' | 'not-applied';
}

/** A resource's possible states: `absent`, or `u:<user_id>` when present. */
type ResourceStates = Set<string>;

interface World {
  metricIds: string[];
  pushes: PushRequest[];
  resources: Map<string, ResourceStates>;
  violations: string[];
  statuses: Map<string, number>;
  nextValue: number;
  nextSecond: number[];
}

const CLIENTS = 4;
const METRICS_PER_CLIENT = 2;

async function client(world: World, c: number, rand: () => number, url: string, running: () => boolean): Promise<void> {
  const mine = Array.from({ length: METRICS_PER_CLIENT }, (_, k) => c + k * CLIENTS);
  const myResources: string[] = [];
  const note = (what: string, o: Outcome) => {
    const key = `${what} ${o.kind === 'answer' ? o.answer.status : o.kind}`;
    world.statuses.set(key, (world.statuses.get(key) ?? 0) + 1);
  };
  const take = (metric: number, n: number): PushedMeasure[] =>
    Array.from({ length: n }, () => ({ metric, second: world.nextSecond[metric]!++, value: world.nextValue++ }));
  const body = (ms: PushedMeasure[]) => ms.map((m) => ({ timestamp: isoSeconds(m.second), value: m.value }));

  while (running()) {
    const action = rand();
    if (action < 0.65) {
      // Pushes: strictly increasing, distinct seconds per metric (each metric
      // has one writer), values unique across the run.
      let measures: PushedMeasure[];
      let o: Outcome;
      if (action < 0.35) {
        const metric = mine[randInt(rand, 0, mine.length - 1)]!;
        measures = take(metric, randInt(rand, 1, 20));
        o = await request(url, 'POST', `/v1/metric/${world.metricIds[metric]}/measures`, body(measures));
        note('push', o);
      } else {
        measures = [];
        const batch: Record<string, unknown> = {};
        for (const metric of mine) {
          const ms = take(metric, randInt(rand, 1, 15));
          measures.push(...ms);
          batch[world.metricIds[metric]!] = body(ms);
        }
        o = await request(url, 'POST', '/v1/batch/metrics/measures', batch);
        note('batch', o);
      }
      const push: PushRequest = { measures, outcome: 'maybe' };
      if (o.kind === 'refused') push.outcome = 'not-applied';
      else if (o.kind === 'answer') {
        if (o.answer.status === 202) push.outcome = 'acked';
        else {
          world.violations.push(`push answered ${o.answer.status}: ${o.answer.text}`);
          push.outcome = 'not-applied';
        }
      }
      world.pushes.push(push);
    } else {
      // Resource churn on this client's own resources.
      const live = myResources.filter((id) => !(world.resources.get(id)!.size === 1 && world.resources.get(id)!.has('absent')));
      const r = rand();
      if (live.length < 2 || r < 0.35) {
        const id = randomUUID();
        myResources.push(id);
        world.resources.set(id, new Set(['absent']));
        const o = await request(url, 'POST', '/v1/resource/generic', { id, user_id: 'u0', project_id: 'p' });
        note('create', o);
        apply(world, id, o, 201, 'u:u0', `create ${id}`);
      } else {
        const id = live[randInt(rand, 0, live.length - 1)]!;
        if (r < 0.8) {
          const user = `u${randInt(rand, 1, 1_000_000)}`;
          const o = await request(url, 'PATCH', `/v1/resource/generic/${id}`, { user_id: user });
          note('patch', o);
          apply(world, id, o, 200, `u:${user}`, `patch ${id} user_id=${user}`);
        } else {
          const o = await request(url, 'DELETE', `/v1/resource/generic/${id}`);
          note('delete', o);
          apply(world, id, o, 204, 'absent', `delete ${id}`);
        }
      }
    }
  }
}

/**
 * Updates a resource's possible states after a create (201), patch (200) or
 * delete (204), given its outcome. An answer constrains what the state was
 * before: an answer inconsistent with every possible state means an
 * acknowledged change was lost (or applied twice).
 */
function apply(world: World, id: string, o: Outcome, okStatus: number, after: string, what: string): void {
  const states = world.resources.get(id)!;
  const present = [...states].some((s) => s !== 'absent');
  if (o.kind === 'refused') return;
  if (o.kind === 'lost') {
    // Maybe applied: either state is possible from now on.
    if (okStatus === 201 ? states.has('absent') : present) states.add(after);
    return;
  }
  const { status } = o.answer;
  const expected = okStatus === 201 ? states.has('absent') : present;
  if (status === okStatus) {
    if (!expected) world.violations.push(`${what} answered ${status} but the resource could only be ${[...states].join('|')}`);
    world.resources.set(id, new Set([after]));
  } else if (status === 404 && okStatus !== 201) {
    if (!states.has('absent')) world.violations.push(`${what} answered 404 but the resource could only be ${[...states].join('|')}`);
    world.resources.set(id, new Set(['absent']));
  } else if (status === 409 && okStatus === 201) {
    if (!present) world.violations.push(`${what} answered 409 but the resource could only be ${[...states].join('|')}`);
  } else {
    world.violations.push(`${what} answered ${status}: ${o.answer.text}`);
  }
}

// ---------------------------------------------------------------------------
// 2. Kills while the processor is mid-batch: input and comparison
// ---------------------------------------------------------------------------

const PROC_POLICY = {
  name: 'proc',
  back_window: 1,
  aggregation_methods: ['count', 'sum', 'mean', 'min', 'max', 'last'],
  definition: [
    { granularity: '1 second', points: 100_000 },
    { granularity: '1 minute', points: 10_000 },
    { granularity: '1 hour', points: 1_000 },
  ],
};

/** Chunks of `{metricIndex: measures}`: later chunks strictly later in time, shuffled and with duplicates inside. */
function backlogInput(seed: number, metrics: number, chunks: number, perChunk: number) {
  const rand = prng(seed);
  const cursor = Array.from({ length: metrics }, () => 0);
  const out: { timestamp: string; value: number }[][][] = [];
  for (let c = 0; c < chunks; c++) {
    const chunk: { timestamp: string; value: number }[][] = [];
    for (let m = 0; m < metrics; m++) {
      const ms: { timestamp: string; value: number }[] = [];
      for (let i = 0; i < perChunk; i++) {
        cursor[m]! += randInt(rand, 1, 1_500);
        const t = new Date(BASE_SECONDS * 1000 + cursor[m]!).toISOString().replace('Z', '+00:00');
        ms.push({ timestamp: t, value: Math.round(rand() * 10_000) / 100 - 50 });
        // Now and then the same timestamp again, later in the request: the first received wins.
        if (rand() < 0.01) ms.push({ timestamp: t, value: 1_000 + i });
      }
      for (let i = ms.length - 1; i > 0; i--) {
        const j = randInt(rand, 0, i);
        [ms[i], ms[j]] = [ms[j]!, ms[i]!];
      }
      chunk.push(ms);
    }
    out.push(chunk);
  }
  return out;
}

async function setupProc(url: string, metrics: number): Promise<string[]> {
  expect((await call(url, 'POST', '/v1/archive_policy', PROC_POLICY)).status).toBe(201);
  const ids: string[] = [];
  for (let i = 0; i < metrics; i++) {
    const m = await call(url, 'POST', '/v1/metric', { archive_policy_name: 'proc' });
    expect(m.status).toBe(201);
    ids.push(m.body.id as string);
  }
  return ids;
}

async function pushChunk(url: string, ids: string[], chunk: { timestamp: string; value: number }[][]): Promise<void> {
  const body = Object.fromEntries(ids.map((id, m) => [id, chunk[m]]));
  const r = await call(url, 'POST', '/v1/batch/metrics/measures', body, 60_000);
  expect(r.status, r.text).toBe(202);
}

async function backlog(url: string): Promise<number> {
  return (await call(url, 'GET', '/v1/status?details=false')).body.storage.summary.measures as number;
}

/** Everything the comparison looks at, per metric. */
async function snapshot(url: string, ids: string[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const id of ids) {
    const m: Record<string, unknown> = {};
    for (const agg of ['count', 'sum']) m[`${agg}@1`] = await points(url, id, agg, 1);
    for (const agg of PROC_POLICY.aggregation_methods) {
      for (const g of [60, 3600]) m[`${agg}@${g}`] = await points(url, id, agg, g);
    }
    out.push(m);
  }
  return out;
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => i);

// ---------------------------------------------------------------------------
// 3. The on-disk format version: reading and writing it with lmdb directly
// ---------------------------------------------------------------------------

function readFormat(dataDir: string): unknown {
  const root = open({ path: dbPath(dataDir), maxDbs: 64 });
  try {
    return root.openDB({ name: 'meta', encoding: 'msgpack' }).get('format');
  } finally {
    void root.close();
  }
}

function writeFormat(dataDir: string, version: unknown): void {
  const root = open({ path: dbPath(dataDir), maxDbs: 64 });
  try {
    root.openDB({ name: 'meta', encoding: 'msgpack' }).putSync('format', version);
  } finally {
    void root.close();
  }
}

// ---------------------------------------------------------------------------
// The tests: 1. random kills, 2. kills mid-batch, 3. format version,
// 4. the LMDB map-size limit.
// ---------------------------------------------------------------------------

// Sequential: most of the time goes to server startups, which are CPU-bound,
// so running the tests concurrently gains nothing on a loaded machine.
describe('crash safety of the compiled server', () => {
  it('keeps every acknowledged measure exactly once and every acknowledged resource change across 20+ SIGKILLs', async () => {
    const rand = prng(SEED);
    const d = dir('crash');
    let server = await start(d);
    expect((await call(server.url, 'POST', '/v1/archive_policy', {
      name: 'crash',
      back_window: 0,
      aggregation_methods: ['count', 'sum'],
      definition: [{ granularity: '1 second', points: 100_000 }, { granularity: '1 day', points: 30 }],
    })).status).toBe(201);
    const world: World = {
      metricIds: [],
      pushes: [],
      resources: new Map(),
      violations: [],
      statuses: new Map(),
      nextValue: 1,
      nextSecond: [],
    };
    for (let i = 0; i < CLIENTS * METRICS_PER_CLIENT; i++) {
      const m = await call(server.url, 'POST', '/v1/metric', { archive_policy_name: 'crash' });
      expect(m.status).toBe(201);
      world.metricIds.push(m.body.id as string);
      world.nextSecond.push(0);
    }

    const CYCLES = 20;
    const kills: number[] = [];
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      let running = true;
      const url = server.url;
      const clients = Array.from({ length: CLIENTS }, (_, c) => client(world, c, prng(SEED ^ (cycle * 7919 + c * 104_729)), url, () => running));
      const delay = randInt(rand, 20, 300);
      kills.push(delay);
      await sleep(delay);
      running = false; // no new requests: the ones in flight meet the kill
      const exit = await kill(server);
      await Promise.all(clients);
      expect(exit.signal, server.stderr()).toBe('SIGKILL');
      expect(server.stderr(), 'the server logged an error before it was killed').not.toMatch(/processing failed|unhandled error/);
      server = await start(d);
    }

    // The final server reads everything back (processing pending measures).
    const url = server.url;
    const acked = world.pushes.filter((p) => p.outcome === 'acked');
    const maybe = world.pushes.filter((p) => p.outcome === 'maybe');
    const bySecond = new Map<string, { value: number; push: PushRequest }>();
    for (const p of [...acked, ...maybe]) for (const m of p.measures) bySecond.set(`${m.metric}/${m.second}`, { value: m.value, push: p });
    const seen = new Set<string>();
    const problems: string[] = [...world.violations];
    for (let metric = 0; metric < world.metricIds.length; metric++) {
      const id = world.metricIds[metric]!;
      const counts = await points(url, id, 'count', 1);
      const sums = new Map((await points(url, id, 'sum', 1)).map(([ts, , v]) => [secondsOf(ts), v]));
      let count = 0;
      let sum = 0;
      for (const [ts, , c] of counts) {
        const second = secondsOf(ts);
        const key = `${metric}/${second}`;
        const pushed = bySecond.get(key);
        count += c;
        sum += sums.get(second) ?? Number.NaN;
        if (pushed === undefined) problems.push(`metric ${metric} has a point at ${ts} that no acknowledged or unanswered push carried`);
        else if (c !== 1 || sums.get(second) !== pushed.value) {
          problems.push(`metric ${metric} at ${ts}: count ${c} sum ${sums.get(second)}, pushed once with value ${pushed.value} (${pushed.push.outcome})`);
        }
        seen.add(key);
      }
      // The coarse granularity must agree with the fine one (no double counting on either).
      const day = await points(url, id, 'count', 86_400);
      const daySum = await points(url, id, 'sum', 86_400);
      expect(day.reduce((a, p) => a + p[2], 0), `day count of metric ${metric}`).toBe(count);
      expect(daySum.reduce((a, p) => a + p[2], 0), `day sum of metric ${metric}`).toBe(sum);
    }
    let lost = 0;
    for (const p of acked) {
      for (const m of p.measures) {
        if (!seen.has(`${m.metric}/${m.second}`)) {
          lost++;
          if (lost <= 10) problems.push(`acknowledged measure lost: metric ${m.metric} at ${isoSeconds(m.second)} value ${m.value}`);
        }
      }
    }
    // An unanswered push is one transaction: all of it or none of it.
    let maybeApplied = 0;
    for (const p of maybe) {
      const present = p.measures.filter((m) => seen.has(`${m.metric}/${m.second}`)).length;
      if (present === p.measures.length) maybeApplied++;
      else if (present !== 0) problems.push(`unanswered push applied partially: ${present} of ${p.measures.length} measures`);
    }
    if (lost > 10) problems.push(`... ${lost} acknowledged measures lost in all`);

    // Resources: each one in a state its acknowledged history allows.
    const listed = await call(url, 'GET', '/v1/resource/generic?limit=1000');
    expect(listed.status).toBe(200);
    const listedIds = new Set((listed.body as { id: string }[]).map((r) => r.id));
    let livingResources = 0;
    for (const [id, states] of world.resources) {
      const r = await call(url, 'GET', `/v1/resource/generic/${id}`);
      const actual = r.status === 404 ? 'absent' : r.status === 200 ? `u:${r.body.user_id}` : `status ${r.status}`;
      if (actual !== 'absent') livingResources++;
      if (!states.has(actual)) problems.push(`resource ${id} is ${actual}, acknowledged history allows only ${[...states].join('|')}`);
      if ((actual !== 'absent') !== listedIds.has(id)) problems.push(`resource ${id} is ${actual} but ${listedIds.has(id) ? 'is' : 'is not'} listed`);
    }
    for (const id of listedIds) if (!world.resources.has(id)) problems.push(`resource ${id} listed but never created`);

    const ackedMeasures = acked.reduce((a, p) => a + p.measures.length, 0);
    console.log(
      `crash seed ${SEED}: ${CYCLES} SIGKILLs after ${kills.join(',')} ms; ` +
        `${acked.length} pushes acknowledged (${ackedMeasures} measures), ${maybe.length} unanswered (${maybeApplied} applied), ` +
        `${world.pushes.length - acked.length - maybe.length} refused; ${world.resources.size} resources (${livingResources} alive); ` +
        `answers: ${JSON.stringify(Object.fromEntries(world.statuses))}`,
    );
    expect(problems, `seed ${SEED} (replay with CRASH_SEED=${SEED})`).toEqual([]);
    expect(acked.length, 'the clients got pushes through').toBeGreaterThan(CYCLES / 2);

    expect(await kill(server, 'SIGTERM')).toEqual({ code: 0, signal: null });
  }, 180_000);

  it('aggregates after repeated SIGKILLs mid-batch equal those of a run without crashes', async () => {
    const METRICS = 6;
    const CHUNKS = 5;
    const PER_CHUNK = 2_000;
    const rand = prng(SEED ^ 0x5eed);
    const input = backlogInput(SEED, METRICS, CHUNKS, PER_CHUNK);

    // With crashes: push a chunk, then SIGKILL shortly after, while it is processed.
    const crashDir = dir('proc-crash');
    let server = await start(crashDir);
    const crashIds = await setupProc(server.url, METRICS);
    // Measures still in the incoming store after each restart: > 0 means the
    // SIGKILL cut the batch that the push started before it committed.
    const pendingAfterRestart: number[] = [];
    for (const [c, chunk] of input.entries()) {
      await pushChunk(server.url, crashIds, chunk); // processing starts as the 202 goes out
      // Every other chunk: kill at once. Otherwise either a little later, or
      // once the backlog committed, so later chunks build on state written
      // before a kill.
      if (c % 2 === 1) {
        if (rand() < 0.5) await sleep(randInt(rand, 1, 40));
        else for (let i = 0; i < 600 && (await backlog(server.url)) > 0; i++) await sleep(50);
      }
      expect((await kill(server)).signal).toBe('SIGKILL');
      expect(server.stderr()).not.toMatch(/processing failed|unhandled error/);
      server = await start(crashDir);
      pendingAfterRestart.push(await backlog(server.url));
    }
    const crashed = await snapshot(server.url, crashIds);
    expect(await kill(server, 'SIGTERM')).toEqual({ code: 0, signal: null });

    // Without crashes, on the same input.
    const cleanDir = dir('proc-clean');
    server = await start(cleanDir);
    const cleanIds = await setupProc(server.url, METRICS);
    for (const chunk of input) await pushChunk(server.url, cleanIds, chunk);
    const clean = await snapshot(server.url, cleanIds);
    expect(await kill(server, 'SIGTERM')).toEqual({ code: 0, signal: null });

    console.log(`kill during processing, seed ${SEED}: measures left unprocessed by each SIGKILL: ${pendingAfterRestart.join(', ')} (chunks of ${METRICS * PER_CHUNK})`);
    // At least one kill must have cut a batch, or this proved nothing.
    expect(pendingAfterRestart.some((n) => n > 0), `seed ${SEED}`).toBe(true);
    // The clean run itself counts every distinct timestamp once.
    const counted = (clean as Record<string, [string, number, number][]>[]).map((m) => m['count@1']!.reduce((a, p) => a + p[2], 0));
    const distinct = ids(METRICS).map((m) => new Set(input.flatMap((chunk) => chunk[m]!.map((x) => x.timestamp))).size);
    expect(counted).toEqual(distinct);
    for (let m = 0; m < METRICS; m++) expect(crashed[m], `metric ${m}, seed ${SEED}`).toEqual(clean[m]);
  }, 150_000);

  it('is stored in a new data directory, and a different one makes the server refuse to start, naming it', async () => {
    const d = dir('format');
    const server = await start(d);
    expect((await call(server.url, 'POST', '/v1/archive_policy', PROC_POLICY)).status).toBe(201);
    expect(await kill(server, 'SIGTERM')).toEqual({ code: 0, signal: null });
    expect(readFormat(d)).toBe(FORMAT_VERSION);

    // Format 1 is upgraded in place (test/engine/incoming-upgrade.test.ts); 0 never existed.
    for (const version of [FORMAT_VERSION + 1, 0]) {
      writeFormat(d, version);
      const refused = await spawnServer(d);
      servers.push(refused);
      const exit = await Promise.race([refused.exited, sleep(30_000).then(() => 'timeout' as const)]);
      expect(exit, refused.stdout() + refused.stderr()).not.toBe('timeout');
      expect(exit).not.toEqual({ code: 0, signal: null });
      expect((exit as { code: number | null }).code).not.toBe(null);
      expect(refused.stderr()).toMatch(new RegExp(`format version ${version}\\b`));
      expect(refused.stderr()).toMatch(new RegExp(`version ${FORMAT_VERSION}\\b`));
      expect(refused.stderr()).not.toMatch(/\n\s+at /); // a message, not a stack trace
      expect(readFormat(d), 'the refused directory is left as it was').toBe(version);
    }

    // Back to the current version: it starts, with the data it had.
    writeFormat(d, FORMAT_VERSION);
    const again = await start(d);
    expect((await call(again.url, 'GET', '/v1/archive_policy/proc')).status).toBe(200);
    expect(await kill(again, 'SIGTERM')).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('answers 507 once the map is full, loses nothing acknowledged, and recovers with a larger map', async () => {
    const d = dir('mapsize');
    const SMALL = 1024 * 1024;
    let server = await start(d, ['--map-size', String(SMALL)]);
    expect((await call(server.url, 'POST', '/v1/archive_policy', {
      name: 'full',
      back_window: 0,
      aggregation_methods: ['count', 'sum'],
      definition: [{ granularity: '1 second', points: 10_000_000 }, { granularity: '1 day', points: 1_000 }],
    })).status).toBe(201);
    const metrics: string[] = [];
    for (let i = 0; i < 4; i++) metrics.push((await call(server.url, 'POST', '/v1/metric', { archive_policy_name: 'full' })).body.id as string);

    const PER_PUSH = 4_000;
    const acked = metrics.map(() => ({ count: 0, sum: 0 }));
    let second = 0;
    const refusals: { status: number; text: string }[] = [];
    const other: string[] = [];
    let pushes = 0;
    // Push (every third push through the batch endpoint) until several are refused.
    for (; pushes < 400 && refusals.length < 3; pushes++) {
      const targets = pushes % 3 === 2 ? [pushes % metrics.length, (pushes + 1) % metrics.length] : [pushes % metrics.length];
      const sent = targets.map(() => {
        // Integer values (exact sums) that compress badly, to fill the map sooner.
        const ms = Array.from({ length: PER_PUSH }, (_, i) => ({ timestamp: isoSeconds(second + i), value: ((second + i) * 2_654_435_761) % 1_000_003 }));
        second += PER_PUSH;
        return ms;
      });
      const r = targets.length === 1
        ? await call(server.url, 'POST', `/v1/metric/${metrics[targets[0]!]}/measures`, sent[0], 60_000)
        : await call(server.url, 'POST', '/v1/batch/metrics/measures', Object.fromEntries(targets.map((m, i) => [metrics[m], sent[i]])), 60_000);
      if (r.status === 202) {
        targets.forEach((m, i) => {
          acked[m]!.count += PER_PUSH;
          acked[m]!.sum += sent[i]!.reduce((a, x) => a + x.value, 0);
        });
      } else if (r.status === 507 || r.status === 503) refusals.push(r);
      else other.push(`${r.status} ${r.text}`);
    }
    expect(other, 'pushes answer 202, 507 or 503 only').toEqual([]);
    expect(refusals.length, `pushes refused after ${pushes} pushes of ${PER_PUSH} measures into a ${SMALL}-byte map`).toBe(3);
    for (const r of refusals) expect(r.text).toMatch(/Insufficient storage: the database is full/);
    expect((await call(server.url, 'GET', '/healthcheck')).status).toBe(200);
    console.log(`map size ${SMALL}: ${pushes} pushes of ${PER_PUSH} measures, ${refusals.length} refused: ${refusals[0]!.text}`);

    const check = async (url: string) => {
      for (let m = 0; m < metrics.length; m++) {
        const count = (await points(url, metrics[m]!, 'count', 86_400)).reduce((a, p) => a + p[2], 0);
        const sum = (await points(url, metrics[m]!, 'sum', 86_400)).reduce((a, p) => a + p[2], 0);
        expect({ metric: m, count, sum }).toEqual({ metric: m, ...acked[m]! });
      }
    };
    await check(server.url);
    expect(server.stderr()).not.toMatch(/unhandled error/);

    // After a crash, restarted with a larger map: everything acknowledged is there, and pushes work again.
    expect((await kill(server)).signal).toBe('SIGKILL');
    server = await start(d, ['--map-size', String(256 * 1024 * 1024)]);
    await check(server.url);
    const more = Array.from({ length: 10 }, (_, i) => ({ timestamp: isoSeconds(second + i), value: 7 }));
    expect((await call(server.url, 'POST', `/v1/metric/${metrics[0]}/measures`, more)).status).toBe(202);
    acked[0]!.count += 10;
    acked[0]!.sum += 70;
    await check(server.url);
    expect(await kill(server, 'SIGTERM')).toEqual({ code: 0, signal: null });
  }, 90_000);
});
