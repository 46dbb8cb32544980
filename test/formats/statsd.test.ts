import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseStatsdDatagram, type StatsdDatagram } from '../../formats/statsd.js';

describe('parseStatsdDatagram', () => {
  const cases: [string, string | Uint8Array, StatsdDatagram][] = [
    ['counter', 'hits:1|c', { samples: [{ type: 'c', name: 'hits', value: 1, rate: 1 }], errors: [] }],
    ['counter with a sample rate', 'hits:3|c|@0.1', { samples: [{ type: 'c', name: 'hits', value: 3, rate: 0.1 }], errors: [] }],
    ['sample rate of 1', 'hits:3|c|@1', { samples: [{ type: 'c', name: 'hits', value: 3, rate: 1 }], errors: [] }],
    ['negative counter', 'hits:-2|c', { samples: [{ type: 'c', name: 'hits', value: -2, rate: 1 }], errors: [] }],
    ['gauge set', 'temp:21.5|g', { samples: [{ type: 'g', name: 'temp', value: 21.5, delta: false }], errors: [] }],
    ['gauge increment', 'temp:+3|g', { samples: [{ type: 'g', name: 'temp', value: 3, delta: true }], errors: [] }],
    ['gauge decrement', 'temp:-1.5|g', { samples: [{ type: 'g', name: 'temp', value: -1.5, delta: true }], errors: [] }],
    ['timer', 'rt:320|ms', { samples: [{ type: 'ms', name: 'rt', value: 320 }], errors: [] }],
    ['set', 'users:alice|s', { samples: [{ type: 's', name: 'users', member: 'alice' }], errors: [] }],
    ['number forms', 'a:.5|ms\nb:1e3|ms\nc:2.|ms', {
      samples: [{ type: 'ms', name: 'a', value: 0.5 }, { type: 'ms', name: 'b', value: 1000 }, { type: 'ms', name: 'c', value: 2 }],
      errors: [],
    }],
    ['name up to the first colon', 'a.b-c_d:1|c', { samples: [{ type: 'c', name: 'a.b-c_d', value: 1, rate: 1 }], errors: [] }],
    ['several lines, blank and CRLF ones skipped', 'a:1|c\r\n\nb:2|g\n', {
      samples: [{ type: 'c', name: 'a', value: 1, rate: 1 }, { type: 'g', name: 'b', value: 2, delta: false }],
      errors: [],
    }],
    ['UTF-8 bytes', Buffer.from('température:1|g'), { samples: [{ type: 'g', name: 'température', value: 1, delta: false }], errors: [] }],
    ['empty datagram', '', { samples: [], errors: [] }],
    ['bad lines reported, good ones kept', 'a:1|c\nbad\nb:2|ms', {
      samples: [{ type: 'c', name: 'a', value: 1, rate: 1 }, { type: 'ms', name: 'b', value: 2 }],
      errors: [{ line: 'bad', reason: 'expected name:value|type[|@rate]' }],
    }],
    ['not UTF-8', Uint8Array.from([0x61, 0x3a, 0x31, 0x7c, 0x63, 0xff, 0xfe]), {
      samples: [],
      errors: [{ line: null, reason: 'datagram is not valid UTF-8' }],
    }],
  ];
  it.each(cases)('%s', (_name, datagram, expected) => {
    expect(parseStatsdDatagram(datagram)).toEqual(expected);
  });

  const bad: [string, string, string][] = [
    ['no type', 'a:1', 'expected name:value|type[|@rate]'],
    ['too many pipes', 'a:1|c|@0.5|x', 'expected name:value|type[|@rate]'],
    ['no colon', 'a|c', 'no colon between name and value'],
    ['empty name', ':1|c', 'empty name'],
    ['unknown type', 'a:1|h', 'unknown type "h"'],
    ['empty type', 'a:1|', 'unknown type ""'],
    ['bad number', 'a:1x|c', 'bad number "1x"'],
    ['empty value', 'a:|g', 'bad number ""'],
    ['second colon', 'a:1:2|c', 'bad number "1:2"'],
    ['infinity', 'a:Infinity|ms', 'bad number "Infinity"'],
    ['nan', 'a:nan|g', 'bad number "nan"'],
    ['hex', 'a:0x10|c', 'bad number "0x10"'],
    ['blank around the number', 'a: 1|c', 'bad number " 1"'],
    ['overflowing number', 'a:1e999|c', 'bad number "1e999"'],
    ['empty set member', 'a:|s', 'empty set member'],
    ['rate without @', 'a:1|c|0.5', 'bad sample rate "0.5": expected @rate with 0 < rate <= 1'],
    ['rate of 0', 'a:1|c|@0', 'bad sample rate "@0": expected @rate with 0 < rate <= 1'],
    ['rate above 1', 'a:1|c|@1.5', 'bad sample rate "@1.5": expected @rate with 0 < rate <= 1'],
    ['negative rate', 'a:1|c|@-0.5', 'bad sample rate "@-0.5": expected @rate with 0 < rate <= 1'],
    ['rate not a number', 'a:1|c|@x', 'bad sample rate "@x": expected @rate with 0 < rate <= 1'],
    ['rate on a gauge', 'a:1|g|@0.5', 'a sample rate is only valid for counters, not g'],
    ['rate on a timer', 'a:1|ms|@0.5', 'a sample rate is only valid for counters, not ms'],
    ['rate on a set', 'a:x|s|@0.5', 'a sample rate is only valid for counters, not s'],
  ];
  it.each(bad)('refuses a line with %s', (_name, line, reason) => {
    expect(parseStatsdDatagram(`ok:1|c\n${line}`)).toEqual({
      samples: [{ type: 'c', name: 'ok', value: 1, rate: 1 }],
      errors: [{ line, reason }],
    });
  });

  const lineCount = (text: string) => text.split(/\r?\n/).filter((l) => l !== '').length;

  it('accounts for every line of random bytes, or refuses the datagram when not UTF-8', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
      const { samples, errors } = parseStatsdDatagram(bytes);
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        expect(errors).toEqual([{ line: null, reason: 'datagram is not valid UTF-8' }]);
        return;
      }
      expect(samples.length + errors.length).toBe(lineCount(text));
    }));
  });

  it('gives samples with a name and a finite value, or a reason, for text made of statsd characters', () => {
    const unit = fc.constantFrom('a', ':', '|', '@', '.', '-', '+', '1', '0', 'e', 'c', 'g', 'm', 's', '\n');
    fc.assert(fc.property(fc.string({ unit, maxLength: 60 }), (text) => {
      const { samples, errors } = parseStatsdDatagram(text);
      expect(samples.length + errors.length).toBe(lineCount(text));
      for (const s of samples) {
        expect(s.name).not.toBe('');
        if (s.type === 's') expect(s.member).not.toBe('');
        else expect(Number.isFinite(s.value)).toBe(true);
        if (s.type === 'c') expect(s.rate > 0 && s.rate <= 1).toBe(true);
      }
    }));
  });
});
