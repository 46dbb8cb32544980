/**
 * Archive policies: how a metric's measures are aggregated and kept.
 * Validation follows Gnocchi 4.4 (`archive_policy.py` and the REST schema),
 * with its messages.
 */
import { formatDuration, parseDuration } from '../formats/duration.js';
import { FormatError } from '../formats/errors.js';
import { pyFloat } from '../formats/json.js';
import { BadRequest, InvalidInput, UnsupportedArchivePolicyChange } from './errors.js';
import { checkInteger, checkList, checkObject, checkString, invalidValue, type Path } from './validate.js';

export interface ArchivePolicyItem {
  /** Microseconds. */
  granularity: number;
  points: number | null;
  /** Microseconds, null when unbounded. */
  timespan: number | null;
}

export interface ArchivePolicy {
  name: string;
  backWindow: number;
  definition: ArchivePolicyItem[];
  /** Resolved methods (no `+`/`-`/`*`), sorted. */
  aggregationMethods: string[];
}

const BASE_METHODS = ['mean', 'sum', 'last', 'max', 'min', 'std', 'median', 'first', 'count'];
const PERCENTILES = Array.from({ length: 99 }, (_, i) => `${i + 1}pct`);
const PLAIN_METHODS = [...BASE_METHODS, ...PERCENTILES];

/** Every method a policy may hold, as Gnocchi lists them in capabilities. */
export const VALID_AGGREGATION_METHODS: readonly string[] = [
  ...PLAIN_METHODS,
  ...PLAIN_METHODS.map((m) => `rate:${m}`),
];
const VALID_SET = new Set(VALID_AGGREGATION_METHODS);

export const DEFAULT_AGGREGATION_METHODS: readonly string[] = ['mean', 'min', 'max', 'sum', 'std', 'count'];

export function isValidAggregationMethod(name: string): boolean {
  return VALID_SET.has(name);
}

function isValidMethodEntry(entry: string): boolean {
  if (entry === '*') return true;
  const bare = entry.startsWith('+') || entry.startsWith('-') ? entry.slice(1) : entry;
  return VALID_SET.has(bare);
}

/** Resolves a requested method list against the deployment's defaults. */
export function resolveAggregationMethods(requested: readonly string[], defaults: readonly string[]): string[] {
  let methods: Set<string>;
  if (requested.includes('*')) methods = new Set(VALID_AGGREGATION_METHODS);
  else if (requested.every((m) => m.startsWith('+') || m.startsWith('-'))) methods = new Set(defaults);
  else methods = new Set(requested.filter((m) => !m.startsWith('+') && !m.startsWith('-')));
  for (const entry of requested) {
    if (entry.startsWith('-')) methods.delete(entry.slice(1));
    else if (entry.startsWith('+')) methods.add(entry.slice(1));
  }
  return [...methods].sort();
}

function checkTimespan(value: unknown, path: Path): number {
  try {
    return parseDuration(value);
  } catch (err) {
    if (err instanceof FormatError) throw invalidValue(err.message, path);
    throw err;
  }
}

/** Builds one item from any two of granularity/points/timespan. */
export function makeItem(granularity: number | null, points: number | null, timespan: number | null): ArchivePolicyItem {
  if (granularity !== null && points !== null && timespan !== null && timespan !== granularity * points) {
    throw new BadRequest('timespan ≠ granularity × points');
  }
  if (granularity === null) {
    if (points === null || timespan === null) {
      throw new BadRequest('At least two of granularity/points/timespan must be provided');
    }
    // Gnocchi truncates to whole nanoseconds; we keep microseconds.
    granularity = Math.trunc(timespan / points);
  }
  if (points === null) {
    if (timespan === null) return { granularity, points: null, timespan: null };
    points = Math.trunc(timespan / granularity);
    if (points <= 0) throw new BadRequest('Calculated number of points is < 0');
  }
  return { granularity, points, timespan: granularity * points };
}

function parseDefinition(value: unknown, path: Path): ArchivePolicyItem[] {
  const items = checkList(value, path, 1).map((raw, i) => {
    const itemPath = [...path, i];
    const item = checkObject(raw, itemPath, { optional: ['granularity', 'points', 'timespan'] });
    const granularity = item.granularity === undefined ? null : checkTimespan(item.granularity, [...itemPath, 'granularity']);
    const points = item.points === undefined || item.points === null ? null : checkInteger(item.points, [...itemPath, 'points'], 1);
    const timespan = item.timespan === undefined ? null : checkTimespan(item.timespan, [...itemPath, 'timespan']);
    return makeItem(granularity, points, timespan);
  });
  const seen = new Set<number>();
  for (const item of items) {
    if (seen.has(item.granularity)) {
      throw new BadRequest(`More than one archive policy uses granularity \`${pyFloat(item.granularity / 1e6)}'`);
    }
    seen.add(item.granularity);
  }
  return items;
}

/** Validates a creation request body. */
export function parseArchivePolicy(body: unknown, defaultMethods: readonly string[]): ArchivePolicy {
  const obj = checkObject(body, [], {
    required: ['name', 'definition'],
    optional: ['back_window', 'aggregation_methods'],
  });
  const name = checkString(obj.name, ['name']);
  const backWindow = obj.back_window === undefined ? 0 : checkInteger(obj.back_window, ['back_window'], 0);
  let methods: string[] = [...defaultMethods];
  if (obj.aggregation_methods !== undefined) {
    const requested = checkList(obj.aggregation_methods, ['aggregation_methods']).map((m, i) => {
      const path = ['aggregation_methods', i];
      if (typeof m !== 'string' || !isValidMethodEntry(m)) throw invalidValue('not a valid value', path);
      return m;
    });
    methods = resolveAggregationMethods(requested, defaultMethods);
  }
  const definition = parseDefinition(obj.definition, ['definition']);
  return { name, backWindow, definition, aggregationMethods: [...new Set(methods)].sort() };
}

/** Validates a PATCH body and applies it: granularities may not change. */
export function patchArchivePolicy(policy: ArchivePolicy, body: unknown): ArchivePolicy {
  const obj = checkObject(body, [], { optional: ['definition', 'back_window'] });
  if (obj.definition === undefined && obj.back_window === undefined) {
    throw new InvalidInput("required key not provided @ data['definition']", ['definition']);
  }
  let definition = policy.definition;
  if (obj.definition !== undefined) {
    definition = parseDefinition(obj.definition, ['definition']);
    const current = [...policy.definition].sort((a, b) => a.granularity - b.granularity);
    const next = [...definition].sort((a, b) => a.granularity - b.granularity);
    if (current.length !== next.length) {
      throw new UnsupportedArchivePolicyChange(policy.name, 'Cannot add or drop granularities');
    }
    current.forEach((c, i) => {
      if (c.granularity !== next[i]!.granularity) {
        throw new UnsupportedArchivePolicyChange(
          policy.name,
          `${pyFloat(c.granularity / 1e6)} granularity interval was changed`,
        );
      }
    });
  }
  const backWindow = obj.back_window === undefined ? policy.backWindow : checkInteger(obj.back_window, ['back_window'], 0);
  return { ...policy, definition, backWindow };
}

/** The largest granularity: the block size of the raw back window. */
export function maxGranularity(policy: ArchivePolicy): number {
  return Math.max(...policy.definition.map((d) => d.granularity));
}

export function policyToJson(policy: ArchivePolicy): Record<string, unknown> {
  return {
    name: policy.name,
    back_window: policy.backWindow,
    // Gnocchi's key order, which `-f json` clients print as they get it.
    definition: policy.definition.map((d) => ({
      timespan: d.timespan === null ? null : formatDuration(d.timespan),
      granularity: formatDuration(d.granularity),
      points: d.points,
    })),
    aggregation_methods: policy.aggregationMethods,
  };
}

const SECOND = 1_000_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The policies `gnocchi-upgrade` creates, exactly as Gnocchi defines them. */
export function defaultArchivePolicies(defaultMethods: readonly string[]): ArchivePolicy[] {
  const methods = [...defaultMethods].sort();
  return [
    { name: 'bool', backWindow: 3600, definition: [makeItem(SECOND, null, 365 * DAY)], aggregationMethods: ['last'] },
    { name: 'low', backWindow: 0, definition: [makeItem(5 * MINUTE, null, 30 * DAY)], aggregationMethods: methods },
    {
      name: 'medium',
      backWindow: 0,
      definition: [makeItem(MINUTE, null, 7 * DAY), makeItem(HOUR, null, 365 * DAY)],
      aggregationMethods: methods,
    },
    {
      name: 'high',
      backWindow: 0,
      definition: [makeItem(SECOND, null, HOUR), makeItem(MINUTE, null, 7 * DAY), makeItem(HOUR, null, 365 * DAY)],
      aggregationMethods: methods,
    },
  ];
}
