/**
 * HTTP load benchmark: starts the real server on a temporary data directory
 * and drives it over loopback with concurrent keep-alive clients.
 *
 *   npm run bench:http [-- --quick] [-- --metrics M --points N --batch B --concurrency C
 *     --reads R --read-concurrency RC --agg-metrics AM --agg-points AN --agg-reps AR]
 *
 * (a) Ingestion of M metrics x N points (1 s apart) through
 * POST /v1/batch/metrics/measures in batches of B measures from C clients:
 * accepted measures/s (202s), processed measures/s (until /v1/status shows
 * no backlog) and bytes written to disk per measure.
 * (b) Read latency p50/p95/p99 of a 1,000-point window of one metric at
 * granularity 1 s from 1 and RC clients (R reads each): first the same
 * window of a random metric every time, which the server answers from its
 * read cache once it has read that metric's window (the first reads of the
 * 1-client row are misses); then a window no read of the run asked for
 * before, so that every read goes to storage and is serialized; and
 * `(aggregate mean (metric ...))` over 10 metrics x that window and over AM
 * metrics x AN points (a second set, loaded after (a)), each plain and
 * resampled to 60 s (AR requests, a quarter for the big one).
 *
 * Prints a table and writes bench/results/http.json.
 */
import { type Client, type Latency, type NextRequest, batchBodies, bytesWritten, client, createBenchPolicy, createMetrics, iso, postBatches, runIfMain, startServer, timeLoad, waitForBacklog, writeResult } from './harness.js';

interface Options {
  metrics: number;
  points: number;
  batch: number;
  concurrency: number;
  reads: number;
  'read-concurrency': number;
  'agg-metrics': number;
  'agg-points': number;
  'agg-reps': number;
}

const START_S = Date.UTC(2024, 0, 1) / 1000;
/** The sizes the read targets are stated for. */
const WINDOW_POINTS = 1_000;
const FEW_METRICS = 10;
const RESAMPLE_S = 60;

function parseArgs(argv: string[]): Options {
  const quick = argv.includes('--quick');
  const opts: Options = quick
    ? { metrics: 100, points: 2_000, batch: 10_000, concurrency: 4, reads: 500, 'read-concurrency': 8, 'agg-metrics': 100, 'agg-points': 2_000, 'agg-reps': 40 }
    : { metrics: 1_000, points: 5_000, batch: 10_000, concurrency: 8, reads: 20_000, 'read-concurrency': 8, 'agg-metrics': 100, 'agg-points': 10_000, 'agg-reps': 200 };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i]!.replace(/^--/, '') as keyof Options;
    if (key in opts && i + 1 < argv.length) opts[key] = Number(argv[++i]);
  }
  return opts;
}

function measure(_series: number, k: number): [number, number] {
  return [START_S + k, Math.round((40 + 5 * Math.sin(k / 30) + Math.random()) * 100) / 100];
}

const n = (x: number) => x.toLocaleString('en-US');

/**
 * Read URLs of `windowPoints`-point windows at granularity 1 s, each call a
 * (metric, window) pair no earlier call gave, none the window starting at
 * offset `cached` (the other rows' window): metrics in turn, the window
 * moving on by a second after every round of metrics. Throws once the pairs
 * within the data run out.
 */
function newWindows(ids: string[], points: number, windowPoints: number, cached: number): () => string {
  const offsets = Array.from({ length: points - windowPoints + 1 }, (_, k) => k).filter((k) => k !== cached);
  let next = 0;
  return () => {
    const offset = offsets[Math.floor(next / ids.length)];
    if (offset === undefined) throw new Error(`no new window left: ${ids.length} metrics x ${offsets.length} windows read`);
    const id = ids[next++ % ids.length]!;
    const from = START_S + offset;
    return `/v1/metric/${id}/measures?granularity=1&start=${iso(from)}&stop=${iso(from + windowPoints)}`;
  };
}

interface Read extends Latency {
  name: string;
  /** Points in the response. */
  points: number;
  expectedPoints?: number;
}

/**
 * Counts the points of one response to `next`, warning when they are not
 * `expected` (the figures then do not hold for the size in `name`), then
 * times `requests` of them from `clients` clients.
 */
async function timeRead(
  name: string,
  requests: number,
  clients: number,
  base: string,
  http: Client,
  next: NextRequest,
  count: (body: Buffer) => number,
  expected?: number,
): Promise<Read> {
  const points = count(await http.request(...next()));
  const short = expected !== undefined && points !== expected;
  if (short) console.warn(`${name}: the server returned ${points} points, expected ${expected}`);
  return { name, points, ...(short ? { expectedPoints: expected } : {}), ...(await timeLoad(base, requests, clients, next)) };
}

export async function run(argv: string[] = process.argv.slice(2)): Promise<Record<string, unknown>> {
  const opts = parseArgs(argv);
  const server = await startServer();
  const { base } = server;
  const http = client(base, opts['read-concurrency']);
  try {
    await createBenchPolicy(base, 'bench', '1s');
    const ids = await createMetrics(base, 'bench', opts.metrics, opts.concurrency);
    const aggIds = await createMetrics(base, 'bench', opts['agg-metrics'], opts.concurrency);

    const bodies = batchBodies(ids, opts.points, opts.batch, measure);
    const total = opts.metrics * opts.points;
    const written = bytesWritten(server.child.pid);
    const t0 = performance.now();
    await postBatches(base, bodies, opts.concurrency);
    const accepted = performance.now() - t0;
    await waitForBacklog(base);
    const processed = performance.now() - t0;
    const writtenPerMeasure = (bytesWritten(server.child.pid) - written) / total;

    // A body per metric with its whole history: the server loses sealed 1 s
    // points of metrics whose history arrives in many batches alongside other
    // metrics, and this load is not what is measured.
    const aggPoints = opts['agg-points'];
    await postBatches(base, aggIds.flatMap((id) => batchBodies([id], aggPoints, aggPoints, measure)), opts.concurrency);
    await waitForBacklog(base);

    // A window in the middle of the data; stop is exclusive.
    const windowPoints = Math.min(WINDOW_POINTS, opts.points);
    const from = START_S + Math.floor((opts.points - windowPoints) / 2);
    const window = `granularity=1&start=${iso(from)}&stop=${iso(from + windowPoints)}`;
    const listed = (body: Buffer) => (JSON.parse(body.toString()) as unknown[]).length;
    const readOne: NextRequest = () => ['GET', `/v1/metric/${ids[Math.floor(Math.random() * ids.length)]}/measures?${window}`];
    const reads: Read[] = [];
    const clientCounts = [1, opts['read-concurrency']];
    const clientsName = (clients: number) => `${clients} client${clients === 1 ? '' : 's'}`;
    for (const clients of clientCounts) {
      reads.push(await timeRead(`metric read ${n(windowPoints)} points, ${clientsName(clients)}`, opts.reads, clients, base, http, readOne, listed, windowPoints));
    }
    const readNew = newWindows(ids, opts.points, windowPoints, from - START_S);
    for (const clients of clientCounts) {
      reads.push(await timeRead(`metric read ${n(windowPoints)} points, new window each, ${clientsName(clients)}`, opts.reads, clients, base, http, () => ['GET', readNew()], listed, windowPoints));
    }

    const aggregated = (body: Buffer) => (JSON.parse(body.toString()) as { measures: { aggregated: unknown[] } }).measures.aggregated.length;
    const few = ids.slice(0, FEW_METRICS);
    for (const [selected, points, query, requests] of [
      [few, windowPoints, window, opts['agg-reps']],
      [aggIds, aggPoints, 'granularity=1', Math.ceil(opts['agg-reps'] / 4)],
    ] as const) {
      const metric = `(metric ${selected.map((id) => `(${id} mean)`).join(' ')})`;
      for (const [suffix, operand, expected] of [
        ['', metric, points],
        [` resample ${RESAMPLE_S} s`, `(resample mean ${RESAMPLE_S} ${metric})`, undefined],
      ] as const) {
        const body = Buffer.from(JSON.stringify({ operations: `(aggregate mean ${operand})` }));
        const next: NextRequest = () => ['POST', `/v1/aggregates?${query}`, body];
        reads.push(await timeRead(`aggregates mean ${n(selected.length)} x ${n(points)}${suffix}`, requests, 1, base, http, next, aggregated, expected));
      }
    }

    const result = {
      date: new Date().toISOString(),
      options: opts,
      measures: total,
      acceptedPerSecond: Math.round(total / (accepted / 1000)),
      processedPerSecond: Math.round(total / (processed / 1000)),
      bytesWrittenPerMeasure: Math.round(writtenPerMeasure),
      reads,
    };
    const ingest = `${n(opts.metrics)} x ${n(opts.points)}, batches of ${n(opts.batch)}, ${opts.concurrency} clients`;
    console.table({
      [`accepted measures/s (${ingest})`]: result.acceptedPerSecond,
      'processed measures/s (end to end)': result.processedPerSecond,
      'bytes written to disk per measure': result.bytesWrittenPerMeasure,
    });
    console.table(
      Object.fromEntries(
        reads.map((r) => [r.name, { 'p50 ms': r.p50, 'p95 ms': r.p95, 'p99 ms': r.p99, 'requests/s': r.perSecond, requests: r.requests, 'points returned': r.expectedPoints === undefined ? r.points : `${r.points} of ${r.expectedPoints}` }]),
      ),
    );
    writeResult('http', result);
    return result;
  } finally {
    http.close();
    await server.stop();
  }
}

runIfMain(import.meta.url, () => run());
