/**
 * `npm run bench`: every micro-benchmark (tinybench suites and the in-process
 * processing throughput), one after the other.
 * The HTTP load benchmark is separate: `npm run bench:http`.
 */
import { run as aggregates } from './aggregates.bench.js';
import { run as processing } from './processing.bench.js';
import { run as splitCodec } from './split-codec.bench.js';

const suites: [string, () => Promise<void>][] = [
  ['split codec', splitCodec],
  ['aggregates', aggregates],
  ['processing', processing],
];

for (const [name, suite] of suites) {
  console.log(`\n== ${name}`);
  await suite();
}
