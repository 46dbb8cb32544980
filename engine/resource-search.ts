/**
 * Evaluation of resource search ASTs (`formats/resource-query.ts`) against
 * stored resource revisions, with SQL's three-valued logic: a comparison
 * with NULL is unknown, `not unknown` is unknown, only `true` matches.
 * Query values are converted to the attribute's type once, when compiling,
 * with Gnocchi's messages for values that do not convert.
 */
import { parseDuration, parsePythonFloat } from '../formats/duration.js';
import { FormatError } from '../formats/errors.js';
import type { CompareNode, QueryNode, QueryScalar } from '../formats/resource-query.js';
import { pyNumber } from '../formats/json.js';
import { formatTimestamp, parseTimestamp } from '../formats/timestamp.js';
import { BadRequest } from './errors.js';
import { pythonUuid } from './resource-id.js';
import type { AttributeType, ResourceTypeRecord } from './resource-type.js';

export interface ResourceRecord {
  id: string;
  type: string;
  originalResourceId: string;
  creator: string;
  userId: string | null;
  projectId: string | null;
  /** Microseconds since the epoch. */
  startedAt: number;
  endedAt: number | null;
  revisionStart: number;
  /** The type's own attributes (datetimes in µs, UUIDs canonical). */
  attrs: Record<string, string | number | boolean | null>;
}

/** A revision: the current one has revision -1 and no revision end. */
export interface Revision extends ResourceRecord {
  revision: number;
  revisionEnd: number | null;
}

type Value = string | number | boolean | null;
export type Kind = AttributeType | 'id' | 'integer';

const GENERIC_FIELDS: Record<string, Kind> = {
  id: 'id',
  original_resource_id: 'string',
  creator: 'string',
  user_id: 'string',
  project_id: 'string',
  type: 'string',
  started_at: 'datetime',
  ended_at: 'datetime',
  revision_start: 'datetime',
  revision_end: 'datetime',
  revision: 'integer',
};

/** The value of a field of a revision, for filtering and sorting. */
export function fieldOf(r: Revision, field: string): Value {
  switch (field) {
    case 'id': return r.id;
    case 'original_resource_id': return r.originalResourceId;
    case 'creator': return r.creator;
    case 'user_id': return r.userId;
    case 'project_id': return r.projectId;
    case 'type': return r.type;
    case 'started_at': return r.startedAt;
    case 'ended_at': return r.endedAt;
    case 'revision_start': return r.revisionStart;
    case 'revision_end': return r.revisionEnd;
    case 'revision': return r.revision;
    default: return r.attrs[field] ?? null;
  }
}

/** The kind of a field searchable on `type`, or undefined. */
export function fieldKind(type: ResourceTypeRecord, field: string): Kind | undefined {
  return GENERIC_FIELDS[field] ?? type.attributes.find((a) => a.name === field)?.type;
}

export class QueryValueError extends BadRequest {
  constructor(value: unknown, field: string) {
    super(`Invalid value: \`${pyStr(value)}' for field \`${field}'`);
  }
}

/** Python's `str()` of a JSON scalar. */
function pyStr(v: unknown): string {
  if (v === null) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (Array.isArray(v)) return `[${v.map((x) => (typeof x === 'string' ? `'${x}'` : pyStr(x))).join(', ')}]`;
  return String(v);
}

/** A query value as the field's type (Gnocchi's converters), or QueryValueError. */
export function convertQueryValue(kind: Kind, v: QueryScalar, field: string): Value {
  if (v === null) return null;
  try {
    switch (kind) {
      case 'id':
      case 'string':
        return pyStr(v);
      case 'datetime':
        return parseTimestamp(v);
      case 'number':
      case 'integer': {
        const n = typeof v === 'string' ? parsePythonFloat(v) : Number(v);
        if (n === undefined || Number.isNaN(n)) throw new QueryValueError(v, field);
        return kind === 'integer' ? Math.trunc(n) : n;
      }
      case 'uuid': {
        const u = typeof v === 'string' ? pythonUuid(v) : undefined;
        if (u === undefined) throw new QueryValueError(v, field);
        return u;
      }
      case 'bool':
        return v;
    }
  } catch (err) {
    if (err instanceof FormatError) throw new QueryValueError(v, field);
    throw err;
  }
}

/** SQL LIKE: `%` any run, `_` one character, backslash escapes. */
export function likeToRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) re += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (c === '%') re += '[\\s\\S]*';
    else if (c === '_') re += '[\\s\\S]';
    else re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'u');
}

/**
 * The literal text every match of a LIKE pattern starts with (up to the
 * first wildcard), for index range scans.
 */
export function likePrefix(pattern: string): string {
  let prefix = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '%' || c === '_') break;
    if (c === '\\' && i + 1 < pattern.length) prefix += pattern[++i]!;
    else prefix += c;
  }
  return prefix;
}

/**
 * A LIKE pattern from a non-null query value: Python's `str()` for text
 * fields (Gnocchi's converter), else text as given and other scalars in
 * their JSON form, as `likeText` renders values.
 */
export function likePattern(kind: Kind, v: string | number | boolean): string {
  if (kind === 'string' || kind === 'id' || typeof v === 'string') return pyStr(v);
  return typeof v === 'number' ? pyNumber(v) : String(v);
}

/**
 * The text a LIKE pattern is matched against: a value's form in the API's
 * JSON (datetimes in ISO 8601, numbers and booleans as JSON), so a pattern
 * never goes through the field's type (Gnocchi hands it to the database,
 * which compares text or refuses).
 */
export function likeText(kind: Kind, v: string | number | boolean): string {
  if (kind === 'datetime' && typeof v === 'number') return formatTimestamp(v);
  if (typeof v === 'number') return pyNumber(v);
  return String(v);
}

export type Predicate = (r: Revision) => boolean | null;

function compareValues(a: Value, b: Value): number {
  if (a === b) return 0;
  return (a as string | number) < (b as string | number) ? -1 : 1;
}

function compileCompare(n: CompareNode, type: ResourceTypeRecord): Predicate {
  const { field, op } = n;
  if (field === 'created_by_user_id' || field === 'created_by_project_id') {
    const value = n.value;
    if (Array.isArray(value) || !(op === 'eq' || op === 'ne' || op === 'like')) throw new QueryValueError(value, field);
    const v = pyStr(value);
    const re = likeToRegExp(field === 'created_by_user_id' ? `${v}:%` : `%:${v}`);
    return op === 'ne' ? (r) => !re.test(r.creator) : (r) => re.test(r.creator);
  }
  let get: (r: Revision) => Value;
  let kind: Kind;
  if (field === 'lifespan') {
    kind = 'integer';
    get = (r) => (r.endedAt === null ? null : r.endedAt - r.startedAt);
  } else {
    const k = fieldKind(type, field);
    if (k === undefined) throw new BadRequest(`Resource type ${type.name} has no ${field} attribute`);
    kind = k;
    get = (r) => fieldOf(r, field);
  }
  const conv = (v: QueryScalar): Value => {
    if (field !== 'lifespan' || v === null) return convertQueryValue(kind, v, field);
    try {
      return parseDuration(typeof v === 'boolean' ? Number(v) : v, { allowNonPositive: true });
    } catch (err) {
      if (err instanceof FormatError) throw new QueryValueError(v, field);
      throw err;
    }
  };
  if (op === 'in') {
    const values = (n.value as readonly QueryScalar[]).map(conv).filter((v) => v !== null);
    const set = new Set(values);
    return (r) => {
      const x = get(r);
      return x === null ? null : set.has(x);
    };
  }
  if (Array.isArray(n.value)) throw new QueryValueError(n.value, field);
  if (op === 'like') {
    if (n.value === null) return () => null;
    const re = likeToRegExp(likePattern(kind, n.value as string | number | boolean));
    return (r) => {
      const x = get(r);
      return x === null ? null : re.test(likeText(kind, x));
    };
  }
  const value = conv(n.value as QueryScalar);
  if (value === null) {
    if (op === 'eq') return (r) => get(r) === null;
    if (op === 'ne') return (r) => get(r) !== null;
    return () => null;
  }
  const test: (c: number) => boolean =
    op === 'eq' ? (c) => c === 0
    : op === 'ne' ? (c) => c !== 0
    : op === 'lt' ? (c) => c < 0
    : op === 'le' ? (c) => c <= 0
    : op === 'gt' ? (c) => c > 0
    : (c) => c >= 0;
  return (r) => {
    const x = get(r);
    // Gnocchi turns `ne v` into `IS NULL OR != v`.
    if (x === null) return op === 'ne' ? true : null;
    return test(compareValues(x, value));
  };
}

/** Compiles a query for resources of `type` (generic attributes plus its own). */
export function compileQuery(node: QueryNode, type: ResourceTypeRecord): Predicate {
  switch (node.kind) {
    case 'empty':
      throw new BadRequest('Unable to parse this query');
    case 'compare':
      return compileCompare(node, type);
    case 'not': {
      const p = compileQuery(node.child, type);
      return (r) => {
        const v = p(r);
        return v === null ? null : !v;
      };
    }
    case 'and':
    case 'or': {
      const ps = node.children.map((c) => compileQuery(c, type));
      const absorbing = node.kind === 'or';
      return (r) => {
        let unknown = false;
        for (const p of ps) {
          const v = p(r);
          if (v === absorbing) return absorbing;
          if (v === null) unknown = true;
        }
        return unknown ? null : !absorbing;
      };
    }
  }
}
