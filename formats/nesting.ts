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

const OPEN = 1;
const CLOSE = 2;
const QUOTE = 3;

/**
 * Deepest nesting of `open`/`close` characters in text, ignoring those
 * inside double- or single-quoted strings (with backslash escapes). Runs on
 * every JSON body before parsing, so it classifies characters through a
 * table and skips string contents with indexOf.
 */
export function textDepth(text: string, open: string, close: string): number {
  const classes = new Uint8Array(128);
  for (const c of open) classes[c.charCodeAt(0)] = OPEN;
  for (const c of close) classes[c.charCodeAt(0)] = CLOSE;
  classes[0x22] = QUOTE;
  classes[0x27] = QUOTE;
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const k = c < 128 ? classes[c] : 0;
    if (k === 0) continue;
    if (k === OPEN) {
      if (++depth > max) max = depth;
    } else if (k === CLOSE) depth--;
    else i = closingQuote(text, i);
  }
  return max;
}

/** Index of the quote closing the string opened at `from` (text.length if none). */
function closingQuote(text: string, from: number): number {
  const quote = text[from]!;
  let i = from;
  for (;;) {
    i = text.indexOf(quote, i + 1);
    if (i === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(i - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return i;
  }
}
