/**
 * What `GET /metrics` (on by default) costs the requests the server
 * answers: two servers on the same data, one with `--no-metrics`, take the
 * same loads in alternation, in rounds that start both anew in flipped
 * order (an A/A run showed the server started second ~30% slower on small
 * answers, whatever its options);
 * reports per load the median requests/s and the server's CPU time per
 * request (/proc/PID/stat: steadier than throughput on a shared machine),
 * and the ratio on/off. Writes bench/results/self-metrics.json.
 *
 *   npm run build && node dist/bench/self-metrics.js [--rounds R --requests N --clients C]
 */
import { call, cpuSeconds, createBenchPolicy, iso, JSON_HEADERS, runIfMain, startServer, timeLoad, waitForBacklog, writeResult, type NextRequest, type RunningServer } from './harness.js';

const POINTS = 10_000;
const WINDOW = 1_000;
const START_S = Date.UTC(2024, 0, 1) / 1000;

interface Options {
  rounds: number;
  requests: number;
  clients: number;
}

function parseArgs(argv: string[]): Options {
  const opts: Options = { rounds: 5, requests: 20_000, clients: 8 };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i]!.replace(/^--/, '') as keyof Options;
    if (key in opts && i + 1 < argv.length) opts[key] = Number(argv[++i]);
  }
  return opts;
}

/** One metric of POINTS points, 1 s apart, processed. */
async function load(server: RunningServer): Promise<string> {
  await createBenchPolicy(server.base, 'bench', '1 second');
  const res = await call(`${server.base}/v1/metric`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ archive_policy_name: 'bench' }) });
  const { id } = (await res.json()) as { id: string };
  const measures = Array.from({ length: POINTS }, (_, k) => ({ timestamp: START_S + k, value: Math.round(Math.sin(k) * 10_000) / 100 }));
  await call(`${server.base}/v1/metric/${id}/measures`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(measures) });
  await waitForBacklog(server.base);
  return id;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(argv: string[] = process.argv.slice(2)): Promise<Record<string, unknown>> {
  const opts = parseArgs(argv);
  const loads: [string, (id: string) => NextRequest][] = [
    ['GET /v1/archive_policy/bench (small answer)', () => () => ['GET', '/v1/archive_policy/bench']],
    ['GET measures, 1,000 points, same window (read cache)', (id) => () => ['GET', `/v1/metric/${id}/measures?start=${iso(START_S)}&stop=${iso(START_S + WINDOW)}`]],
    [
      'GET measures, 1,000 points, new window each (storage)',
      (id) => {
        let at = 0;
        return () => {
          at = (at + 1) % (POINTS - WINDOW);
          return ['GET', `/v1/metric/${id}/measures?start=${iso(START_S + at)}&stop=${iso(START_S + at + WINDOW)}`];
        };
      },
    ],
  ];
  const samples = new Map<string, { perSecond: number[]; cpuMicros: number[] }>();
  for (let round = 0; round < opts.rounds; round++) {
    const order = round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
    const servers: Partial<Record<'on' | 'off', RunningServer>> = {};
    try {
      for (const side of order) servers[side] = await startServer(side === 'off' ? ['--no-metrics'] : []);
      const ids = { off: await load(servers.off!), on: await load(servers.on!) };
      for (const [name, next] of loads) {
        for (const side of order) {
          const pid = servers[side]!.child.pid;
          const cpu0 = cpuSeconds(pid);
          const latency = await timeLoad(servers[side]!.base, opts.requests, opts.clients, next(ids[side]));
          const key = `${name}|${side}`;
          const s = samples.get(key) ?? { perSecond: [], cpuMicros: [] };
          s.perSecond.push(latency.perSecond);
          s.cpuMicros.push(((cpuSeconds(pid) - cpu0) * 1e6) / opts.requests);
          samples.set(key, s);
        }
      }
    } finally {
      await servers.on?.stop();
      await servers.off?.stop();
    }
  }
  const rows = loads.map(([name]) => {
    const off = samples.get(`${name}|off`)!;
    const on = samples.get(`${name}|on`)!;
    return {
      load: name,
      'req/s off': median(off.perSecond),
      'req/s on': median(on.perSecond),
      'CPU µs/req off': Math.round(median(off.cpuMicros)),
      'CPU µs/req on': Math.round(median(on.cpuMicros)),
      'CPU on/off': Math.round((median(on.cpuMicros) / median(off.cpuMicros)) * 1000) / 1000,
    };
  });
  console.table(rows);
  const result = { date: new Date().toISOString(), options: opts, rows, samples: Object.fromEntries(samples) };
  writeResult('self-metrics', result);
  return result;
}

runIfMain(import.meta.url, run);
