/**
 * The access policy: named rules in oslo.policy's language, the built-in
 * default or a `policy_file` (YAML or JSON, name -> rule), checked by the
 * routes through `enforce` (403 on refusal) and `allowed`.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { Identity } from './auth.js';
import { ConfigError } from './config.js';
import { forbidden } from './errors.js';
import { DEFAULT_POLICY, type RuleName } from './policy-default.js';
import { evaluate, parseRule, PolicySyntaxError, referencedRules, type Credentials, type Rule, type Target } from './policy-rules.js';

export type { RuleName } from './policy-default.js';
export type PolicyTarget = Target;

/** oslo's `policy_default_rule`: applies to an enforced name the policy does not define. */
const DEFAULT_RULE = 'default';

export class PolicyFileError extends ConfigError {}

export class Policy {
  private constructor(private readonly rules: ReadonlyMap<string, Rule>) {}

  /** Parses a name -> rule mapping; `source` names it in error messages. */
  static fromRules(document: unknown, source: string): Policy {
    if (typeof document !== 'object' || document === null || Array.isArray(document)) {
      throw new PolicyFileError(`${source}: expected a mapping of rule names to rules`);
    }
    const rules = new Map<string, Rule>();
    for (const [name, text] of Object.entries(document)) {
      try {
        rules.set(name, parseRule(text));
      } catch (err) {
        if (err instanceof PolicySyntaxError) throw new PolicyFileError(`${source}: rule "${name}": ${err.message}`);
        throw err;
      }
    }
    checkNoLoop(rules, source);
    return new Policy(rules);
  }

  /** Gnocchi's default policy, or the rules of `file` (YAML, of which JSON is a subset). */
  static load(file: string): Policy {
    if (file === '') return Policy.fromRules(DEFAULT_POLICY, 'default policy');
    let document: unknown;
    try {
      document = parseYaml(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new PolicyFileError(`cannot read policy file ${file}: ${(err as Error).message}`);
    }
    return Policy.fromRules(document ?? {}, `policy file ${file}`);
  }

  check(name: string, creds: Credentials, target: Target): boolean {
    const rule = this.rules.get(name) ?? this.rules.get(DEFAULT_RULE);
    return rule !== undefined && evaluate(rule, { rules: this.rules, creds, target });
  }
}

/** A `rule:` chain that comes back to itself would never end: refuse the file. */
function checkNoLoop(rules: ReadonlyMap<string, Rule>, source: string): void {
  const done = new Set<string>();
  const visit = (name: string, path: string[]): void => {
    if (path.includes(name)) throw new PolicyFileError(`${source}: rules refer to each other in a loop: ${[...path, name].join(' -> ')}`);
    if (done.has(name)) return;
    const rule = rules.get(name);
    if (rule !== undefined) for (const next of referencedRules(rule)) visit(next, [...path, name]);
    done.add(name);
  };
  for (const name of rules.keys()) visit(name, []);
}

export function allowed(rule: RuleName, who: Identity, target: PolicyTarget = {}): boolean {
  return who.policy.check(rule, who.credentials, target);
}

export function enforce(rule: RuleName, who: Identity, target: PolicyTarget = {}): void {
  if (!allowed(rule, who, target)) throw forbidden();
}
