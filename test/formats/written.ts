import { expect } from 'vitest';

const SENTINEL = 0xff;

/**
 * The text `write` puts at `offset` of a buffer with room for `max` bytes
 * and one sentinel after them, checking it stays within `max` bytes and
 * leaves the sentinel alone.
 */
export function writtenText(write: (buf: Buffer, pos: number) => number, max: number, offset: number): string {
  const buf = Buffer.alloc(offset + max + 1, SENTINEL);
  const end = write(buf, offset);
  expect(end - offset).toBeLessThanOrEqual(max);
  expect(buf[end]).toBe(SENTINEL);
  return buf.toString('latin1', offset, end);
}
