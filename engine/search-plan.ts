/**
 * The access path of a resource search: from the query AST, which index
 * entries hold every possible match. An `and` takes its most selective
 * indexable conjunct (by the caller's estimate of each range), an `or` the
 * union of its branches when each has one, `in` the union of its
 * equalities; anything else, `= null` on a field whose NULLs the index
 * does not file too, has no plan and the caller scans the type.
 * A plan only narrows: callers re-check the whole filter on each candidate.
 */
import type { CompareNode, QueryNode, QueryScalar } from '../formats/resource-query.js';
import { prefixRange, type IndexValue, type KeyRange } from './resource-index-keys.js';
import { convertQueryValue, fieldKind, likePattern, likePrefix, type Kind } from './resource-search.js';
import { answersNull, isIndexedGenericField } from './resource-value-index.js';
import type { ResourceTypeRecord } from './resource-type.js';

export type Access = { readonly kind: 'ids'; readonly ids: readonly string[] } | { readonly kind: 'range'; readonly range: KeyRange };

/** A union of accesses (none: the filter matches nothing) and the estimated number of entries it reads. */
export interface Plan {
  readonly accesses: readonly Access[];
  readonly estimate: number;
  /**
   * Plans of the other indexable conjuncts of an `and`, most selective
   * first: every match is also in each of them, so a caller that finds the
   * candidates mostly fail the filter may intersect with these.
   */
  readonly narrowing?: readonly Plan[];
}

export interface PlanContext {
  readonly type: ResourceTypeRecord;
  /** Entries a range holds; may answer any number above `cap` once it knows there are more. */
  estimate(range: KeyRange, cap: number): number;
}

const NOTHING: Plan = { accesses: [], estimate: 0 };

/** The plan of `filter` for a search, or undefined when it needs a scan. */
export function planSearch(filter: QueryNode, ctx: PlanContext, cap = Number.POSITIVE_INFINITY): Plan | undefined {
  switch (filter.kind) {
    case 'compare':
      return planCompare(filter, ctx, cap);
    case 'and': {
      const plans: Plan[] = [];
      // Equalities first: a small count early caps the counting of wide ranges.
      const children = [...filter.children].sort((a, b) => Number(!isEquality(a)) - Number(!isEquality(b)));
      for (const child of children) {
        const p = planSearch(child, ctx, Math.min(cap, plans.reduce((m, q) => Math.min(m, q.estimate), Number.POSITIVE_INFINITY)));
        if (p === undefined) continue;
        if (p.estimate === 0) return p;
        plans.push(p);
      }
      if (plans.length === 0) return undefined;
      plans.sort((a, b) => a.estimate - b.estimate);
      const [best, ...others] = plans;
      return others.length === 0 ? best : { accesses: best!.accesses, estimate: best!.estimate, narrowing: others };
    }
    case 'or': {
      const accesses: Access[] = [];
      let estimate = 0;
      for (const child of filter.children) {
        const p = planSearch(child, ctx, cap - estimate);
        if (p === undefined) return undefined;
        accesses.push(...p.accesses);
        estimate += p.estimate;
      }
      return { accesses, estimate };
    }
    case 'not':
    case 'empty':
      return undefined;
  }
}

const isEquality = (n: QueryNode): boolean => n.kind === 'compare' && (n.op === 'eq' || n.op === 'in');

function ranges(ctx: PlanContext, rs: KeyRange[], cap: number): Plan {
  let estimate = 0;
  for (const range of rs) estimate += ctx.estimate(range, cap - estimate);
  return { accesses: rs.map((range) => ({ kind: 'range', range })), estimate };
}

/** Whether the converted value compares with stored values of `kind` as the filter does. */
function keyable(kind: Kind, v: string | number | boolean): v is IndexValue {
  switch (kind) {
    case 'bool':
      return typeof v === 'boolean';
    case 'number':
    case 'datetime':
      return typeof v === 'number';
    case 'string':
    case 'uuid':
      return typeof v === 'string';
    default:
      return false;
  }
}

function planCompare(n: CompareNode, ctx: PlanContext, cap: number): Plan | undefined {
  const { field, op, value } = n;
  if (field === 'id') {
    if (op === 'eq' && typeof value === 'string') return { accesses: [{ kind: 'ids', ids: [value] }], estimate: 1 };
    if (op !== 'in') return undefined;
    const ids = (value as readonly QueryScalar[]).filter((v): v is string => typeof v === 'string');
    return { accesses: [{ kind: 'ids', ids }], estimate: ids.length };
  }
  if (field === 'created_by_user_id') {
    // Gnocchi: `creator LIKE '<value>:%'` for both `=` and `like`.
    if ((op !== 'eq' && op !== 'like') || Array.isArray(value) || value === null) return undefined;
    const range = prefixRange('creator', likePrefix(`${likePattern('string', value as string | number | boolean)}:%`));
    return range === undefined ? undefined : ranges(ctx, [range], cap);
  }
  const kind = fieldKind(ctx.type, field);
  const indexed = ctx.type.attributes.some((a) => a.name === field) || isIndexedGenericField(field);
  if (kind === undefined || !indexed) return undefined;
  if (op === 'in') {
    const rs: KeyRange[] = [];
    for (const raw of value as readonly QueryScalar[]) {
      const v = convertQueryValue(kind, raw, field);
      if (v === null) continue;
      if (!keyable(kind, v)) return undefined;
      rs.push({ field, nulls: false, lo: v, hi: v });
    }
    return ranges(ctx, rs, cap);
  }
  if (Array.isArray(value)) return undefined;
  if (op === 'like') {
    if (value === null) return NOTHING;
    if (kind !== 'string' && kind !== 'uuid') return undefined;
    const range = prefixRange(field, likePrefix(likePattern(kind, value as string | number | boolean)));
    return range === undefined ? undefined : ranges(ctx, [range], cap);
  }
  const v = convertQueryValue(kind, value as QueryScalar, field);
  if (v === null) {
    if (op === 'eq') return answersNull(field) ? ranges(ctx, [{ field, nulls: true }], cap) : undefined;
    // `!= null` is `IS NOT NULL`; an ordering against NULL is never true.
    return op === 'ne' ? undefined : NOTHING;
  }
  if (!keyable(kind, v)) return undefined;
  switch (op) {
    case 'eq':
      return ranges(ctx, [{ field, nulls: false, lo: v, hi: v }], cap);
    case 'lt':
    case 'le':
      return ranges(ctx, [{ field, nulls: false, hi: v }], cap);
    case 'gt':
    case 'ge':
      return ranges(ctx, [{ field, nulls: false, lo: v }], cap);
    default:
      return undefined;
  }
}
