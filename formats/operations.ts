/**
 * The `/v1/aggregates` operations language: a prefix string
 * `(aggregate mean (metric (id1 mean) (id2 mean)))` or the same tree as
 * nested JSON arrays, parsed and validated into the typed AST of
 * `operations-nodes.ts`. Invalid input raises {@link OperationsError}
 * carrying the body Gnocchi 4.4 answers (its voluptuous messages included).
 */
import { parseDuration, parsePythonFloat } from './duration.js';
import { FormatError } from './errors.js';
import { MAX_QUERY_NESTING, textDepth, valueDepth } from './nesting.js';
import {
  BINARY_OPERATORS,
  SERIES_METHODS,
  UNARY_FUNCTIONS,
  type MetricRef,
  type OperationNode,
  type ReductionMethod,
  type SeriesMethod,
} from './operations-nodes.js';

export * from './operations-nodes.js';

export interface OperationsErrorBody {
  cause: string;
  reason: string;
  detail: unknown;
}

export class OperationsError extends FormatError {
  constructor(readonly description: OperationsErrorBody) {
    super(description.reason);
  }
}

/** A nested list of the tokens of the prefix form (pyparsing's nestedExpr). */
export type RawOperations = string | RawOperations[];

function lineCol(text: string, loc: number): string {
  const before = text.slice(0, loc);
  const line = before.split('\n').length;
  const col = loc - (before.lastIndexOf('\n') + 1) + 1;
  return `(at char ${loc}), (line:${line}, col:${col})`;
}

function parseFailure(text: string, expected: string, loc: number): OperationsError {
  let found = '';
  if (loc < text.length) {
    const word = /^\S+/.exec(text.slice(loc))?.[0] ?? text[loc]!;
    found = `, found ${JSON.stringify(word).replace(/^"|"$/g, "'")}`;
  } else if (expected !== "'('") {
    found = ', found end of text';
  }
  return new OperationsError({
    cause: 'Invalid operations',
    reason: 'Fail to parse the operations string',
    detail: `Expected ${expected}${found}  ${lineCol(text, loc)}`,
  });
}

const WHITESPACE = /\s/;

function tooDeep(): OperationsError {
  return new OperationsError({
    cause: 'Invalid operations',
    reason: `Operations nested deeper than ${MAX_QUERY_NESTING} levels`,
    detail: [],
  });
}

/**
 * Reads the first parenthesised expression of `text`, as
 * `OneOrMore(nestedExpr()).parseString(text)[0]` does: tokens are runs of
 * characters other than whitespace and parentheses, quoted strings are kept
 * whole (quotes included), and anything after the first expression is ignored.
 */
export function parsePrefix(text: string): RawOperations[] {
  if (textDepth(text, '(', ')') > MAX_QUERY_NESTING) throw tooDeep();
  let pos = 0;
  const skip = (): void => {
    while (pos < text.length && WHITESPACE.test(text[pos]!)) pos++;
  };
  const list = (): RawOperations[] => {
    // text[pos] === '('
    pos++;
    const items: RawOperations[] = [];
    for (;;) {
      skip();
      if (pos >= text.length) throw parseFailure(text, "')'", pos);
      const c = text[pos]!;
      if (c === ')') {
        pos++;
        return items;
      }
      if (c === '(') {
        items.push(list());
        continue;
      }
      let token = '';
      while (pos < text.length) {
        const ch = text[pos]!;
        if (ch === '"' || ch === "'") {
          const end = text.indexOf(ch, pos + 1);
          if (end !== -1) {
            token += text.slice(pos, end + 1);
            pos = end + 1;
            continue;
          }
        }
        if (ch === '(' || ch === ')' || WHITESPACE.test(ch)) break;
        token += ch;
        pos++;
      }
      items.push(token);
    }
  };
  skip();
  if (pos >= text.length || text[pos] !== '(') throw parseFailure(text, "'('", pos);
  return list();
}

// ---------------------------------------------------------------------------
// Validation, mirroring the voluptuous schema of Gnocchi's aggregates API:
// the top level tries `metric` first, so any invalid operation is reported as
// "'<op>' operation invalid" unless a deeper `metric` node has a bad
// reference, which is reported with its index.

type Check<T> = { ok: true; value: T } | { ok: false; index?: number };

const fail = <T>(index?: number): Check<T> => (index === undefined ? { ok: false } : { ok: false, index });
const ok = <T>(value: T): Check<T> => ({ ok: true, value });

const AGG_METHODS: ReadonlySet<string> = new Set([...SERIES_METHODS, ...SERIES_METHODS.map((m) => `rate:${m}`)]);
const RESAMPLE_BASE = /^(?:mean|median|std|min|max|sum|count|last|first|[1-9][0-9]?pct)$/;

function reductionMethod(v: unknown): ReductionMethod | undefined {
  if (typeof v !== 'string' || !AGG_METHODS.has(v)) return undefined;
  const rate = v.startsWith('rate:');
  return { name: v, base: (rate ? v.slice(5) : v) as SeriesMethod, rate };
}

function resampleMethod(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const bare = v.startsWith('rate:') ? v.slice(5) : v;
  return RESAMPLE_BASE.test(bare) ? v : undefined;
}

/** voluptuous.Coerce(float). */
function coerceFloat(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') return parsePythonFloat(v);
  return undefined;
}

/** voluptuous.Coerce(int) then Range(min=1). */
function coerceWindow(v: unknown): number | undefined {
  let n: number | undefined;
  if (typeof v === 'number' && Number.isFinite(v)) n = Math.trunc(v);
  else if (typeof v === 'boolean') n = v ? 1 : 0;
  else if (typeof v === 'string' && /^\s*[+-]?\d(?:_?\d)*\s*$/.test(v)) n = Number(v.trim().replaceAll('_', ''));
  return n !== undefined && n >= 1 && Number.isSafeInteger(n) ? n : undefined;
}

function timespan(v: unknown): number | undefined {
  if (typeof v !== 'number' && typeof v !== 'string') return undefined;
  try {
    return parseDuration(v);
  } catch {
    return undefined;
  }
}

const isPair = (v: unknown): v is [string, string] =>
  Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string';

function checkMetric(v: unknown[]): Check<OperationNode> {
  const args = v.slice(1);
  if (args.length === 2 && typeof args[0] === 'string' && typeof args[1] === 'string') {
    return ok({ kind: 'metric', refs: [{ name: args[0], aggregation: args[1] }], single: true });
  }
  const refs: MetricRef[] = [];
  for (let i = 0; i < args.length; i++) {
    const pair = args[i];
    if (!isPair(pair)) return fail(i);
    refs.push({ name: pair[0], aggregation: pair[1] });
  }
  return ok({ kind: 'metric', refs, single: false });
}

/** The error of the first alternative with the deepest path, as voluptuous.Any picks it. */
function deepest(results: Check<OperationNode>[]): Check<OperationNode> {
  let best: Check<OperationNode> = fail();
  for (const r of results) {
    if (r.ok) return r;
    if (r.index !== undefined && (best.ok || best.index === undefined)) best = r;
  }
  return best;
}

function checkOperation(v: unknown[]): Check<OperationNode> {
  if (v.length < 2) return fail();
  const op = v[0];
  if (op === 'metric') return checkMetric(v);
  const sub = (i: number) => checkSubNode(v[i]);
  const results: Check<OperationNode>[] = [];
  // Alternatives in the order of Gnocchi's OperationsSchemaBase; an
  // alternative whose operator does not match fails without a path.
  if (op === 'clip' && (v.length === 4 || v.length === 3)) {
    const a = sub(1);
    if (!a.ok) results.push(a);
    else {
      const b = sub(2);
      if (!b.ok) results.push(b);
      else if (v.length === 3) results.push(ok({ kind: 'clip', operand: a.value, min: b.value, max: null }));
      else {
        const c = sub(3);
        results.push(c.ok ? ok({ kind: 'clip', operand: a.value, min: b.value, max: c.value }) : c);
      }
    }
  }
  if (typeof op === 'string' && Object.hasOwn(BINARY_OPERATORS, op) && v.length === 3) {
    const a = sub(1);
    if (!a.ok) results.push(a);
    else {
      const b = sub(2);
      results.push(b.ok ? ok({ kind: 'binary', operator: BINARY_OPERATORS[op]!, symbol: op, left: a.value, right: b.value }) : b);
    }
  }
  if (typeof op === 'string' && Object.hasOwn(UNARY_FUNCTIONS, op) && v.length === 2) {
    const a = sub(1);
    results.push(a.ok ? ok({ kind: 'unary', fn: UNARY_FUNCTIONS[op]!, symbol: op, operand: a.value }) : a);
  }
  if (op === 'aggregate' && v.length === 3) {
    const method = reductionMethod(v[1]);
    if (method !== undefined) {
      const a = sub(2);
      results.push(a.ok ? ok({ kind: 'aggregate', method, operand: a.value }) : a);
    }
  }
  if (op === 'resample' && v.length === 4) {
    const method = resampleMethod(v[1]);
    const granularity = method === undefined ? undefined : timespan(v[2]);
    if (method !== undefined && granularity !== undefined) {
      const a = sub(3);
      results.push(a.ok ? ok({ kind: 'resample', method, granularity, operand: a.value }) : a);
    }
  }
  if (op === 'rolling' && v.length === 4) {
    const method = reductionMethod(v[1]);
    const window = method === undefined ? undefined : coerceWindow(v[2]);
    if (method !== undefined && window !== undefined) {
      const a = sub(3);
      results.push(a.ok ? ok({ kind: 'rolling', method, window, operand: a.value }) : a);
    }
  }
  return deepest(results);
}

function checkSubNode(v: unknown): Check<OperationNode> {
  if (Array.isArray(v)) {
    if (v.length === 0) return fail();
    const r = checkOperation(v);
    if (r.ok || r.index !== undefined) return r;
  }
  const n = coerceFloat(v);
  return n === undefined ? fail() : ok({ kind: 'number', value: n });
}

function pythonTypeName(v: unknown): string {
  if (v === null) return 'NoneType';
  switch (typeof v) {
    case 'string':
      return 'str';
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(v) ? 'int' : 'float';
    default:
      return 'dict';
  }
}

/** Python's `%s` of an operator token for the message. */
function pyText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(v);
  if (Array.isArray(v)) return `[${v.map((x) => (typeof x === 'string' ? `'${x}'` : pyText(x))).join(', ')}]`;
  return '{...}';
}

const invalidInput = (reason: string, detail: string[] = ['operations']): OperationsError =>
  new OperationsError({
    cause: 'Invalid input',
    reason: detail.length > 1 ? `${reason} @ data['operations'][${detail[1]}]` : `${reason} for dictionary value @ data['operations']`,
    detail,
  });

/**
 * Validates operations given as a prefix string or nested arrays (the
 * `operations` value of the request body) into an AST.
 */
export function parseOperations(input: unknown): OperationNode {
  if (typeof input !== 'string' && valueDepth(input, MAX_QUERY_NESTING) > MAX_QUERY_NESTING) throw tooDeep();
  const v = typeof input === 'string' ? parsePrefix(input) : input;
  if (!Array.isArray(v)) throw invalidInput(`Expected a tuple/list, got a <class '${pythonTypeName(v)}'>`);
  if (v.length === 0) throw invalidInput('Operation must not be empty');
  if (v.length < 2) throw invalidInput('Operation need at least one argument');
  const r = checkOperation(v);
  if (r.ok) return r.value;
  if (r.index !== undefined) throw invalidInput('None', ['operations', String(r.index)]);
  throw invalidInput(`'${pyText(v[0])}' operation invalid`);
}
