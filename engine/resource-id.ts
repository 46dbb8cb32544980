/**
 * Resource ids as Gnocchi derives them (`utils.ResourceUUID`): a string
 * Python's `uuid.UUID()` accepts is used as that UUID; any other string of
 * at most 255 characters maps to UUID5(namespace, value + "\0" + creator),
 * so the same external id names different resources for different users.
 */
import * as crypto from 'node:crypto';
import { v5 as uuidv5 } from 'uuid';
import { FormatError } from '../formats/errors.js';
import { uuidText } from './uuid-text.js';

export const RESOURCE_ID_NAMESPACE = '0a7a15ff-aa13-4ac2-897c-9bdf30ce175b';
const NAMESPACE_BYTES = Buffer.from(RESOURCE_ID_NAMESPACE.replaceAll('-', ''), 'hex');
/**
 * The namespace, then the name's UTF-8 written after it, hashed at once.
 * Names longer than it takes (UTF-8: at most 3 bytes a UTF-16 unit) get a
 * buffer of their own.
 */
const input = Buffer.alloc(4096);
NAMESPACE_BYTES.copy(input);
const NAME_ROOM = Math.floor((input.length - NAMESPACE_BYTES.length) / 3);
/**
 * SHA-1 of bytes: Node's one-shot crypto.hash where it has it (20.12 on),
 * ~0.6 us against ~1 us through a Hash object (a stream, garbage each).
 * Looked up on the namespace: a named import of it fails to load on older
 * Node 20 releases.
 */
const sha1: (data: Uint8Array) => Buffer =
  typeof crypto.hash === 'function' ? (data) => crypto.hash('sha1', data, 'buffer') : (data) => crypto.createHash('sha1').update(data).digest();

/** In unicode mode, surrogates that are not part of a pair. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * UUID5(RESOURCE_ID_NAMESPACE, name), as the uuid package computes it but
 * several times faster: a collector's first write names thousands of
 * resources. A name that is not well-formed UTF-16 (a lone surrogate) goes
 * to the package, which refuses it.
 */
export function resourceUuid5(name: string): string {
  if (LONE_SURROGATE.test(name)) return uuidv5(name, RESOURCE_ID_NAMESPACE);
  const data = name.length <= NAME_ROOM
    ? input.subarray(0, NAMESPACE_BYTES.length + input.write(name, NAMESPACE_BYTES.length, 'utf8'))
    : Buffer.concat([NAMESPACE_BYTES, Buffer.from(name, 'utf8')]);
  const h = sha1(data);
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  return uuidText(h);
}

/** Python's `uuid.UUID(text)` in canonical form, or undefined where it raises. */
export function pythonUuid(text: string): string | undefined {
  // Its 32 hex digits are what is left once characters are taken out: a collector's host names are shorter.
  if (text.length < 32) return undefined;
  const hex = text.replaceAll('urn:', '').replaceAll('uuid:', '').replace(/^[{}]+|[{}]+$/g, '').replaceAll('-', '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) return undefined;
  return uuidText(Buffer.from(hex, 'hex'));
}

/** The stored id for a user-supplied one; throws FormatError with Gnocchi's messages. */
export function resourceUuid(value: string, creator: string | null): string {
  if (value.includes('/')) throw new FormatError("'/' is not supported in resource id");
  const uuid = pythonUuid(value);
  if (uuid !== undefined) return uuid;
  // Python counts code points, not UTF-16 units.
  if (value.length > 255 && [...value].length > 255) throw new FormatError('transformable resource id >255 max allowed characters');
  return resourceUuid5(`${value}\u0000${creator ?? '\u0000'}`);
}
