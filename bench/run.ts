/**
 * `npm run bench`: every micro-benchmark (tinybench suites and the in-process
 * processing throughput), one after the other.
 * The HTTP load benchmark is separate: `npm run bench:http`.
 */
import { run as aggregates } from './aggregates.bench.js';
import { run as aggregation } from './aggregation.bench.js';
import { run as collectorCreate } from './collector-create.bench.js';
import { run as lineProtocol } from './line-protocol.bench.js';
import { run as measures } from './measures.bench.js';
import { run as metricRecords } from './metric-records.bench.js';
import { run as processing } from './processing.bench.js';
import { run as remoteWrite } from './remote-write.bench.js';
import { run as search } from './search.bench.js';
import { run as splitCodec } from './split-codec.bench.js';

const suites: [string, () => Promise<void>][] = [
  ['measure decoding', measures],
  ['line protocol', lineProtocol],
  ['remote write', remoteWrite],
  ['collector creation (10,000 new series)', collectorCreate],
  ['metric records read from LMDB', metricRecords],
  ['split codec', splitCodec],
  ['aggregation methods', aggregation],
  ['aggregates', aggregates],
  ['processing', processing],
  ['resource search (100k resources)', () => search()],
];

for (const [name, suite] of suites) {
  console.log(`\n== ${name}`);
  await suite();
}
