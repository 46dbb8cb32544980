// groupLines with the series cache of earlier writes: the cache (and the
// order of series it expects, see CollectorScope.expected) saves work but
// never changes how lines are grouped.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SeriesCache } from '../../engine/series-cache.js';
import { groupLines, type LineWrite } from '../../server/routes/influxdb.js';
import { grouped } from './grouped-batch.js';

const WRITE: LineWrite = { db: 'db1', tagToRid: 'host', precision: 'ns', creator: 'admin', nowMicros: 5 };

/** groupLines' batch of a body, or the message it throws. */
function outcome(body: string, cache: SeriesCache): ReturnType<typeof grouped> | string {
  try {
    return grouped(groupLines(Buffer.from(body), WRITE, cache));
  } catch (err) {
    return (err as Error).message;
  }
}

// Series parts that are prefixes of one another, escaped, quoted, or of a line parseLine reads.
const SERIES = [
  'cpu,host=h',
  'cpu,host=h,a=1',
  'cpu,host=h,a=1,b=2',
  'cpu,host=h,a=1\\ ',
  'cpu,host=h,a=1\\,b=2',
  'cpu,host=h\\ x,a=1',
  'cpu,host="h",a=1',
  'cpu,host=g,a=1',
  'cpu,a=1',
  'mem,host=h',
];
// '': a line without fields (its series part then reads as a series part and a field).
// Fields written as an earlier line of the series wrote them (LineScanner.readAs) or not quite: prefixes, other spellings, values parseLine reads.
const FIELDS = ['f=1', 'f=2,g=3i', 'f=t', 'f="s",g=4', 'f=1,f=2', 'g=5', '', 'f=1,g=5', '"f"=1', 'f=-1.5e3,g=t', 'f=1x', 'f="a b",g=1', 'f=99999999999999999i'];
// Timestamps, none, and ones refused or read by parseLine.
const TIMESTAMPS = [' 1000', ' 7000', '', ' -5', ' 9x', ' 99999999999999999999999', ' 5 '];

describe('groupLines', () => {
  const bodies: [string, string[]][] = [
    ['series in the same order, write after write', ['cpu,host=h f=1 60000000000\nmem,host=h f=2 60000000000', 'cpu,host=h f=3 120000000000\nmem,host=h f=4 120000000000']],
    ['a series expected whose key begins the line', ['cpu,host=h,a=1 f=1 1000\ncpu,host=h f=1 1000', 'cpu,host=h,a=1,b=2 f=2 2000\ncpu,host=h,a=1 f=3 3000']],
    ['a line without fields whose series part begins with the expected key', ['cpu,host=h,a=1 f=1 1000', 'cpu,host=h,a=1,f=2 1000']],
    ['an escaped space after the expected key', ['cpu,host=h,a=1 f=1 1000\ncpu,host=h f=1 1000', 'cpu,host=h,a=1\\  f=2 2000\ncpu,host=h f=3 3000']],
    ['series in another order', ['cpu,host=h f=1 1000\ncpu,host=g f=2 1000\ncpu,host=k f=3 1000', 'cpu,host=k f=4 2000\ncpu,host=h f=5 2000\ncpu,host=g f=6 2000']],
    ['a line parseLine reads between known series', ['cpu,host=h f=1 1000\nmem,host=h f=2 1000', 'cpu,host=h f=3,f=4 2000\nmem,host=h f=5 2000']],
    ['a line without the resource tag after a refusal', ['cpu,host=h f=1 1000\nmem,host=h f=2 1000', 'cpu,a=1 f=1 1000\nmem,host=h f=2 1000\nmem,host=h f=x 1000']],
  ];
  it.each(bodies)('groups %s as a fresh cache does', (_, writes) => {
    const warm = new SeriesCache();
    for (const body of writes) expect(outcome(body, warm)).toEqual(outcome(body, new SeriesCache()));
  });

  it('groups any sequence of writes as a fresh cache does, whatever the cache holds', () => {
    const line = fc.tuple(fc.constantFrom(...SERIES), fc.constantFrom(...FIELDS), fc.constantFrom(...TIMESTAMPS));
    const body = fc.array(line, { minLength: 1, maxLength: 12 }).map((lines) => lines.map(([s, f, t]) => `${s}${f === '' ? '' : ` ${f}`}${t}`).join('\n'));
    fc.assert(
      fc.property(fc.array(body, { minLength: 1, maxLength: 5 }), fc.constantFrom(3, 1000), (writes, capacity) => {
        const warm = new SeriesCache(capacity);
        for (const b of writes) expect(outcome(b, warm)).toEqual(outcome(b, new SeriesCache()));
      }),
    );
  });
});
