import fc from 'fast-check';
import { v5 as uuidv5 } from 'uuid';
import { describe, expect, it } from 'vitest';
import { RESOURCE_ID_NAMESPACE, resourceUuid, resourceUuid5 } from '../../engine/resource-id.js';

describe('resourceUuid5', () => {
  it('is the uuid package\'s UUID5 in the resource namespace, for any well-formed string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (name) => {
        expect(resourceUuid5(name)).toBe(uuidv5(name, RESOURCE_ID_NAMESPACE));
      }),
      { numRuns: 2000, seed: 17 },
    );
  });

  it.each([
    ['at the length the hashing buffer takes', 'a'.repeat(1360)],
    ['past it, in characters of 3 UTF-8 bytes', '\u20ac'.repeat(1361)],
    ['far past it, in surrogate pairs', '\u{1f600}'.repeat(3000)],
  ])('is the package\'s UUID5 for a long name: %s', (_, name) => {
    expect(resourceUuid5(name)).toBe(uuidv5(name, RESOURCE_ID_NAMESPACE));
  });

  it('refuses a lone surrogate as the package does', () => {
    expect(() => uuidv5('a\ud800', RESOURCE_ID_NAMESPACE)).toThrow(URIError);
    expect(() => resourceUuid5('a\ud800')).toThrow(URIError);
  });
});

describe('resourceUuid', () => {
  it.each<[string, string | null, string]>([
    ['foobar', 'admin', 'b4d568e4-7af1-5aec-ac3f-9c09fa3685a9'],
    ['{8F8BB2D6-1CD0-4D06-9F5E-3C1C1D8E7F11}', 'admin', '8f8bb2d6-1cd0-4d06-9f5e-3c1c1d8e7f11'],
  ])('maps %j of %j to %s', (value, creator, id) => {
    expect(resourceUuid(value, creator)).toBe(id);
  });

  it('counts code points against the 255 limit', () => {
    expect(() => resourceUuid('😀'.repeat(255), 'admin')).not.toThrow();
    expect(() => resourceUuid('a'.repeat(256), 'admin')).toThrow('transformable resource id >255 max allowed characters');
  });
});
