/**
 * Typed arrays kept and grown as they are reused (a scratch buffer, a table's
 * columns): doubling, so that a run of growing demands allocates a few times,
 * not once per demand.
 */
export type GrowableArray = Uint8Array | Uint16Array | Int32Array | Uint32Array | Float64Array;

/** `array` when it holds `size` elements, else a new one of at least twice its length, its contents copied. */
export function grown<T extends GrowableArray>(array: T, size: number): T {
  if (size <= array.length) return array;
  const out = new (array.constructor as new (length: number) => T)(Math.max(size, 2 * array.length));
  out.set(array);
  return out;
}
