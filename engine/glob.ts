/**
 * Shell-style patterns (`fnmatch`, as Gnocchi matches archive policy rules
 * and metric names), compiled to anchored regular expressions with every
 * other character escaped, so a pattern can never become a costly regex.
 */
const cache = new Map<string, RegExp>();

export function compileGlob(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (re !== undefined) return re;
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') source += '.*';
    else if (c === '?') source += '.';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end === -1) source += '\\[';
      else {
        let body = pattern.slice(i + 1, end).replace(/\\/g, '\\\\');
        if (body.startsWith('!')) body = '^' + body.slice(1);
        source += `[${body}]`;
        i = end;
      }
    } else source += c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  }
  re = new RegExp(`^${source}$`, 's');
  if (cache.size > 1000) cache.clear();
  cache.set(pattern, re);
  return re;
}
