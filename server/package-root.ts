/**
 * The package's root directory, found from this module whether it runs from
 * server/ (vitest) or from dist/server/ (the build): what tsc does not copy
 * (the console's static files, package.json) is read from there.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('no package.json above the server modules');
    dir = parent;
  }
  return dir;
}
