/**
 * The typed AST of the `/v1/aggregates` operations language. Nodes are
 * immutable plain objects discriminated by `kind`, so every `switch` over an
 * {@link OperationNode} is checked for exhaustiveness by the compiler.
 * Names are canonical (aliases such as `×` or `absolute` are resolved by the
 * parser); `symbol` keeps what the client wrote, for error messages.
 */

/** `(<name> <aggregation>)`: a metric id, or a metric name/wildcard with resources. */
export interface MetricRef {
  readonly name: string;
  readonly aggregation: string;
}

export interface MetricNode {
  readonly kind: 'metric';
  readonly refs: readonly MetricRef[];
  /** `(metric id agg)` rather than `(metric (id agg) ...)`. */
  readonly single: boolean;
}

export interface NumberNode {
  readonly kind: 'number';
  readonly value: number;
}

/** Cross-series aggregation and rolling windows share these method names. */
export type SeriesMethod = 'mean' | 'median' | 'std' | 'min' | 'max' | 'sum' | 'var' | 'count';

export interface ReductionMethod {
  /** As written, e.g. `rate:mean`. */
  readonly name: string;
  readonly base: SeriesMethod;
  readonly rate: boolean;
}

export interface AggregateNode {
  readonly kind: 'aggregate';
  readonly method: ReductionMethod;
  readonly operand: OperationNode;
}

export interface RollingNode {
  readonly kind: 'rolling';
  readonly method: ReductionMethod;
  /** Number of points, >= 1. */
  readonly window: number;
  readonly operand: OperationNode;
}

export interface ResampleNode {
  readonly kind: 'resample';
  /** A carbonara method name (`mean`, `last`, `95pct`, `rate:max`...). */
  readonly method: string;
  /** Microseconds, or a calendar group letter (deprecated endpoint only). */
  readonly granularity: number | 'Y' | 'H' | 'Q' | 'M' | 'W';
  readonly operand: OperationNode;
}

export type BinaryOperator =
  | 'eq' | 'lt' | 'gt' | 'le' | 'ge' | 'ne'
  | 'mod' | 'add' | 'sub' | 'mul' | 'div' | 'pow'
  | 'clip_min' | 'clip_max';

export interface BinaryNode {
  readonly kind: 'binary';
  readonly operator: BinaryOperator;
  readonly symbol: string;
  readonly left: OperationNode;
  readonly right: OperationNode;
}

export interface ClipNode {
  readonly kind: 'clip';
  readonly operand: OperationNode;
  readonly min: OperationNode;
  /** Absent in `(clip x min)`, which clips from below only. */
  readonly max: OperationNode | null;
}

export type UnaryFunction = 'abs' | 'neg' | 'cos' | 'sin' | 'tan' | 'floor' | 'ceil' | 'rateofchange';

export interface UnaryNode {
  readonly kind: 'unary';
  readonly fn: UnaryFunction;
  readonly symbol: string;
  readonly operand: OperationNode;
}

export type OperationNode =
  | MetricNode
  | NumberNode
  | AggregateNode
  | RollingNode
  | ResampleNode
  | BinaryNode
  | ClipNode
  | UnaryNode;

export type OperationKind = OperationNode['kind'];

export const BINARY_OPERATORS: Readonly<Record<string, BinaryOperator>> = {
  '=': 'eq', '==': 'eq', eq: 'eq',
  '<': 'lt', lt: 'lt',
  '>': 'gt', gt: 'gt',
  '<=': 'le', '≤': 'le', le: 'le',
  '>=': 'ge', '≥': 'ge', ge: 'ge',
  '!=': 'ne', '≠': 'ne', ne: 'ne',
  '%': 'mod', mod: 'mod',
  '+': 'add', add: 'add',
  '-': 'sub', sub: 'sub',
  '*': 'mul', '×': 'mul', mul: 'mul',
  '/': 'div', '÷': 'div', div: 'div',
  '**': 'pow', '^': 'pow', pow: 'pow',
  clip_min: 'clip_min',
  clip_max: 'clip_max',
};

export const UNARY_FUNCTIONS: Readonly<Record<string, UnaryFunction>> = {
  abs: 'abs', absolute: 'abs',
  neg: 'neg', negative: 'neg',
  cos: 'cos', sin: 'sin', tan: 'tan', floor: 'floor', ceil: 'ceil',
  rateofchange: 'rateofchange',
};

export const SERIES_METHODS: readonly SeriesMethod[] = ['mean', 'median', 'std', 'min', 'max', 'sum', 'var', 'count'];

export function isNode<K extends OperationKind>(node: OperationNode, kind: K): node is Extract<OperationNode, { kind: K }> {
  return node.kind === kind;
}

/** Every metric reference of the tree, first appearance first, duplicates dropped (Gnocchi's ReferencesList). */
export function extractReferences(node: OperationNode): MetricRef[] {
  const out: MetricRef[] = [];
  const seen = new Set<string>();
  const visit = (n: OperationNode): void => {
    switch (n.kind) {
      case 'metric':
        for (const ref of n.refs) {
          const key = `${ref.name}\u0000${ref.aggregation}`;
          if (!seen.has(key)) {
            seen.add(key);
            out.push(ref);
          }
        }
        return;
      case 'number':
        return;
      case 'aggregate':
      case 'rolling':
      case 'resample':
      case 'unary':
        visit(n.operand);
        return;
      case 'binary':
        visit(n.left);
        visit(n.right);
        return;
      case 'clip':
        visit(n.operand);
        visit(n.min);
        if (n.max !== null) visit(n.max);
        return;
    }
  };
  visit(node);
  return out;
}

/** The same tree with every metric reference renamed (e.g. ids made canonical). */
export function mapReferences(node: OperationNode, rename: (ref: MetricRef) => MetricRef): OperationNode {
  const map = (n: OperationNode): OperationNode => {
    switch (n.kind) {
      case 'metric':
        return { ...n, refs: n.refs.map(rename) };
      case 'number':
        return n;
      case 'aggregate':
      case 'rolling':
      case 'resample':
      case 'unary':
        return { ...n, operand: map(n.operand) };
      case 'binary':
        return { ...n, left: map(n.left), right: map(n.right) };
      case 'clip':
        return { ...n, operand: map(n.operand), min: map(n.min), max: n.max === null ? null : map(n.max) };
    }
  };
  return map(node);
}

function pyStr(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function pyNum(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  return Number.isInteger(v) ? `${v}.0` : String(v);
}

/** Python's repr of the validated list a node came from, as Gnocchi puts it in messages. */
export function nodeRepr(node: OperationNode): string {
  switch (node.kind) {
    case 'metric':
      return node.single
        ? `['metric', ${pyStr(node.refs[0]!.name)}, ${pyStr(node.refs[0]!.aggregation)}]`
        : `['metric', ${node.refs.map((r) => `[${pyStr(r.name)}, ${pyStr(r.aggregation)}]`).join(', ')}]`;
    case 'number':
      return pyNum(node.value);
    case 'aggregate':
      return `['aggregate', ${pyStr(node.method.name)}, ${nodeRepr(node.operand)}]`;
    case 'rolling':
      return `['rolling', ${pyStr(node.method.name)}, ${node.window}, ${nodeRepr(node.operand)}]`;
    case 'resample':
      return `['resample', ${pyStr(node.method)}, ${typeof node.granularity === 'number' ? `numpy.timedelta64(${node.granularity * 1000},'ns')` : pyStr(node.granularity)}, ${nodeRepr(node.operand)}]`;
    case 'binary':
      return `[${pyStr(node.symbol)}, ${nodeRepr(node.left)}, ${nodeRepr(node.right)}]`;
    case 'clip':
      return `['clip', ${nodeRepr(node.operand)}, ${nodeRepr(node.min)}${node.max === null ? '' : `, ${nodeRepr(node.max)}`}]`;
    case 'unary':
      return `[${pyStr(node.symbol)}, ${nodeRepr(node.operand)}]`;
  }
}
