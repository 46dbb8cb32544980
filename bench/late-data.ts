/**
 * Points lost to arrival order: TS series x R time-major rounds (one line
 * protocol request per round, every series, points 60 s apart: the
 * timemajor workload of bench/protocols.ts) posted in order from C
 * keep-alive clients, so that rounds in flight overtake each other. Each
 * `--reorder-window` given runs on a fresh server with Gnocchi's default
 * policies (the `*` rule: `low`, 5 minutes, back window 0); once the backlog
 * is empty every series' `count` aggregates are summed: a point missing from
 * them was acknowledged (204) and then dropped as older than the raw tail.
 * Also the seconds until the last acknowledgement and until the backlog
 * emptied, and the server's CPU seconds over that time.
 *
 * Prints a markdown table and writes bench/results/late-data.json.
 *
 *   node dist/bench/late-data.js [--windows 0,250] [--repeats N] [--tm-series TS --rounds R --concurrency C]
 */
import { AUTH, client, cpuSeconds, pool, runIfMain, startServer, waitForBacklog, writeResult } from './harness.js';
import { createInfluxDatabase, LINE_HEADERS, lineBodies, memSet, OURS_LINE_WRITE, postAll } from './protocols.js';

interface Options {
  windows: number[];
  repeats: number;
  'tm-series': number;
  rounds: number;
  concurrency: number;
}

function parseArgs(argv: string[]): Options {
  const opts: Options = { windows: [0, 250], repeats: 1, 'tm-series': 10_000, rounds: 30, concurrency: 8 };
  for (let i = 0; i + 1 < argv.length; i++) {
    const key = argv[i]!.replace(/^--/, '');
    if (key === 'windows') opts.windows = argv[++i]!.split(',').map(Number);
    else if (key in opts) (opts as unknown as Record<string, number>)[key] = Number(argv[++i]);
  }
  return opts;
}

interface Run {
  windowMs: number;
  repeat: number;
  points: number;
  counted: number;
  lost: number;
  acceptedSeconds: number;
  queryableSeconds: number;
  cpuSeconds: number;
}

/** The points every series' `count` aggregates hold, read from `concurrency` clients. */
async function countPoints(base: string, series: number, concurrency: number): Promise<number> {
  const http = client(base, concurrency);
  let total = 0;
  try {
    await pool(Array.from({ length: series }, (_, s) => s), concurrency, async (s) => {
      const path = `/v1/resource/influxdb/host-${s}/metric/${encodeURIComponent(`mem.used@region=r${s % 10}`)}/measures?aggregation=count`;
      const rows = JSON.parse((await http.request('GET', path, undefined, AUTH)).toString()) as [string, number, number][];
      for (const [, , count] of rows) total += count;
    });
  } finally {
    http.close();
  }
  return total;
}

async function once(opts: Options, bodies: Buffer[], windowMs: number, repeat: number): Promise<Run> {
  const points = opts['tm-series'] * opts.rounds;
  const server = await startServer(['--reorder-window', String(windowMs)], { defaultArchivePolicies: true });
  try {
    const { base } = server;
    await createInfluxDatabase(base);
    const cpu0 = cpuSeconds(server.child.pid);
    const t0 = performance.now();
    await postAll(base, OURS_LINE_WRITE, bodies, opts.concurrency, LINE_HEADERS);
    const accepted = performance.now() - t0;
    await waitForBacklog(base, 20);
    const queryable = performance.now() - t0;
    const cpu = cpuSeconds(server.child.pid) - cpu0;
    const counted = await countPoints(base, opts['tm-series'], opts.concurrency);
    return {
      windowMs,
      repeat,
      points,
      counted,
      lost: points - counted,
      acceptedSeconds: Math.round(accepted) / 1000,
      queryableSeconds: Math.round(queryable) / 1000,
      cpuSeconds: Math.round(cpu * 100) / 100,
    };
  } finally {
    await server.stop();
  }
}

const table = (header: string[], rows: (string | number)[][]) =>
  [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

export async function run(argv: string[] = process.argv.slice(2)): Promise<Record<string, unknown>> {
  const opts = parseArgs(argv);
  const bodies = lineBodies(memSet(opts['tm-series'], opts.rounds));
  const runs: Run[] = [];
  // Windows alternate within a repeat: the machine's load drifts.
  for (let repeat = 0; repeat < opts.repeats; repeat++) {
    for (const windowMs of opts.windows) {
      runs.push(await once(opts, bodies, windowMs, repeat));
      const r = runs.at(-1)!;
      console.log(`window ${windowMs} ms #${repeat + 1}: ${r.lost} of ${r.points} points lost`);
    }
  }
  console.log(
    '\n' +
      table(
        ['window ms', 'repeat', 'points', 'lost', 'accepted s', 'queryable s', 'server CPU s'],
        runs.map((r) => [r.windowMs, r.repeat + 1, r.points, r.lost, r.acceptedSeconds, r.queryableSeconds, r.cpuSeconds]),
      ),
  );
  const result = { date: new Date().toISOString(), options: opts, runs };
  writeResult('late-data', result);
  return result;
}

runIfMain(import.meta.url, () => run());
