/**
 * The Prometheus remote write path without HTTP, on pre-built requests of
 * 10,000 samples (2-decimal gauges 60 s apart, labels `__name__`,
 * `instance`, `job`, `region` as bench/protocols.ts sends them), as 1,000
 * series x 10 samples and as 10,000 series x 1 sample. Tasks: snappy
 * decompression alone; decompression, scanning and grouping into
 * per-metric runs of the scanned columns, the series already remembered
 * (a collector's steady state) and with none (every series new). Reported
 * as samples per second. `run()` prints the table; running the file calls it:
 *
 *   npx tsc -p tsconfig.json && node dist/bench/remote-write.bench.js
 */
import { pathToFileURL } from 'node:url';
import { compress } from 'snappyjs';
import { Bench } from 'tinybench';
import { SeriesCache } from '../engine/series-cache.js';
import { encodeWriteRequest, recycleScanned, snappyUncompress } from '../formats/prometheus-remote.js';
import { groupRemoteWrite } from '../server/routes/prometheus.js';
import { random } from './split-codec.bench.js';

const SAMPLES = 10_000;
const T0 = 1_700_000_000;
/** Larger than any request here: the limit is not what is measured. */
const MAX_LENGTH = 1 << 30;

/** `samples` samples of each of `series` series, snappy-compressed. */
function request(series: number, samples: number): Buffer {
  const next = random(5);
  const timeseries = Array.from({ length: series }, (_, s) => ({
    labels: [
      { name: '__name__', value: 'cpu_usage' },
      { name: 'instance', value: `host-${s}` },
      { name: 'job', value: 'bench' },
      { name: 'region', value: `r${s % 10}` },
    ],
    samples: Array.from({ length: samples }, (_, k) => ({ value: Math.round(next() * 10_000) / 100, timestampMs: (T0 + 60 * k) * 1000 })),
  }));
  return Buffer.from(compress(encodeWriteRequest({ timeseries })));
}

/** Decompresses, scans and groups a request, laying its points out by metric and handing its columns back as a write does. */
function group(body: Buffer, cache: SeriesCache): void {
  const inflated = snappyUncompress(body, MAX_LENGTH);
  const batch = groupRemoteWrite(Buffer.from(inflated.buffer, inflated.byteOffset, inflated.byteLength), 'admin', cache);
  if (batch === null) throw new Error('the scanner left a plain request to protobufjs');
  batch.series();
  if (batch.columns !== undefined) recycleScanned(batch.columns);
}

export async function run(): Promise<void> {
  const bench = new Bench({ name: 'remote write', time: 1000 });
  for (const [name, series, samples] of [['1,000 series x 10 samples', 1000, 10], ['10,000 series x 1 sample', 10_000, 1]] as const) {
    const body = request(series, samples);
    const warm = new SeriesCache();
    group(body, warm);
    bench.add(`decompress, ${name}`, () => snappyUncompress(body, MAX_LENGTH));
    bench.add(`decompress + scan + group, series known, ${name}`, () => group(body, warm));
    bench.add(`decompress + scan + group, series new, ${name}`, () => group(body, new SeriesCache()));
  }
  await bench.run();
  console.table(
    bench.tasks.map((t) => {
      const mean = t.result?.state === 'completed' ? t.result.latency.mean : Number.NaN;
      return { task: t.name, 'ms per call': mean.toFixed(3), 'samples/s': Math.round((SAMPLES / mean) * 1000).toLocaleString('en-US') };
    }),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
