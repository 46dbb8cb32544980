import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FIELD_BOOLEAN,
  FIELD_STRING,
  LineProtocolError,
  LineScanner,
  NO_TIMESTAMP,
  parseFieldKey,
  parseLine,
  parseSeries,
  timestampMicros,
  type FieldValue,
  type Point,
} from '../../formats/line-protocol.js';
import { hashBytes } from '../../engine/series-cache.js';

const tags = (t: Record<string, string>) => new Map(Object.entries(t));
const fields = (f: Record<string, FieldValue>) => new Map(Object.entries(f));

/** Lines parseLine refuses; the byte scanner must refuse them alike. */
const MALFORMED: [string, string][] = [
  ['no fields', 'cpu'],
  ['no fields after tags', 'cpu,host=a'],
  ['empty field list', 'cpu '],
  ['field without value', 'cpu f='],
  ['field without equals', 'cpu f'],
  ['tag without value', 'cpu,host f=1'],
  ['empty tag value', 'cpu,host= f=1'],
  ['empty measurement', ',host=a f=1'],
  ['bad number', 'cpu f=1.2.3'],
  ['bad integer', 'cpu f=1.5i'],
  ['integer overflow', 'cpu f=9223372036854775808i'],
  ['negative unsigned', 'cpu f=-1u'],
  ['unknown word', 'cpu f=yes'],
  ['nan', 'cpu f=NaN'],
  ['infinite float', 'cpu f=1e999'],
  ['unterminated string', 'cpu f="abc'],
  ['bad timestamp', 'cpu f=1 12a'],
  ['trailing garbage', 'cpu f=1 12 13'],
  ['two spaces', 'cpu  f=1'],
  ['trailing comma', 'cpu f=1,'],
  ['equals in measurement', 'c=pu f=1'],
  ['equals in a tag value', 'cpu,a=b=c f=1'],
  ['empty tag key after a tag', 'cpu,a=1,=2 f=1'],
  ['two commas', 'cpu,a=1,,b=2 f=1'],
  ['a comma before the fields', 'cpu,a=1, f=1'],
];

describe('parseLine', () => {
  const cases: [string, string, Record<string, string>, Record<string, FieldValue>, bigint | null][] = [
    ['measurement, field, timestamp', 'cpu value=1 1510581804179554816', {}, { value: 1 }, 1510581804179554816n],
    ['no timestamp', 'cpu value=1', {}, { value: 1 }, null],
    ['trailing space', 'cpu value=1 ', {}, { value: 1 }, null],
    ['tags', 'mymetric,host=foobar,mytag=myvalue field=123 15', { host: 'foobar', mytag: 'myvalue' }, { field: 123 }, 15n],
    ['repeated tag keeps the last', 'm,a=1,a=2 f=1', { a: '2' }, { f: 1 }, null],
    ['integer', 'm f=43i', {}, { f: 43 }, null],
    ['negative integer', 'm f=-43i', {}, { f: -43 }, null],
    ['unsigned integer', 'm f=7u', {}, { f: 7 }, null],
    ['float forms', 'm a=-1.5e3,b=.5,c=+2.,d=1E-2', {}, { a: -1500, b: 0.5, c: 2, d: 0.01 }, null],
    ['booleans', 'm a=t,b=TRUE,c=True,d=f,e=false,g=F 1', {}, { a: true, b: true, c: true, d: false, e: false, g: false }, 1n],
    ['quoted string value', 'm s="a \\"b\\" c, d=e",f=1 2', {}, { s: 'a "b" c, d=e', f: 1 }, 2n],
    ['escaped measurement', 'my\\ cpu\\,x,t=1 f=1', { t: '1' }, { f: 1 }, null],
    ['escaped tag key and value', 'm,ta\\=g=va\\ l\\,ue f=1', { 'ta=g': 'va l,ue' }, { f: 1 }, null],
    ['escaped field key', 'm fi\\ eld=1', {}, { 'fi eld': 1 }, null],
    ['escaped backslash', 'm,t=a\\\\ f=1', { t: 'a\\' }, { f: 1 }, null],
    ['other backslashes are literal', 'm,t=a\\b f=1', { t: 'a\\b' }, { f: 1 }, null],
    ['quoted measurement and tag', '"my m",t="x y" f=1', { t: 'x y' }, { f: 1 }, null],
    ['path-like tag', 'cpu,path=/foobar,mytag=myvalue field=43i 1', { path: '/foobar', mytag: 'myvalue' }, { field: 43 }, 1n],
    ['negative timestamp', 'm f=1 -5', {}, { f: 1 }, -5n],
    ['unicode', 'mésure,hôte=été f=1', { 'hôte': 'été' }, { f: 1 }, null],
  ];
  it.each(cases)('%s', (_name, line, t, f, ts) => {
    const p = parseLine(line);
    expect(p.tags).toEqual(tags(t));
    expect(p.fields).toEqual(fields(f));
    expect(p.timestamp).toBe(ts);
  });

  it('reads the measurement', () => {
    expect(parseLine('my\\ cpu\\,x,t=1 f=1').measurement).toBe('my cpu,x');
    expect(parseLine('"my m" f=1').measurement).toBe('my m');
  });

  it('keeps __proto__ as an ordinary key', () => {
    const p = parseLine('m,__proto__=x,constructor=y __proto__=1');
    expect(p.tags.get('__proto__')).toBe('x');
    expect(p.tags.get('constructor')).toBe('y');
    expect(p.fields.get('__proto__')).toBe(1);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it.each(MALFORMED)('refuses %s', (_name, line) => {
    expect(() => parseLine(line, 3)).toThrow(LineProtocolError);
    expect(() => parseLine(line, 3)).toThrow('Unable to parse line 3');
  });
});

/** What a line says, as the byte scanner read it or as parseLine did: strings only as such. */
interface Reading {
  line: number;
  measurement: string;
  tags: Map<string, string>;
  fields: Map<string, number | boolean | 'a string'>;
  micros: number;
}

function fromPoint(p: Point, micros: number): Reading {
  const fields = new Map([...p.fields].map(([k, v]): [string, number | boolean | 'a string'] => [k, typeof v === 'string' ? 'a string' : v]));
  return { line: p.line, measurement: p.measurement, tags: p.tags, fields, micros };
}

/** Every line of a body through LineScanner, and whether each took the byte path (checking its seriesHash). */
function scanAll(body: Buffer | string, precision = 'ns'): { readings: Reading[]; fast: boolean[] } {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const scan = new LineScanner(bytes, precision);
  const readings: Reading[] = [];
  const fast: boolean[] = [];
  while (scan.next()) {
    fast.push(scan.point === null);
    if (scan.point !== null) {
      readings.push(fromPoint(scan.point, scan.micros));
      continue;
    }
    expect(scan.seriesHash).toBe(hashBytes(bytes, scan.seriesStart, scan.seriesEnd));
    const { measurement, tags } = parseSeries(bytes.toString('utf8', scan.seriesStart, scan.seriesEnd));
    const fields = new Map<string, number | boolean | 'a string'>();
    for (let i = 0; i < scan.fieldCount; i++) {
      const key = parseFieldKey(bytes.toString('utf8', scan.keyStart[i], scan.keyEnd[i]));
      const kind = scan.kind[i];
      fields.set(key, kind === FIELD_STRING ? 'a string' : kind === FIELD_BOOLEAN ? scan.value[i] === 1 : scan.value[i]!);
    }
    readings.push({ line: scan.line, measurement, tags, fields, micros: scan.micros });
  }
  return { readings, fast };
}

/** The same line through parseLine and timestampMicros. */
function reference(line: string, precision = 'ns'): Reading {
  const p = parseLine(line);
  return fromPoint(p, p.timestamp === null ? NO_TIMESTAMP : (timestampMicros(p.timestamp, precision) ?? Number.NaN));
}

/** The scanner's reading of one line, or the message it throws. */
function outcome(read: () => Reading): Reading | string {
  try {
    return read();
  } catch (err) {
    if (err instanceof LineProtocolError) return err.message;
    throw err;
  }
}

const PRECISIONS = ['ns', 'n', 'u', 'us', 'µ', 'µs', 'ms', 's', 'm', 'h'];

describe('LineScanner', () => {
  // Each line through the byte scanner and through parseLine: the same reading or the same error.
  const lines: [string, string][] = [
    ['a collector line', 'cpu,host=host-17,region=r3 usage=12.34 1700000000000000000'],
    ['several fields and tags', 'cpu,host=a,cpu=cpu0,region=eu usage_user=1.5,usage_system=0.25,usage_idle=98.25 1700000000000000000'],
    ['no timestamp', 'm f=1'],
    ['trailing space', 'm f=1 '],
    ['two trailing spaces', 'm f=1  '],
    ['a tab after the timestamp', 'm f=1 5\t'],
    ['a timestamp after two spaces', 'm f=1  5'],
    ['integers', 'm a=43i,b=-43i,c=+7i,d=-0i,e=0i,f=007i'],
    ['unsigned integers', 'm a=7u,b=0u,c=-0u'],
    ['the largest integers', 'm a=9223372036854775807i,b=-9223372036854775808i,c=18446744073709551615u'],
    ['15 and 16 digit integers', 'm a=999999999999999i,b=9999999999999999i'],
    ['integer overflow', 'm a=9223372036854775808i'],
    ['a negative unsigned', 'm a=-1u'],
    ['an integer without digits', 'm a=i'],
    ['a signed integer without digits', 'm a=-i'],
    ['float forms', 'm a=-1.5e3,b=.5,c=+2.,d=1E-2,e=-0,f=-0.0,g=+.5e+3,h=0.1,i=1e22,j=1e23,k=123456789012345678'],
    ['long mantissas', 'm a=0.30000000000000004,b=1.7976931348623157e308,c=5e-324,d=2.2250738585072014e-308'],
    ['leading zeros', 'm a=000012.50,b=0.000001'],
    ['a float out of range', 'm a=1e999'],
    ['a float underflowing to zero', 'm a=1e-999'],
    ['a lone dot', 'm a=.'],
    ['a lone sign', 'm a=-'],
    ['an exponent without digits', 'm a=1e'],
    ['two dots', 'm a=1.2.3'],
    ['hexadecimal', 'm a=0x10'],
    ['NaN', 'm a=NaN'],
    ['Infinity', 'm a=Infinity'],
    ['booleans', 'm a=t,b=T,c=true,d=True,e=TRUE,f=f,g=F,h=false,i=False,j=FALSE'],
    ['not booleans', 'm a=tRUE'],
    ['a boolean-looking integer', 'm a=ti'],
    ['quoted strings', 'm s="a \\"b\\" c, d=e",f=1,g="",h="\\\\" 2'],
    ['a string with a space and equals', 'm s="x=1 y=2" 3'],
    ['an unterminated string', 'm s="abc'],
    ['a string ending in a backslash', 'm s="abc\\'],
    ['garbage after a string', 'm s="a"b'],
    ['escaped measurement', 'my\\ cpu\\,x,t=1 f=1'],
    ['escaped tag key and value', 'm,ta\\=g=va\\ l\\,ue f=1'],
    ['escaped field key', 'm fi\\ eld=1,a\\,b=2,c\\=d=3'],
    ['escaped backslash', 'm,t=a\\\\ f=1'],
    ['other backslashes', 'm,t=a\\b f=1'],
    ['a trailing backslash in a tag', 'm,t=a\\'],
    ['quoted measurement and tag', '"my m",t="x y" f=1'],
    ['an empty quoted measurement', '"" f=1'],
    ['a quoted field key', 'm "a b"=1,"c"=2'],
    ['quote inside a token', 'm,t=a"b f=1'],
    ['a repeated tag', 'm,a=1,a=2 f=1'],
    ['a repeated field', 'm f=1,f=2'],
    ['a field given as a number then a string', 'm f=1,f="x"'],
    ['a field spelled two ways', 'm f=1,"f"=2'],
    ['unicode', 'mésure,hôte=été champ=1 2'],
    ['__proto__', 'm,__proto__=x __proto__=1'],
    ['empty tag key', 'cpu,=a f=1'],
    ['a leading space', ' cpu f=1'],
    ['two spaces before fields', 'cpu  f=1'],
    ['signed timestamps', 'cpu f=1 +5'],
    ['negative timestamp', 'cpu f=1 -5'],
    ['negative zero timestamp', 'cpu f=1 -0'],
    ['a lone sign for a timestamp', 'cpu f=1 -'],
    ['a short timestamp', 'cpu f=1 999'],
    ['the largest timestamps', 'cpu f=1 9007199254740991999'],
    ['a timestamp past 2^53 microseconds', 'cpu f=1 9007199254740992000'],
    ['a long timestamp', 'cpu f=1 99999999999999999999999999'],
    ['a timestamp with leading zeros', 'cpu f=1 0001700000000000000000'],
    ...Array.from({ length: 18 }, (_, n): [string, string] => [`a timestamp of ${n + 1} digits`, `cpu f=1 ${'123456789'.repeat(2).slice(0, n + 1)}`]),
    ['a letter among the nanoseconds a timestamp drops', 'cpu f=1 17000000000000000x0'],
    ['a letter in the first eight digits of a timestamp', 'cpu f=1 1700000x000000000000'],
    ['a letter in the last group of a timestamp', 'cpu f=1 1700000000000x000000'],
    // Bytes next to the digits' (those of '/' and ':', a word's carries and borrows) and non-ASCII digits, at each place of the groups read four bytes at once.
    ...['/', ':', '\u00b9', '\u0660', '\u00ff'].flatMap((c) =>
      Array.from({ length: 16 }, (_, k): [string, string] => [`${JSON.stringify(c)} at place ${k} of a timestamp`, `cpu f=1 ${'1700000000000000000'.slice(0, k)}${c}${'1700000000000000000'.slice(k + 1)}`]),
    ),

    ...MALFORMED,
  ];
  it.each(lines)('reads %s as parseLine does, in every precision', (_name, line) => {
    for (const precision of PRECISIONS) {
      const scanned = outcome(() => scanAll(line, precision).readings[0]!);
      expect(scanned, precision).toEqual(outcome(() => reference(line, precision)));
    }
  });

  it.each([
    'cpu,host=host-17,region=r3 usage=12.34 1700000000000000000',
    'm,t=a\\ b a=1i,b=t,c="s",d=-1.5e3',
    '"q m","k"="v" "f"=1',
    'mésure,hôte=été champ=1',
  ])('reads %j from its bytes', (line) => {
    expect(scanAll(line).fast).toEqual([true]);
  });

  // A timestamp the same as the line before's is taken from it without reading its digits: only bytes for bytes the same.
  it('reads each timestamp of consecutive lines as parseLine does, the same as the one before or not', () => {
    const stamps = ['1700000000000000000', '1700000000000000001', '1700000000000001000', '2700000000000000000', '170000000000000000', '17000000000000000000', '+1700000000000000000', '9007199254740992000', '5', '6', ''];
    for (const precision of PRECISIONS) {
      for (const first of stamps) {
        for (const second of stamps) {
          const lines = [first, first, second, first].map((t, i) => `cpu,host=h${i} f=${i}${t === '' ? '' : ` ${t}`}`);
          const { readings } = scanAll(lines.join('\n'), precision);
          expect(readings.map((r) => r.micros), `${precision}: ${lines.join(' / ')}`).toEqual(lines.map((line) => reference(line, precision).micros));
        }
      }
    }
  });

  it('agrees with parseLine on any line of tricky characters', () => {
    const chars = ['a', 'b', '=', ',', ' ', '\\', '"', '1', '0', '.', 'e', '-', '+', 'i', 'u', 't', 'F', '#', 'é', '\t', '\u00a0'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...chars), { maxLength: 24 }), fc.constantFrom(...PRECISIONS), (parts, precision) => {
        const line = parts.join('');
        // Lines parseLine is never given: blank ones and comments are skipped before it.
        fc.pre(line.trim() !== '' && !line.startsWith('#'));
        expect(outcome(() => scanAll(line, precision).readings[0]!)).toEqual(outcome(() => reference(line, precision)));
      }),
      { numRuns: 3000, seed: 17 },
    );
  });

  it('values every float as Number() does', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer({ min: 0, max: 20 }), (x, digits) => {
        for (const text of [String(x), x.toFixed(Math.min(digits, 20)), x.toExponential(digits), x.toPrecision(digits + 1)]) {
          if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(text) || !Number.isFinite(Number(text))) continue;
          expect(Object.is(scanAll(`m f=${text}`).readings[0]!.fields.get('f'), Number(text)), text).toBe(true);
        }
      }),
      { numRuns: 3000, seed: 17 },
    );
  });

  it('skips blank and comment lines, accepts CRLF, and counts lines from 1', () => {
    const { readings } = scanAll('\n# a comment\r\na f=1\r\n \t\n\u00a0\u3000\nb f=2 3\n\r\n');
    expect(readings.map((r) => [r.line, r.measurement])).toEqual([
      [3, 'a'],
      [6, 'b'],
    ]);
    expect(readings[1]!.micros).toBe(0);
  });

  it('parses a line indented before its comment sign, and refuses it', () => {
    expect(() => scanAll('a f=1\n  # not a comment')).toThrow('Unable to parse line 2');
  });

  it('drops a byte order mark at the start of the body only', () => {
    expect(scanAll('\ufeffa f=1').readings[0]!.measurement).toBe('a');
    expect(scanAll('a f=1\n\ufeffb f=1').readings[1]!.measurement).toBe('\ufeffb');
  });

  it('reports the 1-based number of the first bad line', () => {
    expect(() => scanAll('a f=1\n\nbad line\nbad again')).toThrow('Unable to parse line 3');
  });

  it('refuses invalid UTF-8 with the number of its line, before any other error', () => {
    const bytes = Buffer.concat([Buffer.from('bad line\na f=1\nb'), Buffer.from([0xff]), Buffer.from(' f=1')]);
    expect(() => scanAll(bytes)).toThrow('Unable to parse line 3');
    // An encoded surrogate is not UTF-8 either.
    expect(() => scanAll(Buffer.from([0x61, 0x20, 0x66, 0x3d, 0x31, 0x0a, 0xed, 0xa0, 0x80]))).toThrow('Unable to parse line 2');
  });

  it('reads nothing from an empty body', () => {
    expect(scanAll('').readings).toEqual([]);
  });

  it('refuses an unknown precision', () => {
    expect(() => new LineScanner(Buffer.from('a f=1'), 'd')).toThrow('Invalid precision d');
  });
});

/**
 * LineScanner.readAs of `line` with the layout of `before` (both of the
 * series part `m,t=a`): the reading, or null when it declines.
 */
function readAsBefore(before: string, line: string): Reading | null {
  const bytes = Buffer.from(`${before}\n${line}`);
  const scan = new LineScanner(bytes);
  expect(scan.next() && scan.point === null).toBe(true);
  const layout = scan.layoutOf();
  const seriesLength = scan.seriesEnd - scan.seriesStart;
  expect(scan.nextLine()).toBe(true);
  if (!scan.readAs(scan.lineStart + seriesLength, layout)) return null;
  const fields = new Map<string, number | boolean | 'a string'>();
  for (let i = 0; i < scan.fieldCount; i++) {
    const key = parseFieldKey(bytes.toString('utf8', scan.keyStart[i], scan.keyEnd[i]));
    const kind = scan.kind[i];
    fields.set(key, kind === FIELD_STRING ? 'a string' : kind === FIELD_BOOLEAN ? scan.value[i] === 1 : scan.value[i]!);
  }
  return { line: 1, measurement: 'm', tags: tags({ t: 'a' }), fields, micros: scan.micros };
}

describe('LineScanner.readAs', () => {
  const LAYOUTS = ['m,t=a f=1', 'm,t=a f=1,g=2', 'm,t=a "f"=1', 'm,t=a f\\ x=1,g="s" 5', 'm,t=a f=t'];

  it.each([
    ['the same keys, other values', 'm,t=a f=1', 'm,t=a f=-2.5e3 1700000000000000000', true],
    ['the same keys without a timestamp', 'm,t=a f=1,g=2', 'm,t=a f=1i,g=F', true],
    ['a string where a number was', 'm,t=a f=1', 'm,t=a f="x y" 5', true],
    ['an escaped key', 'm,t=a f\\ x=1,g="s" 5', 'm,t=a f\\ x=2,g=3 6', true],
    ['a field more', 'm,t=a f=1', 'm,t=a f=1,g=2 5', false],
    ['a field fewer', 'm,t=a f=1,g=2', 'm,t=a f=1 5', false],
    ['another key', 'm,t=a f=1', 'm,t=a g=1 5', false],
    ['the key spelled otherwise', 'm,t=a f=1', 'm,t=a "f"=1 5', false],
    ['a key the layout key begins', 'm,t=a f=1', 'm,t=a ff=1 5', false],
    ['an empty value', 'm,t=a f=1', 'm,t=a f= 5', false],
    ['a value parseLine reads', 'm,t=a f=1', 'm,t=a f=9999999999999999i 5', false],
    ['a bad timestamp', 'm,t=a f=1', 'm,t=a f=1 5x', false],
    ['a trailing comma', 'm,t=a f=1', 'm,t=a f=1, 5', false],
    ['a key too long for a layout', `m,t=a ${'k'.repeat(70_000)}=1`, `m,t=a ${'k'.repeat(70_000)}=1`, false],
    ['a key as long as a layout holds', `m,t=a ${'k'.repeat(65_533)}=1`, `m,t=a ${'k'.repeat(65_533)}=2`, true],
  ])('reads a line with %s', (_name, before, line, read) => {
    const reading = readAsBefore(before, line);
    expect(reading !== null).toBe(read);
    if (reading !== null) expect(reading).toEqual(reference(line));
  });

  it('reads any line it does not decline as parseLine does', () => {
    const chars = ['f', 'g', '=', ',', ' ', '\\', '"', '1', '.', 'e', '-', 'i', 't', 'x', '5'];
    fc.assert(
      fc.property(fc.constantFrom(...LAYOUTS), fc.array(fc.constantFrom(...chars), { maxLength: 16 }), (before, parts) => {
        const line = `m,t=a ${parts.join('')}`;
        const reading = readAsBefore(before, line);
        if (reading !== null) expect(reading).toEqual(outcome(() => reference(line)));
      }),
      { numRuns: 3000, seed: 17 },
    );
  });
});

describe('timestampMicros', () => {
  const cases: [bigint, string, number | undefined][] = [
    [1510581804179554816n, 'ns', 1510581804179554],
    [1510581804179554816n, 'n', 1510581804179554],
    [1510581804179554n, 'u', 1510581804179554],
    [1510581804179n, 'ms', 1510581804179000],
    [1510581804n, 's', 1510581804000000],
    [2n, 'm', 120_000_000],
    [1n, 'h', 3_600_000_000],
    [0n, 'ns', 0],
    [-1n, 's', undefined],
    [10n ** 30n, 'ns', undefined],
  ];
  it.each(cases)('%s in %s', (raw, precision, micros) => {
    expect(timestampMicros(raw, precision)).toBe(micros);
  });

  it('refuses an unknown precision', () => {
    expect(() => timestampMicros(1n, 'd')).toThrow('Invalid precision d');
  });
});
