import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { MAX_PY_FLOAT_LENGTH, pyFloat, pyJson, pyRepr, pySet, pyUuid, writePyFloat } from '../../formats/json.js';
import { writtenText } from './written.js';

/** writePyFloat's text, checking it stays within its bounds. */
function written(v: number): string {
  return writtenText((buf, pos) => writePyFloat(buf, pos, v), MAX_PY_FLOAT_LENGTH, 3);
}

/** Integers scaled down by a power of ten: the values measures mostly hold. */
const decimals = fc
  .tuple(fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }), fc.integer({ min: 0, max: 9 }))
  .map(([n, k]) => n / 10 ** k);

describe('pyFloat', () => {
  // Python 3's repr() of the same floats.
  it.each([
    [0, '0.0'],
    [-0, '-0.0'],
    [1, '1.0'],
    [-42.57, '-42.57'],
    [0.1 + 0.2, '0.30000000000000004'],
    [1e-4, '0.0001'],
    [1e-5, '1e-05'],
    [1.5e-7, '1.5e-07'],
    [-2.5e-10, '-2.5e-10'],
    [5e-324, '5e-324'],
    [1e15, '1000000000000000.0'],
    [9999999999999998, '9999999999999998.0'],
    [1e16, '1e+16'],
    [123456789012345678, '1.2345678901234568e+17'],
    [1e100, '1e+100'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [NaN, 'NaN'],
    [-Infinity, '-Infinity'],
  ])('prints %s as %s', (v, text) => {
    expect(pyFloat(v)).toBe(text);
  });
});

describe('writePyFloat', () => {
  it.each([
    0, -0, 1, -1, 0.1, 0.2, 0.3, 42.5, -42.57, 0.30000000000000004, 1 / 3, 2 / 3, 100, 1e6, 123456.789,
    1e-4, 1e-5, 1e-6, 1.5e-6, 9.999999e-7, 1e-7, 1.5e-7, 5e-324, 2.2250738585072014e-308,
    1e14 - 1, 1e14, 1e14 + 1, 99999999999999.98, 9999999999999.998, 1e15, 1e16 - 2, 1e16, 2 ** 53, 2 ** 53 + 2, 1e21, 1.7976931348623157e308,
    -0.0000012345678901234567, 0.1 + 0.7, 42.56666666666667, 4.35, 4.345, 1.005, 8.41, 2 ** -20,
    NaN, Infinity, -Infinity,
  ])('writes %s as pyFloat does', (v) => {
    expect(written(v)).toBe(pyFloat(v));
  });

  it('matches pyFloat on any double', () => {
    fc.assert(
      fc.property(fc.double(), (v) => {
        expect(written(v)).toBe(pyFloat(v));
      }),
      { numRuns: 20_000 },
    );
  });

  it('matches pyFloat on decimals of up to nine places', () => {
    fc.assert(
      fc.property(decimals, (v) => {
        expect(written(v)).toBe(pyFloat(v));
      }),
      { numRuns: 20_000 },
    );
  });

  it('matches pyFloat next to decimals and at the edge of the fast path', () => {
    fc.assert(
      fc.property(decimals, fc.integer({ min: -3, max: 3 }), fc.integer({ min: 0, max: 8 }), (v, ulps, shift) => {
        let x = v * 10 ** shift;
        for (let i = 0; i < Math.abs(ulps); i++) x = nextDouble(x, Math.sign(ulps));
        expect(written(x)).toBe(pyFloat(x));
      }),
      { numRuns: 20_000 },
    );
  });
});

/** The neighbouring double of x towards +Infinity (direction 1) or -Infinity (-1). */
function nextDouble(x: number, direction: number): number {
  if (x === 0) return direction * Number.MIN_VALUE;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigInt64(0);
  view.setBigInt64(0, bits + (x > 0 === direction > 0 ? 1n : -1n));
  return view.getFloat64(0);
}

// Gnocchi's error details may hold Python objects whose repr, shown in its
// error pages, is not their JSON: a uuid.UUID, a set (observed on the
// reference: the 404 of an aggregation method a metric lacks, the 400 of
// /v1/aggregates when no metric matches).
describe('PyValue: a Python object in an error detail', () => {
  const detail = { metric: pyUuid('6868da77-fa82-4e67-aba9-270c5ae8cbca'), names: pySet(['nope']) };

  it('is its JSON value in JSON', () => {
    expect(pyJson(detail)).toBe('{"metric": "6868da77-fa82-4e67-aba9-270c5ae8cbca", "names": ["nope"]}');
    expect(JSON.stringify(detail)).toBe('{"metric":"6868da77-fa82-4e67-aba9-270c5ae8cbca","names":["nope"]}');
  });

  it.each<[string, unknown, string]>([
    ['a UUID', pyUuid('6868da77-fa82-4e67-aba9-270c5ae8cbca'), "UUID('6868da77-fa82-4e67-aba9-270c5ae8cbca')"],
    ['a set of one name', pySet(['nope']), "{'nope'}"],
    ['a set of names', pySet(['a', "b'c"]), `{'a', "b'c"}`],
    ['an empty set', pySet([]), 'set()'],
    ['a dict holding them', detail, "{'metric': UUID('6868da77-fa82-4e67-aba9-270c5ae8cbca'), 'names': {'nope'}}"],
  ])('is Python\'s repr of %s in reprs', (_name, value, repr) => {
    expect(pyRepr(value)).toBe(repr);
  });
});
