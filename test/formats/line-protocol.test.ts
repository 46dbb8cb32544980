import { describe, expect, it } from 'vitest';
import { LineProtocolError, parseLine, parseLines, timestampMicros, type FieldValue } from '../../formats/line-protocol.js';

const tags = (t: Record<string, string>) => new Map(Object.entries(t));
const fields = (f: Record<string, FieldValue>) => new Map(Object.entries(f));

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

  const bad: [string, string][] = [
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
  ];
  it.each(bad)('refuses %s', (_name, line) => {
    expect(() => parseLine(line, 3)).toThrow(LineProtocolError);
    expect(() => parseLine(line, 3)).toThrow('Unable to parse line 3');
  });
});

describe('parseLines', () => {
  it('skips blank and comment lines, accepts CRLF', () => {
    const points = parseLines('\n# a comment\r\na f=1\r\n\nb f=2 3\n');
    expect(points.map((p) => p.measurement)).toEqual(['a', 'b']);
    expect(points[1]!.timestamp).toBe(3n);
  });

  it('reports the 1-based number of the bad line', () => {
    expect(() => parseLines('a f=1\n\nbad line')).toThrow('Unable to parse line 3');
  });

  it('decodes UTF-8 bytes and refuses invalid ones with the line number', () => {
    expect(parseLines(Buffer.from('é f=1'))[0]!.measurement).toBe('é');
    const bytes = Buffer.concat([Buffer.from('a f=1\nb'), Buffer.from([0xff]), Buffer.from(' f=1')]);
    expect(() => parseLines(bytes)).toThrow('Unable to parse line 2');
  });

  it('answers nothing for an empty body', () => {
    expect(parseLines('')).toEqual([]);
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
