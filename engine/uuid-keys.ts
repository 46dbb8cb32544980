/**
 * Keys holding a metric or resource UUID store it as 16 bytes instead of
 * its 36 characters (format 6): a key encoder for lmdb-js that writes the
 * other elements as its default encoding (ordered-binary) does. Each
 * encoder knows where its keys hold the UUID: alone, first (then the rest
 * of the key follows as an ordered-binary array), or last (after an
 * ordered-binary prefix of strings and numbers).
 *
 * A UUID element is 0x1a then its bytes: ordered-binary starts a number
 * with a byte in 0x08..0x17 and a string with 0x1b (escape) or 0x1c and
 * above, so the tag tells the two forms apart, and a string in a UUID's
 * place (an id that is not a canonical UUID, or a range bound such as
 * '\uffff') still encodes, after every UUID. Canonical UUIDs are lowercase
 * hex, whose byte order is their text order: ranges and listings in key
 * order see them in the order they had. A range must not start from '' in
 * a UUID's place (it sorts after every UUID): bounds there are '\uffff' or
 * a shorter key.
 */
import { bufferToKeyValue, keyValueToBuffer } from 'lmdb';
import { StorageKeyTooLong } from './key-limit.js';
import { uuidText } from './uuid-text.js';

export { bufferToKeyValue, keyValueToBuffer };

// lmdb-js exports ordered-binary's conversions (its default key encoding) without declaring them.
declare module 'lmdb' {
  export function keyValueToBuffer(key: unknown): Buffer;
  export function bufferToKeyValue(source: Buffer): unknown;
}

const TAG = 0x1a;
const SEPARATOR = 0;
/** ordered-binary's escape inside strings: the next byte is a character of code 0..4. */
const ESCAPE = 4;
const UUID_BYTES = 16;
const HEX = '0123456789abcdef';
/** Value of each lowercase hex digit by character code, -1 for any other character. */
const NIBBLE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) NIBBLE[HEX.charCodeAt(i)] = i;
const DASH = 45;
const isDashAt = (i: number) => i === 8 || i === 13 || i === 18 || i === 23;

/**
 * A key past the end of `target` (lmdb-js' key buffer, about 4 KB for a
 * lookup) is refused as lmdb-js' own encoder refuses it, before it is written.
 */
function fits(target: Uint8Array, end: number): void {
  if (end > target.length) throw new StorageKeyTooLong();
}

function writeBytes(bytes: Uint8Array, target: Uint8Array, position: number): number {
  fits(target, position + bytes.length);
  target.set(bytes, position);
  return position + bytes.length;
}

/**
 * The 16 bytes of `id` written at `position` and where they end, or -1
 * when `id` is not a canonical UUID (lowercase, dashed). Checked as it is
 * written: a regular expression took longer than the rest of a lookup.
 */
export function writeUuid(id: string, target: Uint8Array, position: number): number {
  if (id.length !== 36) return -1;
  for (let i = 0; i < 36; i += 2) {
    if (isDashAt(i)) {
      if (id.charCodeAt(i) !== DASH) return -1;
      i++;
    }
    const hi = NIBBLE[id.charCodeAt(i)] ?? -1;
    const lo = NIBBLE[id.charCodeAt(i + 1)] ?? -1;
    if (hi < 0 || lo < 0) return -1;
    target[position++] = (hi << 4) | lo;
  }
  return position;
}

/** A UUID element, or an ordered-binary string when `id` is not a canonical UUID. */
function writeId(id: string, target: Uint8Array, position: number): number {
  fits(target, position + 1 + UUID_BYTES);
  target[position] = TAG;
  const end = writeUuid(id, target, position + 1);
  return end < 0 ? writeBytes(keyValueToBuffer(id), target, position) : end;
}

/** The canonical text of the 16 bytes at `start`. */
export function readUuid(source: Uint8Array, start: number): string {
  return uuidText(source, start);
}

/** End of the ordered-binary string at `start`: its separator, or `end`. */
function stringEnd(source: Uint8Array, start: number, end: number): number {
  let i = start;
  while (i < end && source[i] !== SEPARATOR) i += source[i] === ESCAPE ? 2 : 1;
  return i;
}

/** The id element at `start` and where it ends. */
function readId(source: Uint8Array, start: number, end: number): { id: string; next: number } {
  if (source[start] === TAG) return { id: readUuid(source, start + 1), next: start + 1 + UUID_BYTES };
  const next = stringEnd(source, start, end);
  return { id: bufferToKeyValue(Buffer.from(source.buffer, source.byteOffset + start, next - start)) as string, next };
}

function readOrdered(source: Uint8Array, start: number, end: number): unknown[] {
  const value = bufferToKeyValue(Buffer.from(source.buffer, source.byteOffset + start, end - start));
  return Array.isArray(value) ? value : [value];
}

/** Bytes (lmdb-js' default first key of an iteration) and anything but the key's shape go as ordered-binary. */
function writeOther(key: unknown, target: Uint8Array, position: number): number {
  return writeBytes(keyValueToBuffer(key), target, position);
}

/**
 * ordered-binary's bytes of the strings keys hold beside an id (metric
 * names, resource types), kept: a few distinct ones are written again and
 * again (a collector's first write files a metric name under each of
 * thousands of resources, and each key is written twice, checked then put),
 * and keyValueToBuffer allocates a buffer each time.
 */
const stringBytes = new Map<string, Buffer>();
/** Strings kept at most (a name is at most ~2 KB): then the map starts over. */
const MAX_STRINGS = 4096;

function encodedString(s: string): Buffer {
  let bytes = stringBytes.get(s);
  if (bytes === undefined) {
    if (stringBytes.size === MAX_STRINGS) stringBytes.clear();
    // A copy: keyValueToBuffer's bytes are a view of its 8 KB block.
    bytes = Buffer.from(new Uint8Array(keyValueToBuffer(s)).buffer);
    stringBytes.set(s, bytes);
  }
  return bytes;
}

const float64 = new Float64Array(1);
const int32 = new Int32Array(float64.buffer);
/** Where the low and high words of a float64 are in int32. */
const [LOW, HIGH] = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? [0, 1] : [1, 0];

/**
 * A number as ordered-binary writes it within an array (in sequence: 9
 * bytes), for numbers >= 0 (and NaN, -0: what `n < 0` leaves), which
 * revision starts are; negative ones go through keyValueToBuffer.
 */
function writeNumberInSequence(n: number, target: Uint8Array, position: number): number {
  if (n < 0) return writeBytes(keyValueToBuffer([n]), target, position);
  fits(target, position + 9);
  float64[0] = n;
  const low = int32[LOW]!;
  const high = int32[HIGH]!;
  const first = (high >>> 4) | 0x10000000;
  const second = (low >>> 4) | (high << 28);
  target[position] = first >>> 24;
  target[position + 1] = (first >>> 16) & 0xff;
  target[position + 2] = (first >>> 8) & 0xff;
  target[position + 3] = first & 0xff;
  target[position + 4] = second >>> 24;
  target[position + 5] = (second >>> 16) & 0xff;
  target[position + 6] = (second >>> 8) & 0xff;
  target[position + 7] = second & 0xff;
  target[position + 8] = (low & 0xf) << 4;
  return position + 9;
}

/**
 * Elements `from` to `to` of a key as ordered-binary writes an array of
 * them (separated by 0 bytes), strings and numbers without a buffer each;
 * anything else through keyValueToBuffer.
 */
function writeElements(key: readonly unknown[], from: number, to: number, target: Uint8Array, position: number): number {
  for (let i = from; i < to; i++) {
    if (i > from) {
      fits(target, position + 1);
      target[position++] = SEPARATOR;
    }
    const element = key[i];
    if (typeof element === 'string' && element !== '') position = writeBytes(encodedString(element), target, position);
    else if (typeof element === 'number') position = writeNumberInSequence(element, target, position);
    else position = writeOther([element], target, position);
  }
  return position;
}

/**
 * Where the prefix of a key whose id comes last ends, from the kinds of its
 * elements (`prefix`: 's' a string, 'n' a number, written in sequence: 9 bytes).
 */
function prefixEnd(source: Uint8Array, start: number, end: number, prefix: string): number {
  let i = start;
  for (let k = 0; k < prefix.length; k++) {
    if (k > 0) i++;
    i = prefix[k] === 'n' ? i + 9 : stringEnd(source, i, end);
  }
  return i;
}

export interface KeyEncoder {
  writeKey(key: unknown, target: Uint8Array, position: number): number;
  readKey(source: Uint8Array, start: number, end: number): unknown;
}

/** A key that is the id itself. */
export const idKeys: KeyEncoder = {
  writeKey: (key, target, position) => (typeof key === 'string' ? writeId(key, target, position) : writeOther(key, target, position)),
  readKey: (source, start, end) => readId(source, start, end).id,
};

/** Keys [id, ...rest]: a range bound may stop short of the rest. */
export const idFirstKeys: KeyEncoder = {
  writeKey(key, target, position) {
    if (!Array.isArray(key) || typeof key[0] !== 'string') return writeOther(key, target, position);
    position = writeId(key[0], target, position);
    if (key.length === 1) return position;
    fits(target, position + 1);
    target[position++] = SEPARATOR;
    return writeElements(key, 1, key.length, target, position);
  },
  readKey(source, start, end) {
    const { id, next } = readId(source, start, end);
    return next >= end ? [id] : [id, ...readOrdered(source, next + 1, end)];
  },
};

/**
 * Keys [...prefix, id], the prefix's elements of the kinds `prefix` names
 * ('s' string, 'n' number): a range bound may stop within the prefix.
 */
export function idLastKeys(prefix: string): KeyEncoder {
  return {
    writeKey(key, target, position) {
      if (!Array.isArray(key) || key.length <= prefix.length || typeof key[prefix.length] !== 'string') return writeOther(key, target, position);
      position = writeElements(key, 0, prefix.length, target, position);
      fits(target, position + 1);
      target[position++] = SEPARATOR;
      return writeId(key[prefix.length] as string, target, position);
    },
    readKey(source, start, end) {
      const at = prefixEnd(source, start, end, prefix);
      return [...readOrdered(source, start, at), readId(source, at + 1, end).id];
    },
  };
}

/**
 * A value that is an id (the metric a resource names): a canonical UUID as
 * its tag and 16 bytes, other ids as their UTF-8 text, as format 5 stored
 * every one. Text of 17 bytes starting with the tag (character U+001A)
 * would read as a UUID: ids are UUIDs or printable names.
 */
export const idValues = {
  encode(id: string): Buffer {
    const out = Buffer.allocUnsafe(1 + UUID_BYTES);
    out[0] = TAG;
    return writeUuid(id, out, 1) < 0 ? Buffer.from(id, 'utf8') : out;
  },
  decode(bytes: Uint8Array, size?: number): string {
    const n = size ?? bytes.length;
    if (n === 1 + UUID_BYTES && bytes[0] === TAG) return readUuid(bytes, 1);
    return Buffer.from(bytes.buffer, bytes.byteOffset, n).toString('utf8');
  },
};
