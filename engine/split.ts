/**
 * Splits: the aggregates of one (metric, granularity) over a fixed window of
 * POINTS_PER_SPLIT periods, one timestamp column and one column per method.
 * The newest split of a series is still receiving points, so it is kept raw
 * (typed arrays copied verbatim, cheap to rewrite) in the metric's state;
 * once a newer split starts it is sealed into the compressed Arrow form,
 * encoded exactly once.
 */
import { compactRowCount, decodeSplit, encodeCompactSplit, encodeSplit, growCompactSplit, type SplitColumns } from '../formats/split-codec.js';
import { freshFloat64, type Float64Alloc } from './scratch.js';

export type { SplitColumns };

export const POINTS_PER_SPLIT = 3600;

const TAG_RAW = 0x52; // 'R'
const TAG_SEALED = 0x41; // 'A'
const RAW_HEADER = 8;

export function splitKeyOf(timestamp: number, granularity: number): number {
  const span = granularity * POINTS_PER_SPLIT;
  return Math.floor(timestamp / span) * span;
}

export function encodeRawSplit(data: SplitColumns): Buffer {
  const n = data.timestamps.length;
  const ncols = data.columns.length;
  let size = RAW_HEADER + 8 * n * (1 + ncols) + ncols;
  for (const p of data.present) if (p !== null) size += n;
  const out = Buffer.allocUnsafe(size);
  out[0] = TAG_RAW;
  out[1] = ncols;
  out.writeUInt16LE(0, 2);
  out.writeUInt32LE(n, 4);
  let offset = putFloats(out, RAW_HEADER, data.timestamps);
  for (const col of data.columns) offset = putFloats(out, offset, col);
  for (const p of data.present) {
    const allPresent = p === null || isFullMask(p);
    out[offset++] = allPresent ? 0 : 1;
    if (!allPresent) {
      out.set(p, offset);
      offset += n;
    }
  }
  // Shorter only when a mask given was full.
  return offset === size ? out : out.subarray(0, offset);
}

/**
 * A raw split of `n` rows and `ncols` columns, `masked` of them with a
 * mask, its header written: for a caller that writes its values at
 * rawValueOffset and its masks from rawMasksOffset (a metric state
 * rebuilding its open split's rows, engine/state-rows.ts).
 */
export function allocRawSplit(n: number, ncols: number, masked: number): Buffer {
  const out = Buffer.allocUnsafe(RAW_HEADER + 8 * n * (1 + ncols) + ncols + masked * n);
  out[0] = TAG_RAW;
  out[1] = ncols;
  out.writeUInt16LE(0, 2);
  out.writeUInt32LE(n, 4);
  return out;
}

/** Where row `row` of column `column` (-1: the timestamps) sits in a raw split of `n` rows. */
export function rawValueOffset(n: number, column: number, row: number): number {
  return RAW_HEADER + 8 * (n * (column + 1) + row);
}

/** Where the masks of a raw split of `n` rows start: per column a flag, then its `n` bytes when the flag is 1. */
export function rawMasksOffset(n: number, ncols: number): number {
  return RAW_HEADER + 8 * n * (ncols + 1);
}

/** Row `row` of `data` as a raw split: encodeRawSplit of that row, without a view per column to slice it. */
export function encodeRawRow(data: SplitColumns, row: number): Buffer {
  const ncols = data.columns.length;
  let masked = 0;
  for (const p of data.present) if (p !== null && p[row] !== 1) masked++;
  const out = Buffer.allocUnsafe(RAW_HEADER + 8 * (1 + ncols) + ncols + masked);
  out[0] = TAG_RAW;
  out[1] = ncols;
  out.writeUInt16LE(0, 2);
  out.writeUInt32LE(1, 4);
  out.writeDoubleLE(data.timestamps[row]!, RAW_HEADER);
  for (let c = 0; c < ncols; c++) out.writeDoubleLE(data.columns[c]![row]!, RAW_HEADER + 8 * (1 + c));
  let offset = RAW_HEADER + 8 * (1 + ncols);
  for (const p of data.present) {
    // A one-row mask is full (left out) or holds the one 0.
    const absent = p !== null && p[row] !== 1;
    out[offset++] = absent ? 1 : 0;
    if (absent) out[offset++] = p[row]!;
  }
  return out;
}

/**
 * Columns of up to this many values are written value by value: a byte view
 * per column cost more (an open split's new rows, a metric state's short
 * tail: a few), as it first moves a small array's memory off V8's heap.
 */
const SHORT_COLUMN = 32;

/** Writes `values` little-endian into `out` from `at`; the offset after them. */
export function putFloats(out: Buffer, at: number, values: Float64Array): number {
  if (values.length > SHORT_COLUMN) {
    out.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), at);
    return at + values.byteLength;
  }
  for (let i = 0; i < values.length; i++, at += 8) out.writeDoubleLE(values[i]!, at);
  return at;
}

/** Whether a column's mask marks a value in every row (its mask can then be left out). */
export function isFullMask(mask: Uint8Array): boolean {
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 1) return false;
  return true;
}

function everyNull(masks: readonly (Uint8Array | null)[]): boolean {
  for (const mask of masks) if (mask !== null) return false;
  return true;
}

/** Whether no column of a raw split has a mask. */
function rawHasNoMask(bytes: Uint8Array, ncols: number, n: number): boolean {
  let offset = RAW_HEADER + 8 * n * (ncols + 1);
  for (let c = 0; c < ncols; c++, offset++) if (bytes[offset] !== 0) return false;
  return true;
}

/** Whether stored split bytes are a raw (open) split rather than a sealed one. */
export const isRawSplit = (bytes: Uint8Array) => bytes[0] === TAG_RAW;

/**
 * Why `raw` is not a raw split of `ncols` columns, or null. For checking
 * stored bytes before decoding them: the decoder trusts the layout.
 */
export function rawSplitProblem(raw: Uint8Array, ncols: number): string | null {
  if (raw.length < RAW_HEADER) return `${raw.length} bytes: shorter than a raw split header`;
  if (raw[0] !== TAG_RAW) return `tag ${raw[0]} is not a raw split's`;
  if (raw[1] !== ncols) return `${raw[1]} columns, the policy has ${ncols} methods`;
  const n = rawRowCount(raw);
  let offset = RAW_HEADER + 8 * n * (ncols + 1);
  for (let c = 0; c < ncols; c++) {
    if (offset >= raw.length) break;
    offset += raw[offset] === 0 ? 1 : 1 + n;
  }
  return offset === raw.length ? null : `${raw.length} bytes where ${n} rows of ${ncols} columns take ${offset}`;
}

/** The number of value columns of a raw split. */
export function rawColumnCount(raw: Uint8Array): number {
  return raw[1]!;
}

/** The number of rows of a raw split (read in place: processing asks for it several times per metric update). */
export function rawRowCount(raw: Uint8Array): number {
  return (raw[4]! | (raw[5]! << 8) | (raw[6]! << 16) | (raw[7]! << 24)) >>> 0;
}

/** The first timestamp of a raw split that has rows. */
export function rawFirstTimestamp(raw: Uint8Array): number {
  return rawTimestamp(raw, 0);
}

/** Row i's timestamp of a raw split. */
function rawTimestamp(raw: Uint8Array, i: number): number {
  return floatAt(raw, RAW_HEADER + 8 * i);
}

/** Row `row` of column `column` (-1: the timestamps) of a raw split. */
export function rawCell(raw: Uint8Array, column: number, row: number): number {
  return floatAt(raw, rawValueOffset(rawRowCount(raw), column, row));
}

/** The float at `at` of a raw split, through one shared float's bytes (little-endian, as copyRawColumn has them), not a DataView per call: asked on every update of an open split. */
function floatAt(raw: Uint8Array, at: number): number {
  for (let b = 0; b < 8; b++) FLOAT_BYTES[b] = raw[at + b]!;
  return FLOAT[0]!;
}

const FLOAT = new Float64Array(1);
const FLOAT_BYTES = new Uint8Array(FLOAT.buffer);
/** The columns a decode with `only` leaves out: never written to (no rows). */
const EMPTY_COLUMN = new Float64Array(0);

/**
 * Copies the timestamps (`column` -1) or one column of a raw split into
 * `out` from `at`; the rows copied.
 */
export function copyRawColumn(raw: Uint8Array, column: number, out: Float64Array, at: number): number {
  const n = rawRowCount(raw);
  const from = RAW_HEADER + 8 * n * (column + 1);
  if (n <= SHORT_COLUMN) {
    // Value by value through one float's bytes: two views per column cost more (a freeze decodes its ~16 rows per column).
    for (let i = 0, b = from; i < n; i++) {
      for (let k = 0; k < 8; k++) FLOAT_BYTES[k] = raw[b++]!;
      out[at + i] = FLOAT[0]!;
    }
    return n;
  }
  new Uint8Array(out.buffer, out.byteOffset + 8 * at, 8 * n).set(raw.subarray(from, from + 8 * n));
  return n;
}

/**
 * Raw splits whose rows follow one another, decoded as one split (with
 * `only`, just that column, the others left empty): one copy per column,
 * straight from the stored bytes.
 */
export function decodeRawSplits(raws: Uint8Array[], only?: number, alloc: Float64Alloc = freshFloat64): SplitColumns {
  const ncols = raws[0]![1]!;
  let n = 0;
  for (const raw of raws) n += rawRowCount(raw);
  const timestamps = alloc(n);
  let at = 0;
  for (const raw of raws) at += copyRawColumn(raw, -1, timestamps, at);
  // Loops, no closure per column: a freeze decodes an open split's rows this way every CHUNK_ROWS - 1 rows.
  const masks: number[][] = new Array(raws.length);
  for (let r = 0; r < raws.length; r++) masks[r] = maskOffsets(raws[r]!, ncols, rawRowCount(raws[r]!));
  const columns: Float64Array[] = new Array(ncols);
  const present: (Uint8Array | null)[] = new Array(ncols);
  for (let c = 0; c < ncols; c++) {
    if (only !== undefined && only !== c) {
      columns[c] = EMPTY_COLUMN;
      present[c] = null;
      continue;
    }
    const column = alloc(n);
    let mask: Uint8Array | null = null;
    at = 0;
    for (let r = 0; r < raws.length; r++) {
      const raw = raws[r]!;
      const rows = copyRawColumn(raw, c, column, at);
      const flag = masks[r]![c]!;
      if (raw[flag] !== 0) {
        mask ??= new Uint8Array(n).fill(1, 0, at);
        mask.set(raw.subarray(flag + 1, flag + 1 + rows), at);
      } else mask?.fill(1, at, at + rows);
      at += rows;
    }
    columns[c] = column;
    present[c] = mask;
  }
  return { timestamps, columns, present };
}

function rawLayout(bytes: Uint8Array): { ncols: number; n: number; view: DataView } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { ncols: bytes[1]!, n: view.getUint32(4, true), view };
}

/** Offset of each column's presence flag (and mask, when the flag is 1) in a raw split. */
function maskOffsets(bytes: Uint8Array, ncols: number, n: number): number[] {
  const offsets: number[] = [];
  let offset = RAW_HEADER + 8 * n * (ncols + 1);
  for (let c = 0; c < ncols; c++) {
    offsets.push(offset);
    offset += bytes[offset] === 0 ? 1 : 1 + n;
  }
  return offsets;
}

/**
 * Decodes rows [from, to) of a raw split; with `only`, copies just that
 * column (and the timestamps), leaving the others empty: a read needs one
 * method.
 */
function decodeRawRows(bytes: Uint8Array, from: number, to: number, only?: number): SplitColumns {
  const { ncols, n } = rawLayout(bytes);
  const rows = to - from;
  const empty = new Float64Array(0);
  // Copy: LMDB buffers are not 8-byte aligned and are only valid briefly.
  const copy = (offset: number) => {
    const arr = new Float64Array(rows);
    new Uint8Array(arr.buffer).set(bytes.subarray(offset + 8 * from, offset + 8 * to));
    return arr;
  };
  const timestamps = copy(RAW_HEADER);
  const columns = Array.from({ length: ncols }, (_, c) =>
    only === undefined || only === c ? copy(RAW_HEADER + 8 * n * (c + 1)) : empty,
  );
  const present = maskOffsets(bytes, ncols, n).map((offset, c) =>
    bytes[offset] === 0 || (only !== undefined && only !== c) ? null : bytes.slice(offset + 1 + from, offset + 1 + to),
  );
  return { timestamps, columns, present };
}

/**
 * mergeIntoRawSplit's common case, without its per-row bookkeeping: no value
 * is absent, and the update starts after the old rows or at the last one,
 * which it replaces whole. Keeps the first `keep` old rows, then the update's.
 */
function appendRawRows(raw: Uint8Array, ncols: number, n: number, keep: number, update: SplitColumns): Buffer {
  const added = update.timestamps.length;
  const total = keep + added;
  const out = Buffer.allocUnsafe(RAW_HEADER + 8 * total * (ncols + 1) + ncols);
  copyBytes(raw, 0, RAW_HEADER, out, 0);
  out.writeUInt32LE(total, 4);
  for (let c = 0; c <= ncols; c++) {
    const from = RAW_HEADER + 8 * n * c;
    const to = RAW_HEADER + 8 * total * c;
    copyBytes(raw, from, from + 8 * keep, out, to);
    putFloats(out, to + 8 * keep, c === 0 ? update.timestamps : update.columns[c - 1]!);
  }
  out.fill(0, RAW_HEADER + 8 * total * (ncols + 1));
  return out;
}

/** Bytes copied one by one up to this many: below it a view per copy costs more than the copy. */
const SHORT_COPY = 256;

/** Copies bytes [start, end) of `from` into `to` from `at`. */
function copyBytes(from: Uint8Array, start: number, end: number, to: Uint8Array, at: number): void {
  if (end - start > SHORT_COPY) {
    to.set(from.subarray(start, end), at);
    return;
  }
  for (let i = start; i < end; i++) to[at++] = from[i]!;
}

// Scratch for mergeIntoRawSplit's row sources, reused: it runs once per
// granularity of every metric update.
let fromOld = new Int32Array(64);
let fromNew = new Int32Array(64);

/**
 * `mergeSplits` on the stored raw form: the rows before the update's first
 * timestamp are copied as bytes, and only the overlapping tail is merged,
 * value by value. Processing extends the open split this way on every
 * update, so its cost follows the update's size, not the split's.
 */
export function mergeIntoRawSplit(raw: Uint8Array, update: SplitColumns): Buffer {
  const ncols = rawColumnCount(raw);
  const n = rawRowCount(raw);
  if (update.columns.length !== ncols) throw new Error(`Split has ${ncols} columns, update ${update.columns.length}`);
  // Helpers at module level rather than closures: this runs for every open split of every metric update.
  const newTs = update.timestamps;
  let keep = 0;
  let hi = n;
  while (keep < hi) {
    const mid = (keep + hi) >>> 1;
    if (newTs.length === 0 || rawTimestamp(raw, mid) < newTs[0]!) keep = mid + 1;
    else hi = mid;
  }
  const replacesTail = keep === n || (keep === n - 1 && rawTimestamp(raw, keep) === newTs[0]);
  if (replacesTail && everyNull(update.present) && rawHasNoMask(raw, ncols, n)) {
    return appendRawRows(raw, ncols, n, keep, update);
  }
  // Rows merged one by one: rarer (a value absent, or points among the old rows), a DataView is worth it.
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  if (fromOld.length < n - keep + newTs.length) {
    fromOld = new Int32Array(2 * (n - keep + newTs.length));
    fromNew = new Int32Array(fromOld.length);
  }
  let m = 0;
  for (let i = keep, j = 0; i < n || j < newTs.length; m++) {
    const a = i < n ? rawTs(view, i) : Infinity;
    const b = j < newTs.length ? newTs[j]! : Infinity;
    fromOld[m] = a <= b ? i++ : -1;
    fromNew[m] = b <= a ? j++ : -1;
  }
  const total = keep + m;
  const oldMasks = maskOffsets(raw, ncols, n);
  let maskedCount = 0;
  const masked = new Uint8Array(ncols);
  for (let c = 0; c < ncols; c++) {
    const flag = oldMasks[c]!;
    let all = true;
    if (raw[flag] !== 0) for (let i = 0; i < keep && all; i++) all = oldPresent(raw, flag, i);
    for (let r = 0; r < m && all; r++) all = rowPresent(raw, flag, update.present[c], r);
    if (!all) {
      masked[c] = 1;
      maskedCount++;
    }
  }
  const out = Buffer.allocUnsafe(RAW_HEADER + 8 * total * (ncols + 1) + ncols + total * maskedCount);
  const outView = new DataView(out.buffer, out.byteOffset, out.byteLength);
  out[0] = TAG_RAW;
  out[1] = ncols;
  out.writeUInt16LE(0, 2);
  out.writeUInt32LE(total, 4);
  copyBytes(raw, RAW_HEADER, RAW_HEADER + 8 * keep, out, RAW_HEADER);
  for (let r = 0; r < m; r++) outView.setFloat64(RAW_HEADER + 8 * (keep + r), fromNew[r]! >= 0 ? newTs[fromNew[r]!]! : rawTs(view, fromOld[r]!), true);
  for (let c = 0; c < ncols; c++) {
    const oldColumn = RAW_HEADER + 8 * n * (c + 1);
    const newColumn = RAW_HEADER + 8 * total * (c + 1);
    const flag = oldMasks[c]!;
    const newMask = update.present[c];
    const values = update.columns[c]!;
    copyBytes(raw, oldColumn, oldColumn + 8 * keep, out, newColumn);
    for (let r = 0; r < m; r++) {
      const j = fromNew[r]!;
      const i = fromOld[r]!;
      let v = Number.NaN;
      if (j >= 0 && newPresent(newMask, j)) v = values[j]!;
      else if (i >= 0 && oldPresent(raw, flag, i)) v = view.getFloat64(oldColumn + 8 * i, true);
      outView.setFloat64(newColumn + 8 * (keep + r), v, true);
    }
  }
  let offset = RAW_HEADER + 8 * total * (ncols + 1);
  for (let c = 0; c < ncols; c++) {
    out[offset++] = masked[c]!;
    if (masked[c] === 0) continue;
    const flag = oldMasks[c]!;
    if (raw[flag] === 0) out.fill(1, offset, offset + keep);
    else copyBytes(raw, flag + 1, flag + 1 + keep, out, offset);
    for (let r = 0; r < m; r++) out[offset + keep + r] = rowPresent(raw, flag, update.present[c], r) ? 1 : 0;
    offset += total;
  }
  return out;
}

function rawTs(view: DataView, i: number): number {
  return view.getFloat64(RAW_HEADER + 8 * i, true);
}

/** Whether old row i has a value in the column whose presence flag is at `flag`. */
function oldPresent(raw: Uint8Array, flag: number, i: number): boolean {
  return raw[flag] === 0 || raw[flag + 1 + i] === 1;
}

function newPresent(mask: Uint8Array | null | undefined, j: number): boolean {
  return mask === null || mask === undefined || mask[j] === 1;
}

/** Whether merged row r (of mergeIntoRawSplit's fromNew/fromOld) has a value in the column. */
function rowPresent(raw: Uint8Array, flag: number, newMask: Uint8Array | null | undefined, r: number): boolean {
  return (fromNew[r]! >= 0 && newPresent(newMask, fromNew[r]!)) || (fromOld[r]! >= 0 && oldPresent(raw, flag, fromOld[r]!));
}

function tagged(body: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(body.length + 1);
  out[0] = TAG_SEALED;
  out.set(body, 1);
  return out;
}

export function encodeSealedSplit(key: number, granularity: number, data: SplitColumns): Buffer {
  return tagged(encodeSplit(key, granularity, data));
}

/**
 * Rows frozen out of an open split, in the codec's compact form (timestamps
 * counted from `key`). `earlier`: a stored chunk of the same split (the one
 * these rows grow, or the one before them), whose column plan the codec
 * reuses where it holds (see encodeCompactSplit).
 */
export function encodeFrozenRows(key: number, granularity: number, data: SplitColumns, earlier?: Uint8Array): Buffer {
  return tagged(encodeCompactSplit(key, granularity, data, earlier === undefined ? undefined : codecBytes(earlier)));
}

/** What the split codec wrote, inside a stored split of that form; undefined for another form (raw rows). */
function codecBytes(stored: Uint8Array): Uint8Array | undefined {
  return stored[0] === TAG_SEALED ? stored.subarray(1) : undefined;
}

/** Rows of a frozen chunk in the compact form, from its header; null for other forms. */
export function frozenRowCount(chunk: Uint8Array): number | null {
  const bytes = codecBytes(chunk);
  return bytes === undefined ? null : compactRowCount(bytes);
}

/**
 * A frozen chunk with `rows` (which follow its rows) appended, its earlier
 * rows left as stored (see growCompactSplit); null when they must be
 * encoded whole again.
 */
export function growFrozenRows(chunk: Uint8Array, key: number, granularity: number, rows: SplitColumns): Buffer | null {
  const bytes = codecBytes(chunk);
  const grown = bytes === undefined ? null : growCompactSplit(bytes, key, granularity, rows);
  return grown === null ? null : tagged(grown);
}

export function decodeStoredSplit(
  bytes: Uint8Array,
  key: number,
  granularity: number,
  ncols: number,
  only?: number,
): SplitColumns {
  if (bytes[0] === TAG_RAW) return decodeRawRows(bytes, 0, rawLayout(bytes).n, only);
  const encoded = codecBytes(bytes);
  if (encoded !== undefined) return decodeSplit(encoded, key, granularity, ncols, only);
  throw new Error(`Unknown split encoding tag ${bytes[0]}`);
}

function isPresent(data: SplitColumns, col: number, row: number): boolean {
  const p = data.present[col];
  return p === null || p === undefined || p[row] === 1;
}

/**
 * Overlays `update` on `existing`: per method, a value present in the update
 * replaces the stored one at the same timestamp (Gnocchi merges each method's
 * series with the new points winning).
 */
export function mergeSplits(existing: SplitColumns, update: SplitColumns): SplitColumns {
  const a = existing.timestamps;
  const b = update.timestamps;
  if (a.length === 0) return update;
  if (b.length === 0) return existing;
  if (b[0]! > a[a.length - 1]!) return concatRows([existing, update]);
  return overlaySplits(existing, update);
}

/**
 * Splits whose rows follow one another, as one. A column that some part
 * with rows leaves empty (decoded with `only`) stays empty.
 */
export function concatRows(parts: readonly SplitColumns[], alloc: Float64Alloc = freshFloat64): SplitColumns {
  const withRows = parts.filter((p) => p.timestamps.length > 0);
  if (withRows.length === 1 || parts.length === 1) return withRows[0] ?? parts[0]!;
  let n = 0;
  for (const p of withRows) n += p.timestamps.length;
  const timestamps = alloc(n);
  let at = 0;
  for (const p of withRows) {
    timestamps.set(p.timestamps, at);
    at += p.timestamps.length;
  }
  const empty = new Float64Array(0);
  const columns: Float64Array[] = [];
  const present: (Uint8Array | null)[] = [];
  for (let c = 0; c < parts[0]!.columns.length; c++) {
    if (n > 0 && withRows.some((p) => p.columns[c]!.length === 0)) {
      columns.push(empty);
      present.push(null);
      continue;
    }
    const column = alloc(n);
    const masked = withRows.some((p) => p.present[c] != null);
    const mask = masked ? new Uint8Array(n) : null;
    at = 0;
    for (const p of withRows) {
      column.set(p.columns[c]!, at);
      const m = p.present[c];
      if (mask !== null) {
        if (m == null) mask.fill(1, at, at + p.timestamps.length);
        else mask.set(m, at);
      }
      at += p.timestamps.length;
    }
    columns.push(column);
    present.push(mask);
  }
  return { timestamps, columns, present };
}

function overlaySplits(existing: SplitColumns, update: SplitColumns): SplitColumns {
  const a = existing.timestamps;
  const b = update.timestamps;
  const srcA = new Int32Array(a.length + b.length);
  const srcB = new Int32Array(a.length + b.length);
  const ts = new Float64Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]! < b[j]!)) { ts[n] = a[i]!; srcA[n] = i++; srcB[n++] = -1; }
    else if (i >= a.length || b[j]! < a[i]!) { ts[n] = b[j]!; srcA[n] = -1; srcB[n++] = j++; }
    else { ts[n] = a[i]!; srcA[n] = i++; srcB[n++] = j++; }
  }
  const columns: Float64Array[] = [];
  const present: (Uint8Array | null)[] = [];
  for (let c = 0; c < update.columns.length; c++) {
    const col = new Float64Array(n);
    const mask = new Uint8Array(n);
    let all = true;
    for (let r = 0; r < n; r++) {
      const jb = srcB[r]!;
      const ia = srcA[r]!;
      if (jb >= 0 && isPresent(update, c, jb)) { col[r] = update.columns[c]![jb]!; mask[r] = 1; }
      else if (ia >= 0 && isPresent(existing, c, ia)) { col[r] = existing.columns[c]![ia]!; mask[r] = 1; }
      else { col[r] = Number.NaN; all = false; }
    }
    columns.push(col);
    present.push(all ? null : mask);
  }
  return { timestamps: ts.subarray(0, n), columns, present };
}

/** Rows [from, to) of a split: views into it, or the split itself when that is every row. */
export function sliceSplit(data: SplitColumns, from: number, to: number): SplitColumns {
  // A freeze asks for every row it was given more often than not: a view per column each time cost more than the rest of it.
  if (from === 0 && to === data.timestamps.length) return data;
  return {
    timestamps: data.timestamps.subarray(from, to),
    columns: data.columns.map((c) => c.subarray(from, to)),
    present: data.present.map((p) => (p === null ? null : p.subarray(from, to))),
  };
}
