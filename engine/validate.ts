/**
 * A small structural validator that answers with the messages of the
 * `voluptuous` library Gnocchi validates with, so clients that match on
 * `reason` and `detail` keep working.
 */
import { InvalidInput } from './errors.js';

export type Path = (string | number)[];

function pathSuffix(path: Path): string {
  if (path.length === 0) return '';
  return ' @ data' + path.map((p) => (typeof p === 'number' ? `[${p}]` : `['${p}']`)).join('');
}

/** A failure inside a value (as opposed to a key problem). */
export function invalidValue(message: string, path: Path): InvalidInput {
  const where = path.length > 0 && typeof path[path.length - 1] === 'string' ? ' for dictionary value' : '';
  return new InvalidInput(`${message}${where}${pathSuffix(path)}`, path);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface ObjectShape {
  required?: readonly string[];
  optional?: readonly string[];
  /** `prevent` (default) refuses unknown keys, `remove` drops them. */
  extra?: 'prevent' | 'remove';
}

/**
 * Checks the keys of an object: unknown keys first (in input order), then
 * missing required keys, as voluptuous reports them.
 */
export function checkObject(value: unknown, path: Path, shape: ObjectShape): Record<string, unknown> {
  if (!isPlainObject(value)) throw invalidValue('expected a dictionary', path);
  const required = shape.required ?? [];
  const optional = shape.optional ?? [];
  if (shape.extra !== 'remove') {
    for (const key of Object.keys(value)) {
      if (!required.includes(key) && !optional.includes(key)) {
        throw new InvalidInput(`extra keys not allowed${pathSuffix([...path, key])}`, [...path, key]);
      }
    }
  }
  for (const key of required) {
    if (!Object.hasOwn(value, key)) {
      throw new InvalidInput(`required key not provided${pathSuffix([...path, key])}`, [...path, key]);
    }
  }
  return value;
}

export function checkString(value: unknown, path: Path): string {
  if (typeof value !== 'string') throw invalidValue('expected str', path);
  return value;
}

export function checkList(value: unknown, path: Path, minLength = 0): unknown[] {
  if (!Array.isArray(value)) throw invalidValue('expected a list', path);
  if (value.length < minLength) throw invalidValue(`length of value must be at least ${minLength}`, path);
  return value;
}

/** voluptuous `All(Coerce(int), Range(min=...))`. */
export function checkInteger(value: unknown, path: Path, min?: number): number {
  let n: number;
  if (typeof value === 'number') n = Math.trunc(value);
  else if (typeof value === 'string' && /^\s*[-+]?\d+\s*$/.test(value)) n = Number.parseInt(value, 10);
  else if (typeof value === 'boolean') n = value ? 1 : 0;
  else throw invalidValue('expected int', path);
  if (!Number.isFinite(n)) throw invalidValue('expected int', path);
  if (min !== undefined && n < min) throw invalidValue(`value must be at least ${min}`, path);
  return n;
}
