/**
 * Piscina options that run workers/NAME.js (an ES module) through the
 * CommonJS entry workers/esm-entry.cjs (see there why). From the TypeScript
 * sources (tests) the build's copies are used.
 */
const here = import.meta.url;
const workers = here.endsWith('.ts') ? new URL('../dist/workers/', here) : new URL('../workers/', here);

/** `data` is passed on to the module as the rest of workerData. */
export function workerScript<D extends object>(name: string, data?: D): { filename: string; workerData: { module: string } & D } {
  return { filename: new URL('esm-entry.cjs', workers).href, workerData: { ...(data as D), module: new URL(`${name}.js`, workers).href } };
}
