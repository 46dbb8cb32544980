// Keys holding a UUID beside other elements (engine/uuid-keys.ts): the
// elements other than the id are written as ordered-binary writes them as
// an array (strings kept between keys, numbers without a buffer), so a key
// is byte for byte what it was (keyValueToBuffer of those elements), and
// reads back as written.
import fc from 'fast-check';
import { keyValueToBuffer } from 'lmdb';
import { describe, expect, it } from 'vitest';
import { idFirstKeys, idLastKeys } from '../../engine/uuid-keys.js';

const TAG = 0x1a;
const uuidBytes = (id: string) => Buffer.from(id.replaceAll('-', ''), 'hex');

function written(encoder: { writeKey(key: unknown, target: Uint8Array, position: number): number }, key: unknown): Buffer {
  const target = Buffer.alloc(4096);
  // Not at 0: a key is written after what lmdb-js wrote before it.
  const end = encoder.writeKey(key, target, 3);
  return target.subarray(3, end);
}

const uuid = fc.uuid().map((u) => u.toLowerCase());
/** Strings with characters escaped by ordered-binary (0..4), below 28, multi-byte, surrogate pairs, and past its 0x40 fast path. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.constantFrom('cpu.usage@region=r1', '\u0000a', '\u0004', '\u001b', 'é', '😀', 'x'.repeat(64), 'influxdb'),
);
/** -0 apart: ordered-binary does not read back what it writes for it (below). */
const number = fc.oneof(
  fc.double({ noNaN: true }).filter((n) => !Object.is(n, -0)),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  fc.constantFrom(0, 1_700_000_000_000_000, 1.5, -1, -1_700_000_000_000_000, Number.MAX_VALUE, Number.MIN_VALUE, Number.POSITIVE_INFINITY),
);

describe('idFirstKeys: [id, ...rest]', () => {
  it('writes the rest as keyValueToBuffer of it did, and reads the key back', () => {
    fc.assert(
      fc.property(uuid, fc.array(fc.oneof(text.filter((s) => s !== ''), number), { minLength: 1, maxLength: 3 }), (id, rest) => {
        const key = [id, ...rest];
        const want = Buffer.concat([Buffer.of(TAG), uuidBytes(id), Buffer.of(0), keyValueToBuffer(rest)]);
        const bytes = written(idFirstKeys, key);
        expect(bytes).toEqual(want);
        expect(idFirstKeys.readKey(bytes, 0, bytes.length)).toEqual(key);
      }),
      { numRuns: 500 },
    );
  });

  it.each([
    ['a metric name written again (kept between keys)', ['cpu.usage@region=r1', 'cpu.usage@region=r1']],
    ['an empty name', ['']],
  ])('%s', (_case, names) => {
    const id = '0190a0b0-0000-7000-8000-000000000001';
    for (const name of names) {
      expect(written(idFirstKeys, [id, name])).toEqual(Buffer.concat([Buffer.of(TAG), uuidBytes(id), Buffer.of(0), keyValueToBuffer([name])]));
    }
  });
});

describe("idLastKeys('sn'): [type, revision_start, id]", () => {
  const keys = idLastKeys('sn');
  it('writes the prefix as keyValueToBuffer of it did, and reads the key back', () => {
    fc.assert(
      fc.property(text.filter((s) => s !== ''), number, uuid, (type, start, id) => {
        const want = Buffer.concat([keyValueToBuffer([type, start]), Buffer.of(0), Buffer.of(TAG), uuidBytes(id)]);
        const bytes = written(keys, [type, start, id]);
        expect(bytes).toEqual(want);
        expect(keys.readKey(bytes, 0, bytes.length)).toEqual([type, start, id]);
      }),
      { numRuns: 500 },
    );
  });

  it('writes -0 and NaN as before', () => {
    const id = '0190a0b0-0000-7000-8000-000000000001';
    for (const start of [-0, Number.NaN]) {
      expect(written(keys, ['t', start, id])).toEqual(Buffer.concat([keyValueToBuffer(['t', start]), Buffer.of(0), Buffer.of(TAG), uuidBytes(id)]));
    }
  });
});
