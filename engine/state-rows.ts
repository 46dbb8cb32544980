/**
 * An open split's inline rows as a metric state of version 5 stores them
 * (engine/metric-state.ts), where the raw split form took 8 bytes a value
 * and 8 of header: a settled quiet metric keeps one row per granularity,
 * 25 bytes raw for one method. Timestamps as periods from the one before
 * (the first from `ref`: the inline chunk's first timestamp or the split
 * key); each value of the first column against the row before's, of the
 * others against the column before's in the same row (a period of one
 * point has the same mean, min, max and sum); then the masks as the raw
 * form has them. Processing merges into the raw form, so a decode rebuilds
 * it.
 */
import { MAX_NUMBER_BYTES, NumberReader, writeOffset, writeValue } from './state-numbers.js';
import { allocRawSplit, rawColumnCount, rawMasksOffset, rawRowCount, rawValueOffset } from './split.js';

const DOUBLE = new Float64Array(1);
const DOUBLE_BYTES = new Uint8Array(DOUBLE.buffer);

/** The double at `at` of `bytes` (little-endian, as the raw form stores it), without a view per read. */
function doubleAt(bytes: Uint8Array, at: number): number {
  for (let b = 0; b < 8; b++) DOUBLE_BYTES[b] = bytes[at + b]!;
  return DOUBLE[0]!;
}

/** Row `row` of column `column` (-1: the timestamps) of the raw split `raw`. */
export function rawCell(raw: Uint8Array, column: number, row: number): number {
  return doubleAt(raw, rawValueOffset(rawRowCount(raw), column, row));
}

/** Bytes the rows of `raw` take written, at most. */
export function stateRowsBound(raw: Uint8Array): number {
  const n = rawRowCount(raw);
  const ncols = rawColumnCount(raw);
  return MAX_NUMBER_BYTES * n * (1 + ncols) + raw.length - rawMasksOffset(n, ncols);
}

/** Writes the rows of the raw split `raw` at `at` (their count is the caller's to write); the offset after them. */
export function writeStateRows(out: Buffer, at: number, raw: Uint8Array, ref: number, granularity: number): number {
  const n = rawRowCount(raw);
  const ncols = rawColumnCount(raw);
  let before = ref;
  for (let r = 0; r < n; r++) {
    const ts = doubleAt(raw, rawValueOffset(n, -1, r));
    at = writeOffset(out, at, ts, before, granularity);
    before = ts;
  }
  for (let c = 0; c < ncols; c++) {
    for (let r = 0; r < n; r++) {
      const base = c > 0 ? doubleAt(raw, rawValueOffset(n, c - 1, r)) : r > 0 ? doubleAt(raw, rawValueOffset(n, 0, r - 1)) : Number.NaN;
      at = writeValue(out, at, doubleAt(raw, rawValueOffset(n, c, r)), base);
    }
  }
  const masks = rawMasksOffset(n, ncols);
  out.set(raw.subarray(masks), at);
  return at + raw.length - masks;
}

/** The raw split of `n` rows of `ncols` columns that writeStateRows wrote from `r.at`; leaves `r` after them. */
export function readStateRows(r: NumberReader, bytes: Buffer, n: number, ncols: number, ref: number, granularity: number): Buffer {
  // The masks come last: their size, hence the raw split's, is known only once the values are read.
  // Column after column as the raw form has them, timestamps first.
  const cells = new Float64Array(n * (1 + ncols));
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
  raw.set(new Uint8Array(cells.buffer), rawValueOffset(n, -1, 0));
  bytes.copy(raw, rawMasksOffset(n, ncols), r.at, at);
  r.at = at;
  return raw;
}
