// The measure fast path must agree with the general path (JSON.parse then
// decodeMeasures) wherever it answers, and step aside (null) wherever the
// general path has something else to say.
import { describe, expect, it } from 'vitest';
import { random } from '../../bench/split-codec.bench.js';
import { scanMeasureBatch, scanMeasureList } from '../../formats/measure-scan.js';
import { decodeMeasures } from '../../formats/measures.js';
import { parseIsoTimestamp, parseNumpyDatetime } from '../../formats/timestamp.js';

const NOW = Date.UTC(2024, 5, 1) * 1000;

function general(text: string): { timestamps: number[]; values: number[] } {
  const d = decodeMeasures(JSON.parse(text), NOW);
  return { timestamps: [...d.timestamps], values: [...d.values] };
}

/** A body's bytes, as the server receives them. */
const bytes = (text: string) => Buffer.from(text, 'utf8');

function scanned(text: string): { timestamps: number[]; values: number[] } | null {
  const d = scanMeasureList(bytes(text));
  return d === null ? null : { timestamps: [...d.timestamps], values: [...d.values] };
}

describe('scanMeasureList answers as the general path does', () => {
  it.each([
    ['epoch integers', '[{"timestamp": 1704067200, "value": 1}, {"timestamp": 1704067260, "value": 2}]'],
    ['epoch fractions and exponents', '[{"timestamp": 1.7040672005e9, "value": -2.5E-3}, {"timestamp": 1704067260.25, "value": 1e22}]'],
    ['keys in either order', '[{"value": 4.5, "timestamp": 1704067200}]'],
    ['whitespace anywhere JSON allows it', ' \n[ {\t"timestamp" :1704067200 ,"value":\r\n0.1 } ]\n'],
    ['ISO with Z, offsets and fractions', '[{"timestamp": "2024-01-01T00:00:00Z", "value": 1}, {"timestamp": "2024-01-01T01:00:00.5+01:00", "value": 2}, {"timestamp": "2024-01-01 00:00:01.1234567-0230", "value": 3}]'],
    ['naive ISO (UTC)', '[{"timestamp": "2015-03-06T14:33:57", "value": 43.1}]'],
    ['negative zero and big values', '[{"timestamp": 1, "value": -0}, {"timestamp": 2, "value": 1.7976931348623157e308}, {"timestamp": 3, "value": 1e400}]'],
    ['long mantissas', '[{"timestamp": 1, "value": 0.30000000000000004}, {"timestamp": 2, "value": 123456789012345678901234567890}]'],
    ['an empty list', '[]'],
  ])('%s', (_name, text) => {
    const fast = scanned(text);
    expect(fast).not.toBeNull();
    expect(fast).toEqual(general(text));
    fast!.values.forEach((v, i) => expect(Object.is(v, general(text).values[i])).toBe(true));
  });

  it('reads generated numbers bit for bit as JSON.parse does', () => {
    const next = random(11);
    for (let i = 0; i < 5000; i++) {
      const digits = Array.from({ length: 1 + Math.floor(next() * 20) }, () => Math.floor(next() * 10)).join('');
      const forms = [
        String(next() * 10 ** Math.floor(next() * 40 - 20)),
        `${next() < 0.5 ? '-' : ''}${digits.replace(/^0+(?=\d)/, '')}`,
        `${Math.floor(next() * 1000)}.${digits}`,
        `${digits.replace(/^0+(?=\d)/, '')}e${Math.floor(next() * 60 - 30)}`,
      ];
      for (const value of forms) {
        const text = `[{"timestamp": 1, "value": ${value}}]`;
        const fast = scanned(text);
        expect(fast, value).not.toBeNull();
        expect(Object.is(fast!.values[0], JSON.parse(value)), value).toBe(true);
      }
    }
  });
});

describe('scanMeasureList steps aside', () => {
  it.each([
    ['numeric-string timestamps', '[{"timestamp": "1704067200", "value": 1}]'],
    ['relative timestamps', '[{"timestamp": "-2 days", "value": 1}]'],
    ['string values', '[{"timestamp": 1, "value": "1.5"}]'],
    ['boolean values', '[{"timestamp": 1, "value": true}]'],
    ['null values', '[{"timestamp": 1, "value": null}]'],
    ['a missing value', '[{"timestamp": 1}]'],
    ['extra keys', '[{"timestamp": 1, "value": 1, "unit": "s"}]'],
    ['repeated keys', '[{"timestamp": 1, "timestamp": 2}]'],
    ['escaped keys', '[{"time\\u0073tamp": 1, "value": 1}]'],
    ['mixed timestamp kinds', '[{"timestamp": "2024-01-01T00:00:00", "value": 1}, {"timestamp": 1, "value": 2}]'],
    ['timestamps before the epoch', '[{"timestamp": -5, "value": 1}]'],
    ['ISO forms outside the canonical one', '[{"timestamp": "2024-01-01T00:00:00+05", "value": 1}]'],
    ['impossible dates', '[{"timestamp": "2023-02-29T00:00:00", "value": 1}]'],
    ['leading zeros', '[{"timestamp": 01, "value": 1}]'],
    ['bare fractions', '[{"timestamp": 1, "value": .5}]'],
    ['trailing commas', '[{"timestamp": 1, "value": 1},]'],
    ['trailing text', '[{"timestamp": 1, "value": 1}] x'],
    ['an object instead of a list', '{"timestamp": 1, "value": 1}'],
    ['empty text', ''],
    ['non-ASCII bytes in a timestamp', '[{"timestamp": "2024-01-01T00:00:00 ", "value": 1}]'],
  ])('on %s', (_name, text) => {
    expect(scanMeasureList(bytes(text))).toBeNull();
  });
});

describe('scanMeasureBatch', () => {
  it('reads each metric list in body order', () => {
    const text = '{"b": [{"timestamp": 2, "value": 3}], "a": [], "c": [{"timestamp": 1, "value": 1}]}';
    const batch = scanMeasureBatch(bytes(text))!;
    expect(batch.keys).toEqual(['b', 'a', 'c']);
    expect([...batch.lists[0]!.values]).toEqual([3]);
    expect(batch.lists[1]!.timestamps.length).toBe(0);
  });

  it('keeps a repeated key twice, for the caller to step aside', () => {
    expect(scanMeasureBatch(bytes('{"a": [], "a": [{"timestamp": 1, "value": 1}]}'))!.keys).toEqual(['a', 'a']);
  });

  it.each([
    ['a list instead of an object', '[]'],
    ['an off-path list inside', '{"a": [{"timestamp": 1, "value": "x"}]}'],
    ['a key of non-ASCII characters', '{"métrique": []}'],
  ])('steps aside on %s', (_name, text) => {
    expect(scanMeasureBatch(bytes(text))).toBeNull();
  });
});

describe('parseIsoTimestamp', () => {
  it('gives what the numpy reader gives, or leaves the string to it', () => {
    const next = random(5);
    const pad = (n: number, w: number) => String(n).padStart(w, '0');
    let answered = 0;
    for (let i = 0; i < 20000; i++) {
      const pick = <T,>(xs: T[]) => xs[Math.floor(next() * xs.length)]!;
      const fraction = pick(['', '.', `.${pad(Math.floor(next() * 1e9), 9).slice(0, 1 + Math.floor(next() * 9))}`, `.${'9'.repeat(19)}`]);
      const zone = pick(['', 'Z', `+${pad(Math.floor(next() * 26), 2)}:${pad(Math.floor(next() * 62), 2)}`, `-${pad(Math.floor(next() * 26), 2)}${pad(Math.floor(next() * 62), 2)}`, '+05', ' ']);
      const text =
        `${pad(Math.floor(1960 + next() * 100), 4)}-${pad(Math.floor(next() * 14), 2)}-${pad(Math.floor(next() * 32), 2)}` +
        `${pick(['T', ' ', 'x'])}${pad(Math.floor(next() * 25), 2)}:${pad(Math.floor(next() * 61), 2)}:${pad(Math.floor(next() * 61), 2)}` +
        fraction + zone;
      const fast = parseIsoTimestamp(bytes(text), 0, text.length);
      if (fast === undefined) continue;
      answered++;
      expect(fast, text).toBe(parseNumpyDatetime(text));
    }
    expect(answered).toBeGreaterThan(2000);
  });

  it('reads part of a longer text', () => {
    const text = 'xx"2024-01-01T00:00:01Z"';
    expect(parseIsoTimestamp(bytes(text), 3, text.length - 1)).toBe(Date.UTC(2024, 0, 1, 0, 0, 1) * 1000);
  });
});
