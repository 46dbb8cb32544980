/**
 * Where the msgpack value at an offset ends, without decoding it: to read
 * one field of a record stored as an array (engine/record-codec.ts) past
 * the fields before it, which msgpackr would decode whole.
 */

/** A value that does not end within its bytes. */
export class TruncatedMsgpack extends Error {}

/** Bytes a value's header takes past its type byte, and where its length is (0: none), by type byte 0xc4-0xdf. */
const SIZED: Readonly<Record<number, { header: number; fixed?: number; items?: 1 | 2 }>> = {
  0xc4: { header: 1 },
  0xc5: { header: 2 },
  0xc6: { header: 4 },
  0xc7: { header: 1, fixed: 1 },
  0xc8: { header: 2, fixed: 1 },
  0xc9: { header: 4, fixed: 1 },
  0xca: { header: 0, fixed: 4 },
  0xcb: { header: 0, fixed: 8 },
  0xcc: { header: 0, fixed: 1 },
  0xcd: { header: 0, fixed: 2 },
  0xce: { header: 0, fixed: 4 },
  0xcf: { header: 0, fixed: 8 },
  0xd0: { header: 0, fixed: 1 },
  0xd1: { header: 0, fixed: 2 },
  0xd2: { header: 0, fixed: 4 },
  0xd3: { header: 0, fixed: 8 },
  0xd4: { header: 0, fixed: 2 },
  0xd5: { header: 0, fixed: 3 },
  0xd6: { header: 0, fixed: 5 },
  0xd7: { header: 0, fixed: 9 },
  0xd8: { header: 0, fixed: 17 },
  0xd9: { header: 1 },
  0xda: { header: 2 },
  0xdb: { header: 4 },
  0xdc: { header: 2, items: 1 },
  0xdd: { header: 4, items: 1 },
  0xde: { header: 2, items: 2 },
  0xdf: { header: 4, items: 2 },
};

function lengthAt(bytes: Uint8Array, at: number, size: number): number {
  if (at + size > bytes.length) throw new TruncatedMsgpack(`msgpack length past the end at byte ${at}`);
  let n = 0;
  for (let i = 0; i < size; i++) n = n * 256 + bytes[at + i]!;
  return n;
}

/** The offset after the value starting at `at`. */
export function skipValue(bytes: Uint8Array, at: number): number {
  if (at >= bytes.length) throw new TruncatedMsgpack(`msgpack value past the end at byte ${at}`);
  const type = bytes[at]!;
  let end: number;
  let items = 0;
  if (type < 0x80 || type >= 0xe0 || type === 0xc0 || type === 0xc1 || type === 0xc2 || type === 0xc3) end = at + 1;
  else if (type < 0x90) [end, items] = [at + 1, 2 * (type & 0x0f)];
  else if (type < 0xa0) [end, items] = [at + 1, type & 0x0f];
  else if (type < 0xc0) end = at + 1 + (type & 0x1f);
  else {
    const { header, fixed, items: per } = SIZED[type]!;
    const length = header === 0 ? 0 : lengthAt(bytes, at + 1, header);
    // An ext's length counts its data, after a type byte.
    if (per === undefined) end = at + 1 + header + (fixed ?? 0) + length;
    else [end, items] = [at + 1 + header, per * length];
  }
  for (let i = 0; i < items; i++) end = skipValue(bytes, end);
  if (end > bytes.length) throw new TruncatedMsgpack(`msgpack value past the end at byte ${at}`);
  return end;
}
