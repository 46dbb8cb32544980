// The operations parser: prefix strings and nested arrays into the AST, and
// Gnocchi 4.4's 400 bodies for bad input (checked against a running server).
import { describe, expect, it } from 'vitest';
import { extractReferences, OperationsError, parseOperations, parsePrefix, type OperationNode } from '../../formats/operations.js';

const A = 'a';
const metric = (name = A, aggregation = 'mean'): OperationNode => ({ kind: 'metric', refs: [{ name, aggregation }], single: true });

function errorOf(input: unknown): unknown {
  try {
    parseOperations(input);
  } catch (err) {
    if (err instanceof OperationsError) return err.description;
    throw err;
  }
  throw new Error('no error');
}

describe('parsePrefix', () => {
  it.each([
    ['(metric a mean)', ['metric', 'a', 'mean']],
    ['  (aggregate mean (metric (a mean) (b max)))', ['aggregate', 'mean', ['metric', ['a', 'mean'], ['b', 'max']]]],
    ['(+ (metric a mean) 2.0) (ignored)', ['+', ['metric', 'a', 'mean'], '2.0']],
    ['(metric "cpu util" mean)', ['metric', '"cpu util"', 'mean']],
  ])('%s', (text, expected) => {
    expect(parsePrefix(text)).toEqual(expected);
  });

  it.each([
    ['(metroc foo bar', "Expected ')', found end of text  (at char 15), (line:1, col:16)"],
    ['metric', "Expected '(', found 'metric'  (at char 0), (line:1, col:1)"],
    ['', "Expected '('  (at char 0), (line:1, col:1)"],
  ])('refuses %j', (text, detail) => {
    expect(errorOf(text)).toEqual({ cause: 'Invalid operations', reason: 'Fail to parse the operations string', detail });
  });
});

describe('parseOperations', () => {
  it.each<[string, unknown, OperationNode]>([
    ['single metric', '(metric a mean)', metric()],
    ['metric list', ['metric', ['a', 'mean'], ['b', 'max']], { kind: 'metric', refs: [{ name: 'a', aggregation: 'mean' }, { name: 'b', aggregation: 'max' }], single: false }],
    ['aggregate', '(aggregate rate:mean (metric a mean))', { kind: 'aggregate', method: { name: 'rate:mean', base: 'mean', rate: true }, operand: metric() }],
    ['rolling with string window', '(rolling max 3 (metric a mean))', { kind: 'rolling', method: { name: 'max', base: 'max', rate: false }, window: 3, operand: metric() }],
    ['rolling with float window truncates', ['rolling', 'sum', 2.5, ['metric', 'a', 'mean']], { kind: 'rolling', method: { name: 'sum', base: 'sum', rate: false }, window: 2, operand: metric() }],
    ['resample 1d', '(resample mean 1d (metric a mean))', { kind: 'resample', method: 'mean', granularity: 86_400_000_000, operand: metric() }],
    ['resample 60s', '(resample 95pct 60s (metric a mean))', { kind: 'resample', method: '95pct', granularity: 60_000_000, operand: metric() }],
    ['resample seconds', ['resample', 'last', 60, ['metric', 'a', 'mean']], { kind: 'resample', method: 'last', granularity: 60_000_000, operand: metric() }],
    ['number operand', '(× (metric a mean) 2)', { kind: 'binary', operator: 'mul', symbol: '×', left: metric(), right: { kind: 'number', value: 2 } }],
    ['comparison alias', '(≥ 1.5 (metric a mean))', { kind: 'binary', operator: 'ge', symbol: '≥', left: { kind: 'number', value: 1.5 }, right: metric() }],
    ['clip_min', '(clip_min (metric a mean) 10)', { kind: 'binary', operator: 'clip_min', symbol: 'clip_min', left: metric(), right: { kind: 'number', value: 10 } }],
    ['clip with both bounds', '(clip (metric a mean) 0 10)', { kind: 'clip', operand: metric(), min: { kind: 'number', value: 0 }, max: { kind: 'number', value: 10 } }],
    ['clip with min only', '(clip (metric a mean) 0)', { kind: 'clip', operand: metric(), min: { kind: 'number', value: 0 }, max: null }],
    ['function alias', '(absolute (metric a mean))', { kind: 'unary', fn: 'abs', symbol: 'absolute', operand: metric() }],
    ['rateofchange', '(rateofchange (metric a mean))', { kind: 'unary', fn: 'rateofchange', symbol: 'rateofchange', operand: metric() }],
  ])('%s', (_name, input, expected) => {
    expect(parseOperations(input)).toEqual(expected);
  });

  it.each([
    ['%', 'mod'], ['mod', 'mod'], ['+', 'add'], ['add', 'add'], ['-', 'sub'], ['sub', 'sub'], ['*', 'mul'], ['mul', 'mul'],
    ['/', 'div'], ['÷', 'div'], ['div', 'div'], ['**', 'pow'], ['^', 'pow'], ['pow', 'pow'],
    ['=', 'eq'], ['==', 'eq'], ['eq', 'eq'], ['<', 'lt'], ['lt', 'lt'], ['>', 'gt'], ['gt', 'gt'], ['<=', 'le'], ['≤', 'le'], ['le', 'le'],
    ['>=', 'ge'], ['ge', 'ge'], ['!=', 'ne'], ['≠', 'ne'], ['ne', 'ne'],
  ])('operator %s is %s', (symbol, operator) => {
    expect(parseOperations([symbol, ['metric', 'a', 'mean'], 1])).toMatchObject({ kind: 'binary', operator });
  });

  it.each(['neg', 'negative', 'cos', 'sin', 'tan', 'floor', 'ceil', 'abs'])('function %s', (fn) => {
    expect(parseOperations([fn, ['metric', 'a', 'mean']])).toMatchObject({ kind: 'unary' });
  });

  const invalid = (reason: string, detail = ['operations']) => ({ cause: 'Invalid input', reason, detail });
  it.each<[string, unknown, unknown]>([
    ['empty', [], invalid("Operation must not be empty for dictionary value @ data['operations']")],
    ['not a list', { foo: 'bar' }, invalid("Expected a tuple/list, got a <class 'dict'> for dictionary value @ data['operations']")],
    ['a number', 5, invalid("Expected a tuple/list, got a <class 'int'> for dictionary value @ data['operations']")],
    ['metric alone', ['metric'], invalid("Operation need at least one argument for dictionary value @ data['operations']")],
    ['metric without aggregation', ['metric', 'a'], invalid("None @ data['operations'][0]", ['operations', '0'])],
    ['bad pair in list', ['metric', ['a', 'mean'], 'x'], invalid("None @ data['operations'][1]", ['operations', '1'])],
    ['nested bad metric', '(aggregate mean (metric a))', invalid("None @ data['operations'][0]", ['operations', '0'])],
    ['unknown operation', '(notexist (absolute (metric a mean)))', invalid("'notexist' operation invalid for dictionary value @ data['operations']")],
    ['bad rolling method', '(rolling blah 2 (metric a mean))', invalid("'rolling' operation invalid for dictionary value @ data['operations']")],
    ['rolling without window', '(rolling mean (metric a mean))', invalid("'rolling' operation invalid for dictionary value @ data['operations']")],
    ['rolling float string window', '(rolling mean 1.5 (metric a mean))', invalid("'rolling' operation invalid for dictionary value @ data['operations']")],
    ['rolling zero window', '(rolling mean 0 (metric a mean))', invalid("'rolling' operation invalid for dictionary value @ data['operations']")],
    ['bad resample granularity', '(resample mean invalid (metric a mean))', invalid("'resample' operation invalid for dictionary value @ data['operations']")],
    ['resample var', '(resample var 60 (metric a mean))', invalid("'resample' operation invalid for dictionary value @ data['operations']")],
    ['nested bad operand', '(aggregate mean (+ (metric a mean) x))', invalid("'aggregate' operation invalid for dictionary value @ data['operations']")],
    ['wrong arity', '(+ (metric a mean))', invalid("'+' operation invalid for dictionary value @ data['operations']")],
  ])('refuses %s', (_name, input, expected) => {
    expect(errorOf(input)).toEqual(expected);
  });
});

describe('extractReferences', () => {
  it('keeps first appearances, once', () => {
    const node = parseOperations('(- (metric (a mean) (b mean)) (metric (b mean) (a max)))');
    expect(extractReferences(node)).toEqual([
      { name: 'a', aggregation: 'mean' },
      { name: 'b', aggregation: 'mean' },
      { name: 'a', aggregation: 'max' },
    ]);
  });
});
