/**
 * The resource search workload both search benchmarks run, so that the
 * LMDB and PostgreSQL figures compare like with like: a custom type with
 * 5 attributes, resource i's fields, and one search page (limit 100) per
 * filter as `POST /v1/search/resource/{type}` runs it: `and`s of an
 * equality and a range of different selectivity, `in`, `or`, a
 * non-default sort and history searches.
 */
import type { IndexStore } from '../engine/drivers/index-store.js';
import { DEFAULT_RESOURCE_SORT, parseResourceSorts, type NewResource, type SortSpec } from '../engine/resources.js';
import type { ResourceTypeRecord } from '../engine/resource-type.js';
import { validateResourceQuery, type QueryNode } from '../formats/resource-query.js';
import { percentile } from './harness.js';

const FLAVORS = ['m1.tiny', 'm1.small', 'm1.medium', 'm1.large', 'm1.xlarge'];
const HOSTS = 20;
const PAGE = 100;
/** started_at of resource i: one minute apart from 2024-01-01. */
const T0 = Date.UTC(2024, 0, 1) * 1000;
const startedAt = (i: number) => T0 + i * 60_000_000;
const iso = (us: number) => new Date(us / 1000).toISOString();

/** The resource type searched (a new record each call: createType keeps it). */
export function serverType(): ResourceTypeRecord {
  return {
    name: 'server',
    state: 'creating',
    attributes: [
      { name: 'flavor', type: 'string', required: true, minLength: 0, maxLength: 255 },
      { name: 'host', type: 'string', required: true, minLength: 0, maxLength: 255 },
      { name: 'display_name', type: 'string', required: true, minLength: 0, maxLength: 255 },
      { name: 'vcpus', type: 'number', required: true, min: null, max: null },
      { name: 'booted_at', type: 'datetime', required: false },
    ],
  };
}

export const resourceId = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;

export function serverResource(i: number): NewResource {
  return {
    id: resourceId(i),
    originalResourceId: `vm-${i}`,
    creator: 'bench:bench',
    userId: null,
    projectId: null,
    startedAt: startedAt(i),
    endedAt: null,
    attrs: {
      flavor: FLAVORS[i % FLAVORS.length]!,
      host: `compute-${i % HOSTS}`,
      display_name: `vm-${i}`,
      vcpus: 1 << (i % 4),
      booted_at: startedAt(i) + 30_000_000,
    },
  };
}

/** One search page of the workload, as list() takes it. */
export interface SearchCase {
  name: string;
  filter: QueryNode;
  history: boolean;
  sorts: SortSpec[];
  limit: number;
}

/** The searches over `count` server resources, every 10th of them updated (vcpus 16) at `updatedAt`. */
export function searchCases(rt: ResourceTypeRecord, count: number, updatedAt: number): SearchCase[] {
  type Case = [name: string, filter: unknown, options?: { history?: boolean; sort?: string[] }];
  const half = iso(startedAt(count / 2));
  const first = iso(startedAt(0));
  const last1 = iso(startedAt(count * 0.99));
  const cases: Case[] = [
    ['flavor = m1.small and started_at >= (half)', { and: [{ '=': { flavor: 'm1.small' } }, { '>=': { started_at: half } }] }],
    ['flavor = m1.small and started_at >= (first)', { and: [{ '=': { flavor: 'm1.small' } }, { '>=': { started_at: first } }] }],
    ['host = compute-7 and vcpus >= 4', { and: [{ '=': { host: 'compute-7' } }, { '>=': { vcpus: 4 } }] }],
    ['flavor = m1.small and started_at >= (last 1%)', { and: [{ '=': { flavor: 'm1.small' } }, { '>=': { started_at: last1 } }] }],
    ['display_name = (none) and started_at >= (first)', { and: [{ '=': { display_name: 'nope' } }, { '>=': { started_at: first } }] }],
    ['display_name = (one) and started_at >= (first)', { and: [{ '=': { display_name: `vm-${count - 7}` } }, { '>=': { started_at: first } }] }],
    ['started_at >= (half)', { '>=': { started_at: half } }],
    ['flavor in (tiny, large) and vcpus >= 4', { and: [{ in: { flavor: ['m1.tiny', 'm1.large'] } }, { '>=': { vcpus: 4 } }] }],
    ['host = compute-1 or host = compute-2', { or: [{ '=': { host: 'compute-1' } }, { '=': { host: 'compute-2' } }] }],
    // The index files no NULL (resource-value-index.ts): the first reads the type in revision_start order, the second by host.
    ['ended_at = null', { '=': { ended_at: null } }],
    ['ended_at = null and host = compute-7', { and: [{ '=': { ended_at: null } }, { '=': { host: 'compute-7' } }] }],
    ['flavor = m1.small and started_at >= (half), sort started_at:desc', { and: [{ '=': { flavor: 'm1.small' } }, { '>=': { started_at: half } }] }, { sort: ['started_at:desc'] }],
    ['history: host = compute-0 and revision_end >= (updates)', { and: [{ '=': { host: 'compute-0' } }, { '>=': { revision_end: iso(updatedAt) } }] }, { history: true }],
    ['history: display_name = (one)', { '=': { display_name: 'vm-70' } }, { history: true }],
    ['history: vcpus = 16 and started_at >= (last 1%)', { and: [{ '=': { vcpus: 16 } }, { '>=': { started_at: last1 } }] }, { history: true }],
  ];
  return cases.map(([name, raw, options]) => {
    const history = options?.history ?? false;
    return {
      name,
      filter: validateResourceQuery(raw, { resourceId: (v) => v }) as QueryNode,
      history,
      sorts: parseResourceSorts(options?.sort ?? DEFAULT_RESOURCE_SORT, rt, history),
      limit: PAGE,
    };
  });
}

/**
 * ms of each `timed` call, sorted: at least 5, then up to 200 within 3 s,
 * each after an untimed `before` if given.
 */
export async function timeRuns(timed: () => Promise<unknown>, before?: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  const deadline = performance.now() + 3000;
  for (let k = 0; k < 200 && (k < 5 || performance.now() < deadline); k++) {
    await before?.();
    const t = performance.now();
    await timed();
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b);
}

/**
 * Times each search page over `count` server resources, every 10th of them
 * updated (vcpus 16) at `updatedAt`, and prints ms per page (p50, p95).
 */
export async function timeSearches(index: Pick<IndexStore, 'list'>, rt: ResourceTypeRecord, count: number, updatedAt: number): Promise<void> {
  const rows = [];
  for (const { name, ...options } of searchCases(rt, count, updatedAt)) {
    const page = async () => (await index.list(rt.name, options)).length;
    let n = await page();
    const times = await timeRuns(async () => {
      n = await page();
    });
    rows.push({
      filter: name,
      'page size': n,
      'p50 ms': Number(percentile(times, 50).toFixed(2)),
      'p95 ms': Number(percentile(times, 95).toFixed(2)),
      runs: times.length,
    });
  }
  console.table(rows);
}
