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
 *
 * Errors read as pyparsing 3.1's (Gnocchi 4.4's): a failure carries the
 * position where it happened; of alternatives the furthest failure is kept,
 * and optional or repeated parts swallow theirs. An expression that does not
 * parse is named by its outermost level (`Expected '∨' term`); one followed
 * by more text fails at `Expected end of text`, where the expression ended.
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

/** A failed match at `loc`, as a pyparsing ParseException. */
class Fail extends Error {
  constructor(readonly loc: number) {
    super();
  }
}

/**
 * pyparsing's `found` word: up to 16 letters or digits of the scripts its
 * error messages know (Latin-1, Latin Extended-A/B, Greek, Cyrillic).
 */
function isWordChar(c: string): boolean {
  const cp = c.codePointAt(0)!;
  const known = cp <= 0x024f || (cp >= 0x0370 && cp <= 0x052f) || (cp >= 0x1f00 && cp <= 0x1fff) ||
    (cp >= 0x1c80 && cp <= 0x1c88) || (cp >= 0x2de0 && cp <= 0x2dff) || (cp >= 0xa640 && cp <= 0xa69f);
  return known && (/\p{L}/u.test(c) || /[0-9\u00b2\u00b3\u00b9]/.test(c));
}

/** `repr()` of the text at `loc`, as pyparsing shows what it found there. */
function foundAt(text: string, loc: number): string {
  if (loc >= text.length) return 'end of text';
  const chars = [...text.slice(loc, loc + 32)];
  let word = '';
  for (const c of chars) {
    if (!isWordChar(c) || word.length >= 16) break;
    word += c;
  }
  const found = word === '' ? chars[0]! : word;
  return pyStr(found).replace(/\\\\/g, '\\');
}

/** Python's `repr()` of a short string (quotes as Python picks them). */
function pyStr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
  if (quote === "'") out = out.replace(/'/g, "\\'");
  return quote + out + quote;
}

/** Python's `str.expandtabs()`: pyparsing parses the text with its tabs expanded. */
function expandTabs(text: string): string {
  if (!text.includes('\t')) return text;
  let out = '';
  let column = 0;
  for (const c of text) {
    if (c === '\t') {
      const n = 8 - (column % 8);
      out += ' '.repeat(n);
      column += n;
    } else {
      out += c;
      column = c === '\n' || c === '\r' ? 0 : column + 1;
    }
  }
  return out;
}

class Parser {
  pos = 0;

  constructor(private readonly text: string) {}

  private skip(): void {
    WS.lastIndex = this.pos;
    WS.exec(this.text);
    this.pos = WS.lastIndex;
  }

  private fail(): never {
    throw new Fail(this.pos);
  }

  private match(re: RegExp): RegExpExecArray {
    this.skip();
    re.lastIndex = this.pos;
    const m = re.exec(this.text);
    if (m === null) this.fail();
    this.pos = re.lastIndex;
    return m;
  }

  private literal(s: string): void {
    this.skip();
    if (!this.text.startsWith(s, this.pos)) this.fail();
    this.pos += s.length;
  }

  /** pyparsing's MatchFirst: the first alternative that matches, else the furthest failure (the first of equals). */
  private firstOf<T>(alternatives: readonly (() => T)[]): T {
    const start = this.pos;
    let furthest: Fail | undefined;
    for (const alt of alternatives) {
      try {
        return alt();
      } catch (err) {
        if (!(err instanceof Fail)) throw err;
        this.pos = start;
        if (furthest === undefined || err.loc > furthest.loc) furthest = err;
      }
    }
    throw furthest!;
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

  private readonly terms: readonly (() => Json)[] = [
    () => (this.match(NULL), null),
    () => this.match(BOOL)[1]!.toLowerCase() === 'true',
    () => this.match(UUID)[1]!,
    () => this.match(IDENTIFIER)[1]!,
    () => Number.parseFloat(this.match(NUMBER)[1]!.replaceAll(':', '')),
    () => {
      const m = this.match(QUOTED);
      return m[1] ?? m[2]!;
    },
    () => this.list(),
  ];

  private term(): Json {
    return this.firstOf(this.terms);
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
    const op = this.match(OPERATOR)[1]!;
    const right = this.term();
    const key = typeof left === 'string' ? left : JSON.stringify(left);
    return { [op]: { [key]: right } };
  }

  private unary(): Json {
    return this.firstOf([
      () => {
        this.literal('not');
        return { not: this.unary() };
      },
      () => this.condition(),
      () => {
        this.literal('(');
        const e = this.expr();
        this.literal(')');
        return e;
      },
    ]);
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
    } catch (err) {
      if (!(err instanceof Fail)) throw err;
      throw this.error("'∨' term", err.loc);
    }
    this.skip();
    if (this.pos < this.text.length) throw this.error('end of text', this.pos);
    return result;
  }

  /** pyparsing's ParseException text. */
  private error(expected: string, loc: number): FormatError {
    const { text } = this;
    const found = text === '' ? '' : `, found ${foundAt(text, loc)}`;
    const line = text.slice(0, loc).split('\n').length;
    const column = loc > 0 && loc < text.length && text[loc - 1] === '\n' ? 1 : loc - (loc === 0 ? -1 : text.lastIndexOf('\n', loc - 1));
    return new FormatError(`Invalid filter: Expected ${expected}${found}  (at char ${loc}), (line:${line}, col:${column})`);
  }
}

/** Parses a STRING-form query into its JSON form; throws FormatError("Invalid filter: ..."). */
export function parseResourceQueryString(text: string): unknown {
  if (textDepth(text, '(', ')') > MAX_QUERY_NESTING) {
    throw new FormatError(`Invalid filter: nested deeper than ${MAX_QUERY_NESTING} levels`);
  }
  return new Parser(expandTabs(text)).parse();
}
