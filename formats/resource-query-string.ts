/**
 * The STRING form of the resource search (`?filter=...`), read as Gnocchi's
 * pyparsing grammar (`QueryStringSearchAttrFilter`) reads it, into the JSON
 * form that `validateResourceQuery` then checks:
 *
 *   expr      := or
 *   or        := and (("or" | "∨") and)*        (∨ binds looser than or)
 *   and       := unary (("and" | "∧") unary)*   (∧ binds looser than and)
 *   unary     := "not" unary | "(" expr ")" | condition
 *   condition := term operator term
 *   term      := null | bool | uuid | identifier | number | 'quoted' | [term, ...]
 *
 * Alternatives are tried in pyparsing's order, with no word boundaries, so
 * that odd inputs fail (or not) as they do upstream: `==` is read as `=`
 * followed by a stray `=`, and is refused.
 */
import { FormatError } from './errors.js';
import { MAX_QUERY_NESTING, textDepth } from './nesting.js';

const OPERATOR = /(>=|<=|!=|>|<|=|==|eq|ne|lt|gt|ge|le|in|like|≠|≥|≤)/y;
const NULL = /(None|none|null)/y;
const BOOL = /(False|True|false|true)/y;
const UUID = /([0-9a-fA-F]{8}(?:-?[0-9a-fA-F]{4}){3}-?[0-9a-fA-F]{12})/y;
const IDENTIFIER = /([A-Za-z][A-Za-z0-9_]*)/y;
const NUMBER = /([+-]?\d+(:?\.\d*)?(:?[eE][+-]?\d+)?)/y;
const QUOTED = /"([^"]*)"|'([^']*)'/y;
const WS = /\s*/y;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

class Fail extends Error {}

class Parser {
  pos = 0;
  private furthest = 0;
  private expected = 'term';

  constructor(private readonly text: string) {}

  private skip(): void {
    WS.lastIndex = this.pos;
    WS.exec(this.text);
    this.pos = WS.lastIndex;
  }

  private fail(what: string): never {
    if (this.pos >= this.furthest) {
      this.furthest = this.pos;
      this.expected = what;
    }
    throw new Fail();
  }

  private match(re: RegExp, what: string): RegExpExecArray {
    this.skip();
    re.lastIndex = this.pos;
    const m = re.exec(this.text);
    if (m === null) this.fail(what);
    this.pos = re.lastIndex;
    return m;
  }

  private literal(s: string): void {
    this.skip();
    if (!this.text.startsWith(s, this.pos)) this.fail(`'${s}'`);
    this.pos += s.length;
  }

  /** Runs `f`, restoring the position when it fails. */
  private attempt<T>(f: () => T): T | undefined {
    const start = this.pos;
    try {
      return f();
    } catch (err) {
      if (!(err instanceof Fail)) throw err;
      this.pos = start;
      return undefined;
    }
  }

  private term(): Json {
    const alternatives: (() => Json)[] = [
      () => (this.match(NULL, 'null'), null),
      () => this.match(BOOL, 'bool')[1]!.toLowerCase() === 'true',
      () => this.match(UUID, 'uuid')[1]!,
      () => this.match(IDENTIFIER, 'identifier')[1]!,
      () => Number.parseFloat(this.match(NUMBER, 'number')[1]!.replaceAll(':', '')),
      () => {
        const m = this.match(QUOTED, 'quoted string');
        return m[1] ?? m[2]!;
      },
      () => this.list(),
    ];
    for (const alt of alternatives) {
      const start = this.pos;
      try {
        return alt();
      } catch (err) {
        if (!(err instanceof Fail)) throw err;
        this.pos = start;
      }
    }
    return this.fail('term');
  }

  private list(): Json[] {
    this.literal('[');
    const items: Json[] = [];
    const first = this.attempt(() => this.term());
    if (first !== undefined) {
      items.push(first);
      for (;;) {
        const next = this.attempt(() => {
          this.literal(',');
          return this.term();
        });
        if (next === undefined) break;
        items.push(next);
      }
    }
    this.literal(']');
    return items;
  }

  private condition(): Json {
    const left = this.term();
    const op = this.match(OPERATOR, 'operator')[1]!;
    const right = this.term();
    const key = typeof left === 'string' ? left : JSON.stringify(left);
    return { [op]: { [key]: right } };
  }

  private unary(): Json {
    const negated = this.attempt(() => {
      this.literal('not');
      return this.unary();
    });
    if (negated !== undefined) return { not: negated };
    const grouped = this.attempt(() => {
      this.literal('(');
      const e = this.expr();
      this.literal(')');
      return e;
    });
    if (grouped !== undefined) return grouped;
    return this.condition();
  }

  /** One binary level: `operand (op operand)*`, flattened into one n-ary node. */
  private level(op: string, key: string, operand: () => Json): Json {
    const first = operand();
    const rest: Json[] = [];
    for (;;) {
      const next = this.attempt(() => {
        this.literal(op);
        return operand();
      });
      if (next === undefined) break;
      rest.push(next);
    }
    return rest.length === 0 ? first : { [key]: [first, ...rest] };
  }

  expr(): Json {
    const and = () => this.level('and', 'and', () => this.unary());
    const wedge = () => this.level('∧', 'and', and);
    const or = () => this.level('or', 'or', wedge);
    return this.level('∨', 'or', or);
  }

  parse(): Json {
    let result: Json;
    try {
      result = this.expr();
      this.skip();
      if (this.pos < this.text.length) this.fail('end of text');
    } catch (err) {
      if (!(err instanceof Fail)) throw err;
      const at = this.furthest;
      const found = at < this.text.length ? `'${this.text[at]}'` : 'end of text';
      throw new FormatError(
        `Invalid filter: Expected ${this.expected}, found ${found}  (at char ${at}), (line:1, col:${at + 1})`,
      );
    }
    return result;
  }
}

/** Parses a STRING-form query into its JSON form; throws FormatError("Invalid filter: ..."). */
export function parseResourceQueryString(text: string): unknown {
  if (textDepth(text, '(', ')') > MAX_QUERY_NESTING) {
    throw new FormatError(`Invalid filter: nested deeper than ${MAX_QUERY_NESTING} levels`);
  }
  return new Parser(text).parse();
}
