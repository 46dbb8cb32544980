/**
 * The oslo.policy rule language Gnocchi's policy files are written in: parsing
 * of the text form (`role:admin or (user:%(creator)s and not rule:x)`) and of
 * the legacy list-of-lists form, and evaluation against the caller's
 * credentials and the target object. Semantics follow oslo.policy: `@` and
 * `""` allow, `!` denies, a check whose target key is missing denies, a
 * `rule:` naming an unknown rule denies, values compare as Python `str()`.
 */

export type Rule =
  | { readonly kind: 'true' }
  | { readonly kind: 'false' }
  | { readonly kind: 'and'; readonly rules: readonly Rule[] }
  | { readonly kind: 'or'; readonly rules: readonly Rule[] }
  | { readonly kind: 'not'; readonly rule: Rule }
  | { readonly kind: 'rule'; readonly name: string }
  | { readonly kind: 'role'; readonly match: string }
  | { readonly kind: 'generic'; readonly key: string; readonly match: string };

/** The caller as oslo.policy sees it (`creds`): flat names to strings, null or lists. */
export type Credentials = Readonly<Record<string, string | null | readonly string[]>>;

/** The object acted upon, flattened with `.` (`resource.project_id`). */
export type Target = Readonly<Record<string, string | number | boolean | null | undefined>>;

export class PolicySyntaxError extends Error {}

const TRUE: Rule = { kind: 'true' };
const FALSE: Rule = { kind: 'false' };

/** One `kind:match` check, `@` or `!` (oslo's `_parse_check`). */
function parseCheck(text: string): Rule {
  if (text === '!') return FALSE;
  if (text === '@') return TRUE;
  const colon = text.indexOf(':');
  // oslo logs and denies a check it cannot split rather than refusing the file.
  if (colon === -1) return FALSE;
  const kind = text.slice(0, colon);
  const match = text.slice(colon + 1);
  if (kind === 'rule') return { kind: 'rule', name: match };
  if (kind === 'role') return { kind: 'role', match };
  if (kind === 'http' || kind === 'https') {
    throw new PolicySyntaxError(`remote "${kind}:" checks are not supported: ${text}`);
  }
  return { kind: 'generic', key: kind, match };
}

type Token = { type: '(' | ')' | 'and' | 'or' | 'not' } | { type: 'check'; rule: Rule };

/** oslo's `_parse_tokenize`: whitespace-separated words, parentheses peeled off their ends. */
function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    const opened = word.length - word.replace(/^\(+/, '').length;
    for (let i = 0; i < opened; i++) tokens.push({ type: '(' });
    const inner = word.slice(opened);
    if (inner === '') continue;
    const core = inner.replace(/\)+$/, '');
    const closed = inner.length - core.length;
    const lowered = core.toLowerCase();
    if (lowered === 'and' || lowered === 'or' || lowered === 'not') tokens.push({ type: lowered });
    else if (core !== '') {
      if (/^(["']).*\1$/s.test(core)) {
        throw new PolicySyntaxError(`unexpected quoted string ${core}`);
      }
      tokens.push({ type: 'check', rule: parseCheck(core) });
    }
    for (let i = 0; i < closed; i++) tokens.push({ type: ')' });
  }
  return tokens;
}

/** Recursive descent with oslo's precedence: `not` over `and` over `or`. */
function parseText(text: string): Rule {
  if (text === '') return TRUE;
  const tokens = tokenize(text);
  let pos = 0;
  const fail = (why: string): never => {
    throw new PolicySyntaxError(`${why} in "${text}"`);
  };
  const peek = () => tokens[pos]?.type;

  const unary = (): Rule => {
    const token = tokens[pos++];
    if (token === undefined) return fail('unexpected end of rule');
    if (token.type === 'not') return { kind: 'not', rule: unary() };
    if (token.type === '(') {
      const inner = disjunction();
      if (tokens[pos++]?.type !== ')') fail('missing ")"');
      return inner;
    }
    if (token.type === 'check') return token.rule;
    return fail(`unexpected "${token.type}"`);
  };
  const conjunction = (): Rule => {
    const rules = [unary()];
    while (peek() === 'and') {
      pos++;
      rules.push(unary());
    }
    return rules.length === 1 ? rules[0]! : { kind: 'and', rules };
  };
  const disjunction = (): Rule => {
    const rules = [conjunction()];
    while (peek() === 'or') {
      pos++;
      rules.push(conjunction());
    }
    return rules.length === 1 ? rules[0]! : { kind: 'or', rules };
  };

  const rule = disjunction();
  if (pos !== tokens.length) fail(`unexpected "${tokens[pos]!.type}"`);
  return rule;
}

/**
 * oslo's `_parse_list_rule`: a list of alternatives, each a check or a list
 * of checks that must all hold; `[]` allows, a list of only empty entries denies.
 */
function parseList(list: readonly unknown[]): Rule {
  if (list.length === 0) return TRUE;
  const alternatives: Rule[] = [];
  for (const entry of list) {
    const checks = typeof entry === 'string' ? [entry] : entry;
    if (!Array.isArray(checks)) throw new PolicySyntaxError(`expected a string or a list of strings, got ${JSON.stringify(entry)}`);
    if (checks.length === 0) continue;
    const parsed = checks.map((c) => {
      if (typeof c !== 'string') throw new PolicySyntaxError(`expected a check string, got ${JSON.stringify(c)}`);
      return parseCheck(c);
    });
    alternatives.push(parsed.length === 1 ? parsed[0]! : { kind: 'and', rules: parsed });
  }
  if (alternatives.length === 0) return FALSE;
  return alternatives.length === 1 ? alternatives[0]! : { kind: 'or', rules: alternatives };
}

/** A rule in either of the forms a policy file may use. */
export function parseRule(source: unknown): Rule {
  if (typeof source === 'string') return parseText(source);
  if (Array.isArray(source)) return parseList(source);
  throw new PolicySyntaxError(`expected a rule string or a list, got ${JSON.stringify(source)}`);
}

/** The names a rule refers to through `rule:`. */
export function referencedRules(rule: Rule): string[] {
  switch (rule.kind) {
    case 'rule':
      return [rule.name];
    case 'and':
    case 'or':
      return rule.rules.flatMap(referencedRules);
    case 'not':
      return referencedRules(rule.rule);
    default:
      return [];
  }
}

/** Python's `str()` of a target value. */
function pyStr(value: string | number | boolean | null): string {
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return String(value);
}

/** Python's `match % target` for `%(key)s` and `%%`; undefined where a key is missing (oslo: deny). */
export function interpolate(match: string, target: Target): string | undefined {
  let missing = false;
  const out = match.replace(/%\((.*?)\)s|%%/g, (whole, key: string | undefined) => {
    if (key === undefined) return '%';
    const value = Object.hasOwn(target, key) ? target[key] : undefined;
    if (value === undefined) {
      missing = true;
      return whole;
    }
    return pyStr(value);
  });
  return missing ? undefined : out;
}

/** `ast.literal_eval` of a check's left side, for the literals policies use. */
function literal(key: string): string | undefined {
  const quoted = /^(['"])(.*)\1$/s.exec(key);
  if (quoted !== null) return quoted[2];
  if (key === 'True' || key === 'False' || key === 'None') return key;
  if (/^-?\d+$/.test(key)) return BigInt(key).toString();
  return undefined;
}

/** oslo's GenericCheck lookup: a dotted path into the credentials, any element of a list matching. */
function credentialMatches(value: unknown, path: readonly string[], match: string): boolean {
  if (Array.isArray(value)) return value.some((v) => credentialMatches(v, path, match));
  if (path.length === 0) return typeof value === 'object' && value !== null ? false : pyStr(value as string | null) === match;
  if (typeof value !== 'object' || value === null || !Object.hasOwn(value, path[0]!)) return false;
  return credentialMatches((value as Record<string, unknown>)[path[0]!], path.slice(1), match);
}

export interface Evaluation {
  rules: ReadonlyMap<string, Rule>;
  creds: Credentials;
  target: Target;
}

export function evaluate(rule: Rule, ev: Evaluation): boolean {
  switch (rule.kind) {
    case 'true':
      return true;
    case 'false':
      return false;
    case 'and':
      return rule.rules.every((r) => evaluate(r, ev));
    case 'or':
      return rule.rules.some((r) => evaluate(r, ev));
    case 'not':
      return !evaluate(rule.rule, ev);
    case 'rule': {
      const named = ev.rules.get(rule.name);
      return named !== undefined && evaluate(named, ev);
    }
    case 'role': {
      const match = interpolate(rule.match, ev.target);
      const roles = ev.creds.roles;
      if (match === undefined || !Array.isArray(roles)) return false;
      return roles.some((r) => r.toLowerCase() === match.toLowerCase());
    }
    case 'generic': {
      const match = interpolate(rule.match, ev.target);
      if (match === undefined) return false;
      const value = literal(rule.key);
      if (value !== undefined) return value === match;
      const [head, ...rest] = rule.key.split('.');
      if (!Object.hasOwn(ev.creds, head!)) return false;
      return credentialMatches(ev.creds[head!], rest, match);
    }
  }
}
