/**
 * HTTP load benchmark: starts the real server on a temporary data directory
 * and drives it over loopback with concurrent keep-alive clients.
 *
 *   npm run bench:http [-- --quick] [-- --metrics M --points N --batch B --concurrency C]
 *
 * Reports accepted measures/s (202s), processed measures/s (until /v1/status
 * shows no backlog) and read latencies; writes bench/results/http.json.
 */
import { AUTH, JSON_HEADERS, bytesWritten, call, createBenchPolicy, createMetrics, percentile, pool, runIfMain, startServer, waitForBacklog, writeResult } from './harness.js';

interface Options {
  metrics: number;
  points: number;
  batch: number;
  concurrency: number;
  reads: number;
}

function parseArgs(argv: string[]): Options {
  const quick = argv.includes('--quick');
  const opts: Options = quick
    ? { metrics: 100, points: 2_000, batch: 10_000, concurrency: 4, reads: 200 }
    : { metrics: 1_000, points: 5_000, batch: 10_000, concurrency: 8, reads: 2_000 };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i]!.replace(/^--/, '') as keyof Options;
    if (key in opts && i + 1 < argv.length) opts[key] = Number(argv[++i]);
  }
  return opts;
}

export async function run(argv: string[] = process.argv.slice(2)): Promise<Record<string, unknown>> {
  const opts = parseArgs(argv);
  const server = await startServer();
  const { base } = server;
  try {
    await createBenchPolicy(base, 'bench', '1s');
    const ids = await createMetrics(base, 'bench', opts.metrics, opts.concurrency);

    // Batches of `batch` measures: each covers batch/metrics... consecutive points of every metric.
    const perMetricPerBatch = Math.max(1, Math.floor(opts.batch / opts.metrics));
    const start = Date.UTC(2024, 0, 1) / 1000;
    const bodies: string[] = [];
    for (let offset = 0; offset < opts.points; offset += perMetricPerBatch) {
      const n = Math.min(perMetricPerBatch, opts.points - offset);
      const body: Record<string, { timestamp: number; value: number }[]> = {};
      for (const id of ids) {
        body[id] = Array.from({ length: n }, (_, k) => ({
          timestamp: start + offset + k,
          value: Math.round((40 + 5 * Math.sin((offset + k) / 30) + Math.random()) * 100) / 100,
        }));
      }
      bodies.push(JSON.stringify(body));
    }
    const total = opts.metrics * opts.points;
    const written = bytesWritten(server.child.pid);
    const t0 = performance.now();
    await pool(bodies, opts.concurrency, async (body) => {
      await call(`${base}/v1/batch/metrics/measures`, { method: 'POST', headers: JSON_HEADERS, body });
    });
    const accepted = performance.now() - t0;
    await waitForBacklog(base);
    const processed = performance.now() - t0;
    const writtenPerMeasure = (bytesWritten(server.child.pid) - written) / total;

    const latencies: number[] = [];
    await pool(Array.from({ length: opts.reads }), 1, async () => {
      const id = ids[Math.floor(Math.random() * ids.length)]!;
      const t = performance.now();
      await (await call(`${base}/v1/metric/${id}/measures?granularity=1`, { headers: AUTH })).text();
      latencies.push(performance.now() - t);
    });
    latencies.sort((a, b) => a - b);
    const result = {
      date: new Date().toISOString(),
      options: opts,
      measures: total,
      acceptedPerSecond: Math.round(total / (accepted / 1000)),
      processedPerSecond: Math.round(total / (processed / 1000)),
      bytesWrittenPerMeasure: Math.round(writtenPerMeasure),
      read: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99) },
    };
    console.table({
      'accepted measures/s': result.acceptedPerSecond,
      'processed measures/s (end to end)': result.processedPerSecond,
      'bytes written to disk per measure': result.bytesWrittenPerMeasure,
      'single-metric read p50 ms': result.read.p50.toFixed(2),
      'single-metric read p95 ms': result.read.p95.toFixed(2),
      'single-metric read p99 ms': result.read.p99.toFixed(2),
    });
    writeResult('http', result);
    return result;
  } finally {
    await server.stop();
  }
}

runIfMain(import.meta.url, () => run());
