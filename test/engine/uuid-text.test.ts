import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { uuidText } from '../../engine/uuid-text.js';

describe('uuidText', () => {
  it.each<[string, number[], number, string]>([
    ['all zero bytes', new Array(16).fill(0), 0, '00000000-0000-0000-0000-000000000000'],
    ['all 0xff bytes, lowercase', new Array(16).fill(255), 0, 'ffffffff-ffff-ffff-ffff-ffffffffffff'],
    ['the 16 bytes at an offset', [9, 9, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 9], 2, '01234567-89ab-cdef-1032-547698badcfe'],
  ])('writes %s as canonical text', (_, bytes, start, text) => {
    expect(uuidText(Uint8Array.from(bytes), start)).toBe(text);
  });

  it('is the bytes\' hex digits grouped 8-4-4-4-12, for any 16 bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), (bytes) => {
        const hex = Buffer.from(bytes).toString('hex');
        expect(uuidText(bytes)).toBe([hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].join('-'));
      }),
      { numRuns: 2000, seed: 18 },
    );
  });

  it('returns a text that later calls, reusing its scratch buffer, leave unchanged', () => {
    const first = uuidText(new Uint8Array(16).fill(0x11));
    uuidText(new Uint8Array(16).fill(0x22));
    expect(first).toBe('11111111-1111-1111-1111-111111111111');
  });
});
