/**
 * Resource ids as Gnocchi derives them (`utils.ResourceUUID`): a string
 * Python's `uuid.UUID()` accepts is used as that UUID; any other string of
 * at most 255 characters maps to UUID5(namespace, value + "\0" + creator),
 * so the same external id names different resources for different users.
 */
import { v5 as uuidv5 } from 'uuid';
import { FormatError } from '../formats/errors.js';

export const RESOURCE_ID_NAMESPACE = '0a7a15ff-aa13-4ac2-897c-9bdf30ce175b';

/** Python's `uuid.UUID(text)` in canonical form, or undefined where it raises. */
export function pythonUuid(text: string): string | undefined {
  const hex = text.replaceAll('urn:', '').replaceAll('uuid:', '').replace(/^[{}]+|[{}]+$/g, '').replaceAll('-', '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) return undefined;
  const h = hex.toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The stored id for a user-supplied one; throws FormatError with Gnocchi's messages. */
export function resourceUuid(value: string, creator: string | null): string {
  if (value.includes('/')) throw new FormatError("'/' is not supported in resource id");
  const uuid = pythonUuid(value);
  if (uuid !== undefined) return uuid;
  // Python counts code points, not UTF-16 units.
  if ([...value].length > 255) throw new FormatError('transformable resource id >255 max allowed characters');
  return uuidv5(`${value}\u0000${creator ?? '\u0000'}`, RESOURCE_ID_NAMESPACE);
}
