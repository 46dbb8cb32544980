/**
 * Writers of ASCII text straight into a byte buffer, for responses built in
 * place: the hot read path then allocates no string per point, which is
 * what its garbage collection time went to.
 */

/** The `width` low decimal digits of the integer `n` >= 0, zero-padded, ending just before `end`. */
export function writeDigits(buf: Uint8Array, end: number, n: number, width: number): void {
  const start = end - width;
  // Two digits per division: the divisions are most of the cost.
  for (end -= 2; end >= start; end -= 2) {
    const q = Math.floor(n / 100);
    writePair(buf, end, n - q * 100);
    n = q;
  }
  if (end + 1 === start) buf[start] = 0x30 + (n % 10);
}

const PAIRS = Buffer.from(Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0')).join(''), 'latin1');

/** The two decimal digits of the integer 0 <= n < 100. */
export function writePair(buf: Uint8Array, pos: number, n: number): void {
  buf[pos] = PAIRS[2 * n]!;
  buf[pos + 1] = PAIRS[2 * n + 1]!;
}

/** How many decimal digits the integer `n` >= 0 has. */
export function digitCount(n: number): number {
  let width = 1;
  for (let p = 10; p <= n; p *= 10) width++;
  return width;
}

/**
 * `bytes` at `pos`; returns the position after them. A plain loop: for a
 * few bytes, the calls of `set` and `Buffer.copy` cost more than the copy.
 */
export function copyBytes(buf: Uint8Array, pos: number, bytes: Uint8Array): number {
  const end = pos + bytes.length;
  for (let i = 0; pos < end; ) buf[pos++] = bytes[i++]!;
  return end;
}

/** `text`, which must be ASCII, at `pos`; returns the position after it. */
export function writeAscii(buf: Uint8Array, pos: number, text: string): number {
  for (let i = 0; i < text.length; i++) buf[pos + i] = text.charCodeAt(i);
  return pos + text.length;
}
