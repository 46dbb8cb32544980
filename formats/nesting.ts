/**
 * Nesting limits. The query and operations languages are parsed by
 * recursion, and a request nested thousands of levels deep would exhaust the
 * stack (or worse, V8's regexp compiler memory); these checks run first,
 * without recursion, so such input is refused with a 400.
 */

/** Deepest nesting accepted in search filters and operations trees. */
export const MAX_QUERY_NESTING = 100;
/** Deepest nesting accepted in any JSON request body. */
export const MAX_JSON_NESTING = 256;

/** Depth of arrays/objects in a JSON value; stops counting past `limit`. */
export function valueDepth(value: unknown, limit: number): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    const d = depth + 1;
    if (d > max) max = d;
    if (max > limit) return max;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d]);
  }
  return max;
}

/**
 * Deepest nesting of `open`/`close` characters in text, ignoring those
 * inside double- or single-quoted strings (with backslash escapes).
 */
export function textDepth(text: string, open: string, close: string): number {
  let depth = 0;
  let max = 0;
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote !== '') {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (open.includes(c)) {
      depth++;
      if (depth > max) max = depth;
    } else if (close.includes(c)) depth--;
  }
  return max;
}
