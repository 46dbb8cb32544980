/**
 * `npm run bench`: every tinybench micro-benchmark, one after the other.
 * The HTTP load benchmark is separate: `npm run bench:http`.
 */
import { run as aggregates } from './aggregates.bench.js';
import { run as splitCodec } from './split-codec.bench.js';

const suites: [string, () => Promise<void>][] = [
  ['split codec', splitCodec],
  ['aggregates', aggregates],
];

for (const [name, suite] of suites) {
  console.log(`\n== ${name}`);
  await suite();
}
