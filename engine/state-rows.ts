/**
 * An open split's only inline row as a metric state of version 5 stores it
 * (engine/metric-state.ts), where the raw split form took 8 bytes a value
 * and 8 of header: a settled quiet metric keeps one row per granularity,
 * 25 bytes raw for one method. Written for any number of rows. Timestamps
 * as periods from the one before (the first from `ref`: the inline chunk's
 * first timestamp or the split key); each value of the first column against the row before's, of the
 * others against the column before's in the same row (a period of one
 * point has the same mean, min, max and sum); then the masks as the raw
 * form has them. Processing merges into the raw form, so a decode rebuilds
 * it.
 */
import { MAX_NUMBER_BYTES, NumberReader, writeOffset, writeValue } from './state-numbers.js';
import { allocRawSplit, rawColumnCount, rawMasksOffset, rawRowCount, rawValueOffset } from './split.js';

/** Bytes the rows of a raw split of `rawLength` bytes take written, at most: each 8-byte cell as a number of this form, the masks as they are. */
export function stateRowsBound(rawLength: number): number {
  return Math.ceil((rawLength * MAX_NUMBER_BYTES) / 8);
}

/** A raw split's cells as doubles, reused: copied out of its bytes to be written, or read to be copied into them (per open split of every state written or read). */
let cells = new Float64Array(256);
let cellBytes = new Uint8Array(cells.buffer);

/** `cells` with room for `count` doubles. */
function cellsFor(count: number): Float64Array {
  if (count > cells.length) {
    cells = new Float64Array(2 * count);
    cellBytes = new Uint8Array(cells.buffer);
  }
  return cells;
}

/** Writes the rows of the raw split `raw` at `at` (their count is the caller's to write); the offset after them. */
export function writeStateRows(out: Buffer, at: number, raw: Uint8Array, ref: number, granularity: number): number {
  const n = rawRowCount(raw);
  const ncols = rawColumnCount(raw);
  const count = n * (1 + ncols);
  const cells = cellsFor(count);
  // One copy through a plain view: byte by byte cost more than the rest of the write.
  cellBytes.set(new Uint8Array(raw.buffer, raw.byteOffset + rawValueOffset(n, -1, 0), 8 * count));
  let before = ref;
  for (let r = 0; r < n; r++) {
    at = writeOffset(out, at, cells[r]!, before, granularity);
    before = cells[r]!;
  }
  for (let c = 0; c < ncols; c++) {
    const column = n * (c + 1);
    for (let r = 0; r < n; r++) {
      const base = c > 0 ? cells[column - n + r]! : r > 0 ? cells[column + r - 1]! : Number.NaN;
      at = writeValue(out, at, cells[column + r]!, base);
    }
  }
  const masks = rawMasksOffset(n, ncols);
  for (let i = masks; i < raw.length; i++) out[at++] = raw[i]!;
  return at;
}

/** The raw split of `n` rows of `ncols` columns that writeStateRows wrote from `r.at`; leaves `r` after them. */
export function readStateRows(r: NumberReader, bytes: Buffer, n: number, ncols: number, ref: number, granularity: number): Buffer {
  // The masks come last: their size, hence the raw split's, is known only once the values are read.
  // Column after column as the raw form has them, timestamps first.
  const count = n * (1 + ncols);
  const cells = cellsFor(count);
  let before = ref;
  for (let i = 0; i < n; i++) before = cells[i] = r.offset(before, granularity);
  for (let c = 0; c < ncols; c++) {
    const from = n * (c + 1);
    for (let i = 0; i < n; i++) {
      const base = c > 0 ? cells[from - n + i]! : i > 0 ? cells[from + i - 1]! : Number.NaN;
      cells[from + i] = r.value(base);
    }
  }
  let masked = 0;
  let at = r.at;
  for (let c = 0; c < ncols; c++) {
    if (bytes[at] === 0) at++;
    else {
      masked++;
      at += 1 + n;
    }
  }
  const raw = allocRawSplit(n, ncols, masked);
  raw.set(new Uint8Array(cells.buffer, 0, 8 * count), rawValueOffset(n, -1, 0));
  bytes.copy(raw, rawMasksOffset(n, ncols), r.at, at);
  r.at = at;
  return raw;
}
