/**
 * Sealed-split codec: encode and decode throughput and bytes per point on
 * three shapes of full 3600-period splits with six methods, plus a short
 * split for the fixed cost of a call. `run()` prints the table; running the
 * file calls it:
 *
 *   npx tsc -p tsconfig.json && node dist/bench/split-codec.bench.js [--freezes | --backlogs]
 *
 * `--freezes` times instead what a processing thread's freezes ask of the
 * compact codec under the default policy (see `freezes`), `--backlogs` what
 * they ask of it when each holds a backlog (see `backlogs`).
 */
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { decodeSplit, encodeCompactSplit, encodeSplit, growCompactSplit, splitEncodings, type SplitColumns } from '../formats/split-codec.js';

export const METHODS = ['mean', 'sum', 'last', 'max', 'min', 'count'] as const;
const POINTS_PER_SPLIT = 3600;

const SECOND = 1_000_000;
const GRANULARITY = 60 * SECOND;
// 2024-01-01T00:00:00Z floored to a 3600 x 60 s window.
const KEY = Math.floor(1_704_067_200_000_000 / (POINTS_PER_SPLIT * GRANULARITY)) * POINTS_PER_SPLIT * GRANULARITY;

export type ShapeName = 'counter' | 'gauge' | 'sparse';

export interface Shape {
  description: string;
  key: number;
  granularity: number;
  data: SplitColumns;
}

/** Deterministic so that runs and tests compare like with like. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

function normal(rand: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

/** Gnocchi's aggregation of raw points into periods: mean is sum / count. */
function aggregate(times: number[], values: number[], key: number, granularity: number): SplitColumns {
  const timestamps: number[] = [];
  const sum: number[] = [];
  const last: number[] = [];
  const max: number[] = [];
  const min: number[] = [];
  const count: number[] = [];
  for (let i = 0; i < times.length; i++) {
    const period = key + Math.floor((times[i] - key) / granularity) * granularity;
    const v = values[i];
    const row = timestamps.length - 1;
    if (timestamps[row] === period) {
      sum[row] += v;
      last[row] = v;
      max[row] = Math.max(max[row], v);
      min[row] = Math.min(min[row], v);
      count[row]++;
    } else {
      timestamps.push(period);
      sum.push(v);
      last.push(v);
      max.push(v);
      min.push(v);
      count.push(1);
    }
  }
  const mean = sum.map((s, row) => s / count[row]);
  return {
    timestamps: Float64Array.from(timestamps),
    columns: [mean, sum, last, max, min, count].map((column) => Float64Array.from(column)),
    present: METHODS.map(() => null),
  };
}

const gauge = (rand: () => number): number => Math.round((40 + 5 * normal(rand)) * 100) / 100;

/** A split of `periods` periods (a full one by default) of the named shape. */
export function makeShape(name: ShapeName, seed = 1, periods = POINTS_PER_SPLIT): Shape {
  const rand = random(seed);
  const times: number[] = [];
  const values: number[] = [];
  let description: string;
  switch (name) {
    case 'counter': {
      description = 'monotonic integer counter sampled once per 60 s period, +1000±30 per sample';
      let counter = 1_000_000_000;
      for (let p = 0; p < periods; p++) {
        counter += Math.round(1000 + 30 * normal(rand));
        times.push(KEY + p * GRANULARITY);
        values.push(counter);
      }
      break;
    }
    case 'gauge':
      description = '40 + N(0,5) rounded to 0.01, sampled every 10 s, 60 s periods';
      for (let t = 0; t < periods * GRANULARITY; t += 10 * SECOND) {
        times.push(KEY + t);
        values.push(gauge(rand));
      }
      break;
    case 'sparse':
      description = 'gauge at random instants, 1-4 per period, 40% of periods empty';
      for (let p = 0; p < periods; p++) {
        if (rand() < 0.4) continue;
        const instants = Array.from({ length: 1 + Math.floor(4 * rand()) }, () => Math.floor(rand() * GRANULARITY)).sort((a, b) => a - b);
        for (const instant of instants) {
          times.push(KEY + p * GRANULARITY + instant);
          values.push(gauge(rand));
        }
      }
      break;
  }
  return { description, key: KEY, granularity: GRANULARITY, data: aggregate(times, values, KEY, GRANULARITY) };
}

/**
 * What a processing thread encodes most: a chunk of an open split under the
 * default policy (mean, min, max, sum, std, count of 5-minute periods), here
 * of a 2-decimal gauge sampled every 60 s. Its std is the one column of
 * floats that are not decimals.
 */
export function defaultPolicyChunk(seed = 1, periods = 187): Shape {
  const rand = random(seed);
  const granularity = 5 * GRANULARITY;
  const columns = Array.from({ length: 6 }, () => new Float64Array(periods));
  const timestamps = new Float64Array(periods);
  for (let p = 0; p < periods; p++) {
    timestamps[p] = KEY + p * granularity;
    const xs = Array.from({ length: 5 }, () => gauge(rand));
    const sum = xs.reduce((a, b) => a + b);
    const mean = sum / xs.length;
    const std = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1));
    [mean, Math.min(...xs), Math.max(...xs), sum, std, xs.length].forEach((value, j) => (columns[j][p] = value));
  }
  return {
    description: 'default policy chunk: mean, min, max, sum, std, count of 5 gauge samples',
    key: KEY,
    granularity,
    data: { timestamps, columns, present: columns.map(() => null) },
  };
}

export async function run(): Promise<void> {
  // The 10-period split shows the fixed cost of one call, paid by every
  // sealed split however few points it holds.
  const cases = [
    ...(['counter', 'gauge', 'sparse'] as const).map((name) => ({ label: name, shape: makeShape(name) })),
    { label: 'gauge, 10 periods', shape: makeShape('gauge', 1, 10) },
    { label: 'default policy chunk', shape: defaultPolicyChunk() },
  ].map(({ label, shape }) => ({ label, shape, bytes: encodeSplit(shape.key, shape.granularity, shape.data) }));
  const bench = new Bench({ name: 'split codec' });
  for (const { label, shape: { key, granularity, data }, bytes } of cases) {
    bench
      .add(`encode ${label}`, () => {
        encodeSplit(key, granularity, data);
      })
      .add(`decode ${label}`, () => {
        decodeSplit(bytes, key, granularity, METHODS.length);
      });
  }
  await bench.run();

  const rowsPerSecond = (task: string, rows: number): string => {
    const result = bench.getTask(task)!.result;
    return result.state === 'completed' ? Math.round(result.throughput.mean * rows).toLocaleString('en-US') : result.state;
  };
  console.log(`${bench.name}: methods ${METHODS.join(',')}; a row is one timestamp with its ${METHODS.length} values`);
  console.table(cases.map(({ label, shape: { description, data }, bytes }) => {
    const rows = data.timestamps.length;
    return {
      shape: label,
      rows,
      bytes: bytes.length,
      'bytes/row': +(bytes.length / rows).toFixed(3),
      'bytes/value': +(bytes.length / (rows * METHODS.length)).toFixed(3),
      'encode rows/s': rowsPerSecond(`encode ${label}`, rows),
      'decode rows/s': rowsPerSecond(`decode ${label}`, rows),
      encodings: splitEncodings(bytes).join(','),
      data: description,
    };
  }));
}

/**
 * A chunk of an open split grows by CHUNK_ROWS - 1 rows a freeze until it
 * outgrows CHUNK_BYTES: ~75 rows of the default policy's chunk. Prints the
 * CPU time per freeze of 200 such chunks, from their first 15 rows to 75
 * (each freeze appends 15 rows where the chunk's plan holds, else decodes
 * the chunk and encodes it whole): the least of 12 rounds, as the machine is
 * shared and load only adds.
 */
export function freezes(): void {
  const chunks = Array.from({ length: 200 }, (_, i) => defaultPolicyChunk(i + 1, 75));
  const rows = (data: SplitColumns, from: number, to: number): SplitColumns => ({
    timestamps: data.timestamps.subarray(from, to),
    columns: data.columns.map((c) => c.subarray(from, to)),
    present: data.present,
  });
  const freezeAll = (): number => {
    let bytes = 0;
    for (const { key, granularity, data } of chunks) {
      let chunk = encodeCompactSplit(key, granularity, rows(data, 0, 15));
      for (let to = 30; to <= 75; to += 15) {
        chunk =
          growCompactSplit(chunk, key, granularity, rows(data, to - 15, to)) ??
          encodeCompactSplit(key, granularity, rows(data, 0, to), chunk);
      }
      bytes += chunk.length;
    }
    return bytes;
  };
  const bytes = freezeAll();
  let least = Infinity;
  for (let round = 0; round < 12; round++) {
    const start = process.cpuUsage();
    for (let repeat = 0; repeat < 4; repeat++) freezeAll();
    const used = process.cpuUsage(start);
    least = Math.min(least, (used.user + used.system) / (4 * chunks.length * 5));
  }
  console.log(`freezes: ${least.toFixed(2)} us CPU per freeze of 15 rows into chunks of 0 to 60 (least of 12 rounds), ${bytes} bytes in the 75-row chunks`);
}

/**
 * What a processing thread that lags behind its collectors encodes: each
 * freeze holds a backlog of 100-300 rows, so chunks are encoded whole and
 * never grown (a prom run of bench/protocols.ts with --warm 4 made 2,280
 * encodes of 60-288 rows, 174 on average, and no growCompactSplit call). Prints the
 * CPU time per encode of 200 series' first chunk (200 rows, no earlier
 * plan: its first 64 rows are costed) and of the next (150 rows, on the
 * first's plan): the least of 12 rounds.
 */
export function backlogs(): void {
  const series = Array.from({ length: 200 }, (_, i) => defaultPolicyChunk(i + 1, 350));
  const rows = (data: SplitColumns, from: number, to: number): SplitColumns => ({
    timestamps: data.timestamps.subarray(from, to),
    columns: data.columns.map((c) => c.subarray(from, to)),
    present: data.present,
  });
  const firsts = series.map(({ key, granularity, data }) => encodeCompactSplit(key, granularity, rows(data, 0, 200)));
  const least = (encode: (i: number) => Uint8Array): number => {
    let best = Infinity;
    for (let round = 0; round < 12; round++) {
      const start = process.cpuUsage();
      for (let repeat = 0; repeat < 4; repeat++) for (let i = 0; i < series.length; i++) encode(i);
      const used = process.cpuUsage(start);
      best = Math.min(best, (used.user + used.system) / (4 * series.length));
    }
    return best;
  };
  const first = least((i) => encodeCompactSplit(series[i].key, series[i].granularity, rows(series[i].data, 0, 200)));
  const next = least((i) => encodeCompactSplit(series[i].key, series[i].granularity, rows(series[i].data, 200, 350), firsts[i]));
  console.log(`backlogs: ${first.toFixed(2)} us CPU per first chunk of 200 rows, ${next.toFixed(2)} us per next chunk of 150 rows on its plan (least of 12 rounds)`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv.includes('--freezes')) freezes();
  else if (process.argv.includes('--backlogs')) backlogs();
  else await run();
}
