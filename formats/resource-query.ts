/**
 * The resource search language: a small immutable AST and the validator of
 * its JSON form, with the messages of Gnocchi's voluptuous schema
 * (`rest/api.py` `_ResourceSearchSchema`). The STRING form
 * (`resource-query-string.ts`) parses into the JSON form, then goes through
 * the same validator, as Gnocchi does.
 */
import { FormatError } from './errors.js';
import { MAX_QUERY_NESTING, valueDepth } from './nesting.js';

export type CompareOp = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge' | 'like' | 'in';
export type QueryScalar = string | number | boolean | null;

export interface CompareNode {
  readonly kind: 'compare';
  readonly op: CompareOp;
  readonly field: string;
  /** A list for `in`, a scalar otherwise. */
  readonly value: QueryScalar | readonly QueryScalar[];
}
export interface AndNode {
  readonly kind: 'and';
  readonly children: readonly QueryNode[];
}
export interface OrNode {
  readonly kind: 'or';
  readonly children: readonly QueryNode[];
}
export interface NotNode {
  readonly kind: 'not';
  readonly child: QueryNode;
}
/** `{}` nested inside another operator: Gnocchi refuses it when evaluating. */
export interface EmptyNode {
  readonly kind: 'empty';
}
export type QueryNode = CompareNode | AndNode | OrNode | NotNode | EmptyNode;

export const COMPARE_ALIASES: Readonly<Record<string, CompareOp>> = {
  '=': 'eq', '==': 'eq', eq: 'eq',
  '<': 'lt', lt: 'lt',
  '>': 'gt', gt: 'gt',
  '<=': 'le', '≤': 'le', le: 'le',
  '>=': 'ge', '≥': 'ge', ge: 'ge',
  '!=': 'ne', '≠': 'ne', ne: 'ne',
  like: 'like',
  in: 'in',
};
export const LOGIC_ALIASES: Readonly<Record<string, 'and' | 'or'>> = { and: 'and', '∧': 'and', or: 'or', '∨': 'or' };

export type Path = (string | number)[];

/** voluptuous-style refusal: the server renders it as `Invalid input`. */
export class QueryInputError extends FormatError {
  constructor(
    readonly reason: string,
    readonly path: Path,
  ) {
    super(reason);
  }
}

function where(path: Path): string {
  if (path.length === 0) return '';
  return ' @ data' + path.map((p) => (typeof p === 'number' ? `[${p}]` : `['${p}']`)).join('');
}

function invalid(message: string, path: Path): QueryInputError {
  const value = path.length > 0 && typeof path[path.length - 1] === 'string' ? ' for dictionary value' : '';
  return new QueryInputError(`${message}${value}${where(path)}`, path);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkLength(v: Record<string, unknown> | unknown[], path: Path, min: number, max?: number): void {
  const n = Array.isArray(v) ? v.length : Object.keys(v).length;
  if (n < min) throw invalid(`length of value must be at least ${min}`, path);
  if (max !== undefined && n > max) throw invalid(`length of value must be at most ${max}`, path);
}

function scalar(v: unknown, path: Path): QueryScalar {
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  throw invalid('expected str', path);
}

export interface ValidateOptions {
  /** Gnocchi's ResourceUUID: maps an `id` value to the stored UUID; throws FormatError with its message. */
  resourceId(value: string): string;
}

function resourceIdValue(v: unknown, path: Path, options: ValidateOptions): string {
  if (typeof v !== 'string') throw invalid('expected str', path);
  try {
    return options.resourceId(v);
  } catch (err) {
    if (err instanceof FormatError) throw invalid(err.message, path);
    throw err;
  }
}

function node(v: unknown, path: Path, options: ValidateOptions, top: boolean): QueryNode | undefined {
  if (!isObject(v)) throw invalid('expected a dictionary', path);
  checkLength(v, path, 0, 1);
  const entries = Object.entries(v);
  if (entries.length === 0) return top ? undefined : { kind: 'empty' };
  const [key, arg] = entries[0]!;
  const here = [...path, key];
  const logic = LOGIC_ALIASES[key];
  if (logic !== undefined) {
    if (!Array.isArray(arg)) throw invalid('expected a list', here);
    checkLength(arg, here, 1);
    return { kind: logic, children: arg.map((c, i) => node(c, [...here, i], options, false)!) };
  }
  if (key === 'not') return { kind: 'not', child: node(arg, here, options, false)! };
  const op = COMPARE_ALIASES[key];
  if (op === undefined) throw new QueryInputError(`extra keys not allowed${where(here)}`, here);
  if (!isObject(arg)) throw invalid('expected a dictionary', here);
  checkLength(arg, here, 1, 1);
  const [field, raw] = Object.entries(arg)[0]!;
  const at = [...here, field];
  if (field === 'id' && op === 'like') throw new QueryInputError(`extra keys not allowed${where(at)}`, at);
  if (op === 'in') {
    if (!Array.isArray(raw)) throw invalid('expected a list', at);
    checkLength(raw, at, 1);
    const values = raw.map((x, i) =>
      field === 'id' ? resourceIdValue(x, [...at, i], options) : scalar(x, [...at, i]),
    );
    return { kind: 'compare', op, field, value: values };
  }
  const value = field === 'id' ? resourceIdValue(raw, at, options) : scalar(raw, at);
  return { kind: 'compare', op, field, value };
}

/**
 * Validates a JSON-form query into an AST; `undefined` means "no filter"
 * (the top-level empty object).
 */
export function validateResourceQuery(json: unknown, options: ValidateOptions): QueryNode | undefined {
  if (valueDepth(json, MAX_QUERY_NESTING) > MAX_QUERY_NESTING) {
    throw new QueryInputError(`Filter nested deeper than ${MAX_QUERY_NESTING} levels`, []);
  }
  return node(json, [], options, true);
}
