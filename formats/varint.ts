/**
 * LEB128 of counts and lengths, as the headers of sealed splits and metric
 * states store them: seven bits a byte, low first, at most five bytes, so
 * below 2^35.
 */

export const MAX_VARUINT_BYTES = 5;

export function varuintSize(x: number): number {
  return x < 0x80 ? 1 : x < 0x4000 ? 2 : x < 0x200000 ? 3 : x < 0x10000000 ? 4 : 5;
}

/** Writes `x` at `at` of `out`, which has room for it; returns the offset after it. */
export function writeVaruint(out: Uint8Array, x: number, at: number): number {
  let v = x;
  while (v >= 0x80) {
    out[at++] = (v & 0x7f) | 0x80;
    // Not `>>>= 7`: a value past 2^32 must not wrap.
    v = Math.floor(v / 0x80);
  }
  out[at++] = v;
  return at;
}

/** Why no varint could be read. */
export type VaruintFault = 'truncated' | 'overlong';

/**
 * Reads the varint at `at` of `bytes`: its value and the offset after it,
 * or why there is none, for the caller to name in its own error.
 */
export function readVaruint(bytes: Uint8Array, at: number): { value: number; next: number } | VaruintFault {
  let value = 0;
  let scale = 1;
  for (let i = at; i < at + MAX_VARUINT_BYTES; i++) {
    if (i >= bytes.length) return 'truncated';
    const b = bytes[i]!;
    value += (b & 0x7f) * scale;
    if (b < 0x80) return { value, next: i + 1 };
    scale *= 0x80;
  }
  return 'overlong';
}
