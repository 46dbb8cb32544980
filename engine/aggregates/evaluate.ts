/**
 * Evaluation of an operations tree over series already aligned on one
 * timestamp grid, as Gnocchi's `rest/aggregates/operations.py` does. The
 * grid is column-major: one Float64Array per series, all of the grid's
 * length. Every operation allocates new columns; inputs are never mutated.
 */
import { aggregate as aggregateSeries, parseMethod, type Grouping } from '../aggregation.js';
import {
  nodeRepr,
  type BinaryOperator,
  type OperationNode,
  type ReductionMethod,
  type UnaryFunction,
} from '../../formats/operations-nodes.js';
import { unaggregable } from './errors.js';
import { diffInPlace, reduce } from './reduce.js';
import { rollingReduce } from './rolling.js';

export type LookupKey = readonly [name: string, aggregation: string];

export interface EvalInput {
  granularity: Grouping;
  timestamps: Float64Array;
  /** One column per reference, in reference order. */
  columns: readonly Float64Array[];
  /** The lookup key of each column: `(name, aggregation)`. */
  keys: readonly LookupKey[];
}

export interface Evaluated {
  granularity: Grouping;
  timestamps: Float64Array;
  /** A scalar, or columns of `timestamps.length` values. */
  values: number | Float64Array[];
  aggregated: boolean;
}

type Elementwise = (a: number, b: number) => number;

// numpy.mod on floats: the sign of the divisor, and NaN for a zero divisor.
function pyMod(a: number, b: number): number {
  if (b === 0) return NaN;
  let mod = a % b;
  if (mod !== 0) {
    if (b < 0 !== mod < 0) mod += b;
  } else {
    mod = b < 0 ? -0 : 0;
  }
  return mod;
}

// C's pow, which numpy uses, differs from Math.pow on these cases.
function cPow(a: number, b: number): number {
  if (a === 1) return 1;
  if (a === -1 && (b === Infinity || b === -Infinity)) return 1;
  return Math.pow(a, b);
}

const nanMax = (a: number, b: number): number => (a !== a || b !== b ? NaN : a > b ? a : b);
const nanMin = (a: number, b: number): number => (a !== a || b !== b ? NaN : a < b ? a : b);

const BINARY: Readonly<Record<BinaryOperator, Elementwise>> = {
  eq: (a, b) => (a === b ? 1 : 0),
  lt: (a, b) => (a < b ? 1 : 0),
  gt: (a, b) => (a > b ? 1 : 0),
  le: (a, b) => (a <= b ? 1 : 0),
  ge: (a, b) => (a >= b ? 1 : 0),
  ne: (a, b) => (a !== b ? 1 : 0),
  mod: pyMod,
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  div: (a, b) => a / b,
  pow: cPow,
  clip_min: nanMax,
  clip_max: nanMin,
};

const UNARY: Readonly<Record<Exclude<UnaryFunction, 'rateofchange'>, (x: number) => number>> = {
  abs: Math.abs,
  neg: (x) => -x,
  cos: Math.cos,
  sin: Math.sin,
  tan: Math.tan,
  floor: Math.floor,
  ceil: Math.ceil,
};

function sameGrid(a: Evaluated, b: Evaluated): boolean {
  if (a.granularity !== b.granularity || a.timestamps.length !== b.timestamps.length) return false;
  for (let i = 0; i < a.timestamps.length; i++) if (a.timestamps[i] !== b.timestamps[i]) return false;
  return true;
}

/** Applies `f` elementwise with numpy broadcasting of scalars and single columns. */
function broadcast(operands: (number | Float64Array[])[], rows: number, f: (args: number[]) => number, keys: readonly LookupKey[]): number | Float64Array[] {
  const widths = operands.map((o) => (typeof o === 'number' ? 0 : o.length));
  if (widths.every((w) => w === 0)) return f(operands as number[]);
  const width = Math.max(...widths);
  for (const o of operands) {
    if (typeof o === 'number') continue;
    if (o.length !== width && o.length !== 1) {
      throw unaggregable(keys, `Can't broadcast ${o.length} series with ${width} series`);
    }
    for (const c of o) if (c.length !== rows) throw unaggregable(keys, "Can't compute timeseries of different lengths");
  }
  const out: Float64Array[] = [];
  const args = new Array<number>(operands.length);
  for (let c = 0; c < width; c++) {
    const col = new Float64Array(rows);
    const sources = operands.map((o) => (typeof o === 'number' ? o : o.length === 1 ? o[0]! : o[c]!));
    for (let r = 0; r < rows; r++) {
      for (let k = 0; k < sources.length; k++) {
        const s = sources[k]!;
        args[k] = typeof s === 'number' ? s : s[r]!;
      }
      col[r] = f(args);
    }
    out.push(col);
  }
  return out;
}

function columnsOf(e: Evaluated, keys: readonly LookupKey[], what: string): Float64Array[] {
  if (typeof e.values === 'number') throw unaggregable(keys, `${what} needs timeseries, not a number`);
  return e.values;
}

/** Reduces across columns row by row (Gnocchi's `aggregate`). */
function aggregateAcross(columns: Float64Array[], rows: number, method: ReductionMethod): Float64Array {
  const out = new Float64Array(rows);
  const n = columns.length;
  const base = method.base;
  if (base === 'mean' || base === 'sum' || base === 'count') {
    // Column-wise accumulation: the order numpy uses on an F-ordered grid.
    const sum = new Float64Array(rows);
    const cnt = new Float64Array(rows);
    for (let c = 0; c < n; c++) {
      const col = columns[c]!;
      for (let r = 0; r < rows; r++) {
        const x = col[r]!;
        if (x === x) {
          sum[r]! += x;
          cnt[r]!++;
        }
      }
    }
    for (let r = 0; r < rows; r++) out[r] = base === 'sum' ? sum[r]! : base === 'count' ? cnt[r]! : sum[r]! / cnt[r]!;
  } else {
    const scratch = new Float64Array(n);
    const view = { data: scratch, offset: 0, stride: 1, n };
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < n; c++) scratch[c] = columns[c]![r]!;
      out[r] = reduce(base, view, false);
    }
  }
  return method.rate ? diffInPlace(out) : out;
}

function rolled(column: Float64Array, window: number, method: ReductionMethod): Float64Array {
  const out = rollingReduce(column, window, method.base);
  return method.rate ? diffInPlace(out) : out;
}

function resampleColumns(e: Evaluated, columns: Float64Array[], method: string, granularity: Grouping, keys: readonly LookupKey[]): Evaluated {
  const parsed = parseMethod(method);
  if (parsed === null) throw unaggregable(keys, `Unknown resample method ${method}`);
  let timestamps: Float64Array | undefined;
  const out: Float64Array[] = [];
  for (const col of columns) {
    const r = aggregateSeries({ timestamps: e.timestamps, values: col }, granularity, parsed);
    if (timestamps !== undefined && r.timestamps.length !== timestamps.length) {
      throw unaggregable(keys, 'Resampled timeseries do not share their timestamps');
    }
    timestamps = r.timestamps;
    out.push(r.values);
  }
  return { granularity, timestamps: timestamps ?? new Float64Array(0), values: out, aggregated: e.aggregated };
}

/** Evaluates `node` over the aligned input; errors are 400s naming the input's keys. */
export function evaluate(node: OperationNode, input: EvalInput): Evaluated {
  const { keys } = input;
  const start: Evaluated = { granularity: input.granularity, timestamps: input.timestamps, values: [], aggregated: false };
  const run = (n: OperationNode): Evaluated => {
    switch (n.kind) {
      case 'number':
        return { ...start, values: n.value };
      case 'metric': {
        const wanted = n.refs;
        const selected: Float64Array[] = [];
        keys.forEach(([name, aggregation], i) => {
          if (wanted.some((r) => r.name === name && r.aggregation === aggregation)) selected.push(input.columns[i]!);
        });
        return { ...start, values: selected };
      }
      case 'aggregate': {
        const e = run(n.operand);
        const out = aggregateAcross(columnsOf(e, keys, 'aggregate'), e.timestamps.length, n.method);
        const timestamps = n.method.rate ? e.timestamps.subarray(1) : e.timestamps;
        return { granularity: e.granularity, timestamps, values: [out], aggregated: true };
      }
      case 'rolling': {
        const e = run(n.operand);
        const columns = columnsOf(e, keys, 'rolling');
        const length = e.timestamps.length;
        if (n.window > length) {
          throw unaggregable(keys, `Rolling window '${n.window}' is greater than serie length '${length}'`);
        }
        let timestamps = e.timestamps.subarray(n.window - 1);
        if (n.method.rate) timestamps = timestamps.subarray(1);
        return { ...e, timestamps, values: columns.map((c) => rolled(c, n.window, n.method)) };
      }
      case 'resample': {
        const e = run(n.operand);
        return resampleColumns(e, columnsOf(e, keys, 'resample'), n.method, n.granularity, keys);
      }
      case 'binary': {
        const a = run(n.left);
        const b = run(n.right);
        let grid: Evaluated;
        let aggregated = a.aggregated || b.aggregated;
        if (typeof a.values !== 'number' && typeof b.values !== 'number') {
          if (!sameGrid(a, b)) {
            throw unaggregable(keys, `Can't compute timeseries with different granularity ${nodeRepr(n.left)} <> ${nodeRepr(n.right)}`);
          }
          grid = a;
          aggregated = true;
        } else {
          grid = typeof b.values !== 'number' ? b : a;
        }
        const f = BINARY[n.operator];
        const values = broadcast([a.values, b.values], grid.timestamps.length, (args) => f(args[0]!, args[1]!), keys);
        return { granularity: grid.granularity, timestamps: grid.timestamps, values, aggregated };
      }
      case 'clip': {
        const a = run(n.operand);
        const lo = run(n.min);
        const hi = n.max === null ? null : run(n.max);
        let aggregated = a.aggregated || lo.aggregated || (hi?.aggregated ?? false);
        const series = [a, lo, ...(hi === null ? [] : [hi])].filter((e) => typeof e.values !== 'number');
        let grid: Evaluated;
        if (series.length === 3) {
          if (!sameGrid(a, lo) && !sameGrid(lo, hi!)) {
            throw unaggregable(
              keys,
              `Can't compute timeseries with different granularity ${nodeRepr(n.operand)} <> ${nodeRepr(n.min)} <> ${nodeRepr(n.max!)}`,
            );
          }
          grid = a;
          aggregated = true;
        } else {
          grid = typeof lo.values !== 'number' ? lo : hi !== null && typeof hi.values !== 'number' ? hi : a;
        }
        const operands = [a.values, lo.values, ...(hi === null ? [] : [hi.values])];
        const values = broadcast(operands, grid.timestamps.length, (args) => {
          let x = nanMax(args[0]!, args[1]!);
          if (args.length > 2) x = nanMin(x, args[2]!);
          return x;
        }, keys);
        return { granularity: grid.granularity, timestamps: grid.timestamps, values, aggregated };
      }
      case 'unary': {
        const e = run(n.operand);
        if (n.fn === 'rateofchange') {
          const columns = columnsOf(e, keys, 'rateofchange');
          return { ...e, timestamps: e.timestamps.subarray(1), values: columns.map(diffInPlace) };
        }
        const f = UNARY[n.fn];
        const values = broadcast([e.values], e.timestamps.length, (args) => f(args[0]!), keys);
        return { ...e, values };
      }
    }
  };
  return run(node);
}
