import { describe, expect, it } from 'vitest';
import { textDepth, valueDepth } from '../../formats/nesting.js';

describe('valueDepth', () => {
  it.each([
    ['a scalar', 1, 0],
    ['a flat object', { a: 1 }, 1],
    ['nested arrays and objects', { a: [{ b: [1] }] }, 4],
  ])('measures %s', (_name, value, depth) => {
    expect(valueDepth(value, 100)).toBe(depth);
  });

  it('stops counting just past the limit, without recursion', () => {
    let v: unknown = 1;
    for (let i = 0; i < 100_000; i++) v = { not: v };
    expect(valueDepth(v, 10)).toBe(11);
  });
});

describe('textDepth', () => {
  it.each([
    ['parentheses', '(a (b (c)))', '(', ')', 3],
    ['brackets of JSON text', '{"a": [{"b": []}]}', '[{', ']}', 4],
    ['ignores brackets inside strings', '{"a": "[[[[", \'b\': "\\"{{"}', '[{', ']}', 1],
    ['ends a string at a quote after an escaped backslash', '["a\\\\", ["b"]]', '[{', ']}', 2],
    ['keeps a string open past an escaped quote', '["a\\"[[", ["b"]]', '[{', ']}', 2],
    ['stops at an unterminated string', '[["a', '[{', ']}', 2],
  ])('counts %s', (_name, text, open, close, depth) => {
    expect(textDepth(text, open, close)).toBe(depth);
  });
});
