/**
 * Collector-style ingestion over HTTP: many metrics, one point each per push,
 * as collectors send them. Starts the real server, creates M metrics (on
 * resources of 100 metrics each, one request per resource) with a policy of
 * 3 granularities and the 6 default methods, then pushes R rounds of one
 * point to every metric through `POST /v1/batch/metrics/measures`, in
 * batches of B metrics, from C keep-alive clients. Reports accepted metric
 * updates/s (until the last 202), end-to-end updates/s (until /v1/status
 * shows no backlog), the backlog seen while pushing and the bytes the server
 * wrote to disk per update (/proc/PID/io, Linux: unlike times, not skewed by
 * other load on the machine); writes
 * bench/results/collector.json.
 *
 *   npm run build && node dist/bench/collector.js [--quick] [--metrics M --rounds R --batch B --concurrency C]
 */
import { backlog, bytesWritten, call, createBenchPolicy, JSON_HEADERS, pool, runIfMain, startServer, waitForBacklog, writeResult } from './harness.js';

interface Options {
  metrics: number;
  rounds: number;
  batch: number;
  concurrency: number;
}

const METRICS_PER_RESOURCE = 100;

function parseArgs(argv: string[]): Options {
  const opts: Options = argv.includes('--quick')
    ? { metrics: 20_000, rounds: 5, batch: 10_000, concurrency: 2 }
    : { metrics: 100_000, rounds: 10, batch: 10_000, concurrency: 2 };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i]!.replace(/^--/, '') as keyof Options;
    if (key in opts && i + 1 < argv.length) opts[key] = Number(argv[++i]);
  }
  return opts;
}

async function createMetrics(base: string, count: number): Promise<string[]> {
  const resources = Math.ceil(count / METRICS_PER_RESOURCE);
  const ids: string[] = [];
  await pool(Array.from({ length: resources }, (_, r) => r), 4, async (r) => {
    const metrics: Record<string, { archive_policy_name: string }> = {};
    for (let m = 0; m < Math.min(METRICS_PER_RESOURCE, count - r * METRICS_PER_RESOURCE); m++) {
      metrics[`m${m}`] = { archive_policy_name: 'collector' };
    }
    const res = await call(`${base}/v1/resource/generic`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ id: `host-${r}`, metrics }),
    });
    ids.push(...Object.values(((await res.json()) as { metrics: Record<string, string> }).metrics));
  });
  return ids;
}

export async function run(argv: string[] = process.argv.slice(2)): Promise<Record<string, unknown>> {
  const opts = parseArgs(argv);
  const server = await startServer();
  const { base } = server;
  try {
    await createBenchPolicy(base, 'collector', '10s');
    let t = performance.now();
    const ids = await createMetrics(base, opts.metrics);
    const createSeconds = (performance.now() - t) / 1000;

    const slices: string[][] = [];
    for (let i = 0; i < ids.length; i += opts.batch) slices.push(ids.slice(i, i + opts.batch));
    const requests = Array.from({ length: opts.rounds }, (_, round) => slices.map((slice) => ({ round, slice }))).flat();
    const start = Date.UTC(2024, 0, 1) / 1000;
    const samples: number[] = [];
    let pushing = true;
    const sampler = (async () => {
      while (pushing) {
        samples.push(await backlog(base));
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();
    const written = bytesWritten(server.child.pid);
    t = performance.now();
    await pool(requests, opts.concurrency, async ({ round, slice }) => {
      // One collection interval (10 s) per round, values like a CPU gauge.
      const timestamp = start + 10 * round;
      const body = `{${slice.map((id, i) => `"${id}":[{"timestamp":${timestamp},"value":${(i * 7 + round) % 100}.5}]`).join(',')}}`;
      await call(`${base}/v1/batch/metrics/measures`, { method: 'POST', headers: JSON_HEADERS, body });
    });
    const accepted = performance.now() - t;
    pushing = false;
    await sampler;
    const backlogAtLastPush = await backlog(base);
    await waitForBacklog(base, 100);
    const processed = performance.now() - t;
    const updates = ids.length * opts.rounds;
    const bytesPerUpdate = (bytesWritten(server.child.pid) - written) / updates;
    const result = {
      date: new Date().toISOString(),
      options: opts,
      metricsCreatedPerSecond: Math.round(ids.length / createSeconds),
      updates,
      acceptedUpdatesPerSecond: Math.round(updates / (accepted / 1000)),
      endToEndUpdatesPerSecond: Math.round(updates / (processed / 1000)),
      backlogSamples: samples,
      backlogAtLastPush,
      drainSeconds: (processed - accepted) / 1000,
      bytesWrittenPerUpdate: Math.round(bytesPerUpdate),
    };
    console.table({
      'metrics created/s': result.metricsCreatedPerSecond,
      'accepted metric updates/s': result.acceptedUpdatesPerSecond,
      'end-to-end metric updates/s': result.endToEndUpdatesPerSecond,
      'max backlog while pushing (measures)': Math.max(0, ...samples),
      'backlog at the last 202': backlogAtLastPush,
      'drain after the last 202 (s)': result.drainSeconds.toFixed(1),
      'bytes written to disk per update': result.bytesWrittenPerUpdate,
    });
    writeResult('collector', result);
    return result;
  } finally {
    await server.stop();
  }
}

runIfMain(import.meta.url, () => run());
