import { describe, expect, it } from 'vitest';
import { MAX_VARUINT_BYTES, readVaruint, varuintSize, writeVaruint } from '../../formats/varint.js';

describe('varuint (LEB128 of counts in split and metric-state headers)', () => {
  const cases: Array<[number, number[]]> = [
    [0, [0x00]],
    [1, [0x01]],
    [0x7f, [0x7f]],
    [0x80, [0x80, 0x01]],
    [300, [0xac, 0x02]],
    [0x3fff, [0xff, 0x7f]],
    [0x4000, [0x80, 0x80, 0x01]],
    [0x1fffff, [0xff, 0xff, 0x7f]],
    [0x200000, [0x80, 0x80, 0x80, 0x01]],
    [0xfffffff, [0xff, 0xff, 0xff, 0x7f]],
    [0x10000000, [0x80, 0x80, 0x80, 0x80, 0x01]],
    [2 ** 32, [0x80, 0x80, 0x80, 0x80, 0x10]],
    [2 ** 35 - 1, [0xff, 0xff, 0xff, 0xff, 0x7f]],
  ];

  it.each(cases)('writes %d as its bytes, sized as written, and reads it back', (value, bytes) => {
    const out = new Uint8Array(2 + MAX_VARUINT_BYTES).fill(0xee);
    const next = writeVaruint(out, value, 1);
    expect([...out.subarray(1, next)]).toEqual(bytes);
    expect(out[next], 'nothing written past it').toBe(0xee);
    expect(varuintSize(value)).toBe(bytes.length);
    expect(readVaruint(out, 1)).toEqual({ value, next });
  });

  it.each([
    ['nothing at the offset', [0x05], 1, 'truncated'],
    ['a continuation byte last', [0x80, 0x80], 0, 'truncated'],
    ['six bytes', [0x80, 0x80, 0x80, 0x80, 0x80, 0x01], 0, 'overlong'],
  ] as const)('names why it reads no varint: %s', (_, bytes, at, fault) => {
    expect(readVaruint(Uint8Array.from(bytes), at)).toBe(fault);
  });
});
