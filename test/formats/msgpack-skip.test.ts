// skipValue finds where a msgpack value ends without decoding it, for every
// type msgpack has (nested ones whole), and refuses a value cut short.
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { skipValue, TruncatedMsgpack } from '../../formats/msgpack-skip.js';

const packr = new Packr({ useRecords: false, variableMapSize: true });

/** Bytes of a type msgpackr does not write from a JS value, by hand. */
const raw = (...bytes: number[]) => Buffer.from(bytes);

const CASES: [string, Buffer][] = [
  ['positive fixint', packr.pack(7)],
  ['negative fixint', packr.pack(-3)],
  ['nil, true, false', raw(0xc0)],
  ['uint8 .. uint32', packr.pack(300_000)],
  ['int8 .. int32', packr.pack(-300_000)],
  ['float64', packr.pack(1.5e15 + 0.25)],
  ['float32', raw(0xca, 0, 0, 0, 0)],
  ['uint64', raw(0xcf, 0, 0, 0, 0, 0, 0, 0, 1)],
  ['int64', raw(0xd3, 0, 0, 0, 0, 0, 0, 0, 1)],
  ['fixstr', packr.pack('admin')],
  ['str8', packr.pack('x'.repeat(40))],
  ['str16', packr.pack('x'.repeat(300))],
  ['str32', packr.pack('x'.repeat(70_000))],
  ['bin8', packr.pack(Buffer.alloc(16, 1))],
  ['bin16', packr.pack(Buffer.alloc(300, 1))],
  ['fixext1 .. fixext16', raw(0xd8, 5, ...new Array<number>(16).fill(1))],
  ['fixext4', raw(0xd6, 5, 1, 2, 3, 4)],
  ['ext8', raw(0xc7, 3, 5, 1, 2, 3)],
  ['ext16', raw(0xc8, 0, 2, 5, 1, 2)],
  ['fixarray, nested', packr.pack([1, 'a', [null, true], { k: 'v' }])],
  ['array16', packr.pack(new Array(20).fill('ab'))],
  ['fixmap, nested', packr.pack({ host: 'compute-1', vcpus: 4, flavor: null, tags: ['a', 'b'] })],
  ['map16', packr.pack(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i])))],
];

describe('skipValue', () => {
  it.each(CASES)('%s: ends where its bytes end, from any offset', (_, value) => {
    expect(skipValue(value, 0)).toBe(value.length);
    const within = Buffer.concat([raw(0xc3, 0xc2), value, raw(0x01)]);
    expect(skipValue(within, 2)).toBe(2 + value.length);
  });

  it.each(CASES.filter(([, value]) => value.length > 1))('%s cut short: refused', (_, value) => {
    expect(() => skipValue(value.subarray(0, value.length - 1), 0)).toThrow(TruncatedMsgpack);
  });
});
