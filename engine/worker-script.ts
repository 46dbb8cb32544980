/**
 * Piscina options that run workers/NAME.js (an ES module) through the
 * CommonJS entry workers/esm-entry.cjs (see there why). From the TypeScript
 * sources (tests) the build's copies are used.
 */
const here = import.meta.url;
const workers = here.endsWith('.ts') ? new URL('../dist/workers/', here) : new URL('../workers/', here);

export function workerScript(name: string): { filename: string; workerData: { module: string } } {
  return { filename: new URL('esm-entry.cjs', workers).href, workerData: { module: new URL(`${name}.js`, workers).href } };
}
