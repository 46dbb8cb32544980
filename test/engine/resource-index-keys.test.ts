import { describe, expect, it } from 'vitest';
import { decodeKey, entryBytes, entryTarget, INDEXED_STRING_LENGTH, type StoredValue } from '../../engine/resource-index-keys.js';

const UUID = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const hex = (b: Buffer) => b.toString('hex');

describe('index entries', () => {
  // The layout is on disk: these bytes must not change.
  it.each<[string, StoredValue, string, number, string, string]>([
    ['NULL of a current revision', null, UUID, -1, '00070003' + '00', '0a1b2c3d4e5f4a6b8c7d9e0f1a2b3c4d' + '4310000000000000'],
    ['true', true, UUID, -1, '00070003' + '0101', '0a1b2c3d4e5f4a6b8c7d9e0f1a2b3c4d' + '4310000000000000'],
    ['a positive number', 1.5, UUID, -1, '00070003' + '02' + 'bff8000000000000', '0a1b2c3d4e5f4a6b8c7d9e0f1a2b3c4d' + '4310000000000000'],
    ['a negative number, every bit flipped', -1.5, UUID, -1, '00070003' + '02' + '4007ffffffffffff', '0a1b2c3d4e5f4a6b8c7d9e0f1a2b3c4d' + '4310000000000000'],
    ['-0 as 0', -0, UUID, -1, '00070003' + '02' + '8000000000000000', '0a1b2c3d4e5f4a6b8c7d9e0f1a2b3c4d' + '4310000000000000'],
    ['a string in UTF-8', 'hé', UUID, -1, '00070003' + '03' + '68c3a9', '0a1b2c3d4e5f4a6b8c7d9e0f1a2b3c4d' + '4310000000000000'],
    ['a closed revision, its number in the dup', 'h', UUID, 3, '00070003' + '03' + '68', '0a1b2c3d4e5f4a6b8c7d9e0f1a2b3c4d' + '4008000000000000' + '4310000000000000'],
    ['an id that is not a UUID, in the key after 0x00', 'h', 'né', -1, '00070003' + '03' + '68' + '00' + '6ec3a9', '4310000000000000'],
    ['an uppercase UUID, not canonical: in the key', 'h', UUID.toUpperCase(), -1, '00070003' + '03' + '68' + '00' + '30413142324333442d344535462d344136422d384337442d394530463141324233433444', '4310000000000000'],
    ['a UUID with a character not hex: in the key', 'h', '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4g', -1, '00070003' + '03' + '68' + '00' + '30613162326333642d346535662d346136622d386337642d396530663161326233633467', '4310000000000000'],
  ])('%s', (_name, value, id, revision, key, dup) => {
    const entry = entryBytes(7, 3, value, { id, revision, revisionStart: 2 ** 50 });
    expect([hex(entry.key), hex(entry.dup)]).toEqual([key, dup]);
  });

  it.each<[string, StoredValue, StoredValue]>([
    ['a control character cuts the string', 'ab\u0001cd', 'ab'],
    ['a character from U+D7FF on ends it as U+D7FF', 'ab\ue000cd', 'ab\ud7ff'],
    ['a long string keeps its prefix', 'x'.repeat(INDEXED_STRING_LENGTH + 5), 'x'.repeat(INDEXED_STRING_LENGTH)],
    ['a number round-trips', -1e-300, -1e-300],
  ])('decode back: %s', (_name, value, stored) => {
    for (const id of [UUID, 'plain id']) {
      for (const revision of [-1, 4]) {
        const { key, dup } = entryBytes(1, 2, value, { id, revision, revisionStart: 1_700_000_000_000_000 });
        expect(decodeKey(key)).toEqual({ typeCode: 1, fieldCode: 2, value: stored });
        expect(entryTarget(key, dup, revision !== -1)).toEqual({ id, revision, revisionStart: 1_700_000_000_000_000 });
      }
    }
  });
});
