/**
 * Codec for a sealed split: the aggregates of one (metric, granularity) over
 * one fixed window, as one Arrow IPC record batch with ZSTD body compression.
 *
 * Layout of an encoded split (format version 1):
 *
 *   u8      format version
 *   u32le   CRC-32 of every byte after this field
 *   varint  value column count
 *   per value column: u8 encoding id, then that encoding's parameters
 *   Arrow IPC record-batch message (no schema message: the schema is fixed
 *   by the column count and rebuilt on decode)
 *
 * Column 0 of the batch is a non-null Uint32 of timestamp steps: the first is
 * the offset of the first row from the split key, the next ones the gap to
 * the previous row, all in units of the granularity. Value columns are
 * nullable Uint64 whose validity is the presence mask and whose 8n data bytes
 * depend on the column's encoding:
 *
 *   0 raw        the 64-bit patterns of the values
 *   1 bytesplit  the same, byte-split: byte k of every word together, so
 *                that the slowly varying bytes sit side by side for ZSTD
 *   2 xor        each pattern XOR the previous present one, byte-split
 *   3 delta      decimal mantissa deltas and residuals, byte-split
 *   4 constant   zeros; the header holds the one pattern
 *   5 same       zeros; the values of an earlier column
 *   6 quotient   zeros; row by row, one column divided by another
 *
 * Zeros compress to a few bytes; absent rows hold zeros too.
 *
 * Format version 2 (`encodeCompactSplit`) holds the same columns without
 * Arrow's container, whose message metadata and per-buffer frames cost
 * ~290 bytes: as much as a few hundred rows of a decimal gauge. It is for
 * short runs of rows (an open split's frozen chunks):
 *
 *   u8      format version (2)
 *   u32le   CRC-32 of every byte after this field
 *   varint  value column count
 *   per value column: u8 encoding id, then that encoding's parameters
 *   varint  row count n
 *   per value column: varint count of absent rows
 *   one ZSTD frame: the 4n bytes of timestamp steps, then per value column
 *   its 8n data bytes, then per column with absent rows its validity bitmap
 */
import { crc32 } from '@node-rs/crc32';
import {
  CompressionType,
  Field,
  MessageHeader,
  MessageReader,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Uint32,
  Uint64,
  compressionRegistry,
  makeData,
  type Data,
} from 'apache-arrow';
import { Compressor, Decompressor } from 'zstd-napi';
import { MAX_VARUINT_BYTES, readVaruint, writeVaruint } from './varint.js';
import { grown } from './grown.js';

export interface SplitColumns {
  /** Ascending, each >= key, `(ts - key)` a multiple of the granularity. */
  timestamps: Float64Array;
  /** One per aggregation method, each as long as `timestamps`. */
  columns: Float64Array[];
  /**
   * Per column: null when every row holds a value, else 1/0 per row. The
   * value of an absent row is ignored on encode and decodes as 0; decode
   * returns null for a column whose rows are all present.
   */
  present: (Uint8Array | null)[];
}

/** How a value column was stored; `splitEncodings` reports them. */
export type ColumnEncoding = 'raw' | 'bytesplit' | 'xor' | 'delta' | 'constant' | 'same' | 'quotient';

/** The bytes are not a split this codec can read as asked. */
export class CorruptSplitError extends Error {
  override readonly name = 'CorruptSplitError';
}

const FORMAT_VERSION = 1;
const COMPACT_FORMAT_VERSION = 2;
const CRC_OFFSET = 1;
const CRC_END = CRC_OFFSET + 4;

// Ids are stored: append new ones, never renumber.
const RAW = 0;
const BYTESPLIT = 1;
const XOR = 2;
const DELTA = 3;
const CONSTANT = 4;
const SAME = 5;
const QUOTIENT = 6;
const ENCODING_NAMES: readonly ColumnEncoding[] = ['raw', 'bytesplit', 'xor', 'delta', 'constant', 'same', 'quotient'];

type ColumnParams =
  | { id: typeof RAW | typeof BYTESPLIT | typeof XOR }
  | { id: typeof CONSTANT; lo: number; hi: number }
  | { id: typeof SAME; column: number }
  | { id: typeof DELTA; decimals: number; residualBits: number }
  | { id: typeof QUOTIENT; dividend: number; divisor: number };

// Level 3 is ZSTD's default; higher levels barely shrink byte-split planes
// and slow down the encode of every sealed split.
const ZSTD_LEVEL = 3;
// Literals rather than 10 ** d, so that encoder and decoder divide by the
// same exact doubles whatever the engine's pow does.
const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];
const MAX_DECIMALS = POW10.length - 1;
// Keeps |delta| <= 2^52 and its zigzag <= 2^53, exact in a double.
const MAX_MANTISSA = 2 ** 51;
// A decimal mantissa may miss the stored double by this many units in the
// last place: enough for the rounding of a sum of decimals, too few for a
// coarser scale to pass for the right one.
const MAX_RESIDUAL_BITS = 13;
const MAX_RESIDUAL = 2 ** (MAX_RESIDUAL_BITS - 1);
const TWO_32 = 2 ** 32;
const TWO_53 = 2 ** 53;

const compressor = new Compressor();
compressor.setParameters({ compressionLevel: ZSTD_LEVEL });

function compressedSize(bytes: Uint8Array): number {
  return compressor.compress(bytes).length;
}

// apache-arrow ships no codecs and its registry is process-wide: register
// ZSTD once, and leave any codec another module registered first in place
// (every ZSTD codec reads every other's frames).
if (compressionRegistry.get(CompressionType.ZSTD) === null) {
  const decompressor = new Decompressor();
  compressionRegistry.set(CompressionType.ZSTD, {
    encode: (bytes) => compressor.compress(bytes),
    decode: (bytes) => decompressor.decompress(bytes),
  });
}

const TIMESTAMP_TYPE = new Uint32();
const VALUE_TYPE = new Uint64();

interface BatchShape {
  schema: Schema;
  struct: Struct;
}

const shapes = new Map<number, BatchShape>();

function shapeFor(columnCount: number): BatchShape {
  let shape = shapes.get(columnCount);
  if (shape === undefined) {
    const fields: Field[] = [new Field('t', TIMESTAMP_TYPE, false)];
    for (let j = 0; j < columnCount; j++) fields.push(new Field(`v${j}`, VALUE_TYPE, true));
    shape = { schema: new Schema(fields), struct: new Struct(fields) };
    shapes.set(columnCount, shape);
  }
  return shape;
}

/** Writes our header then one record-batch message, and nothing else. */
class BareBatchWriter extends RecordBatchStreamWriter {
  static encode(header: Uint8Array, batch: RecordBatch): Uint8Array {
    const writer = new BareBatchWriter({ compressionType: CompressionType.ZSTD });
    writer.reset(undefined, batch.schema);
    writer._write(header);
    writer.write(batch);
    writer.finish();
    return writer.toUint8Array(true);
  }

  protected override _writeSchema(): this {
    return this;
  }

  protected override _writeFooter(): this {
    return this;
  }
}

interface PlannedSplit {
  header: ByteWriter;
  stored: Uint8Array[];
}

/**
 * Writes the header up to the column parameters and plans each column (of a
 * split whose shapes are checked): its 8n bytes go to `body` from `at`
 * (column j at at + 8nj), or without a body into arrays of their own.
 */
function planSplit(version: number, data: SplitColumns, body: Uint8Array | null, at: number, earlier: ColumnParams[] | null = null): PlannedSplit {
  const plans = planColumns(data, body, at, earlier);
  const header = new ByteWriter();
  writeHeaderStart(header, version, plans.map(({ params }) => params));
  return { header, stored: plans.map(({ stored }) => stored) };
}

/** A split's header up to its column parameters, the checksum left 0 (see sealWithCrc). */
function writeHeaderStart(header: ByteWriter, version: number, params: ColumnParams[]): void {
  header.u8(version);
  header.u32(0);
  header.varint(params.length);
  for (const p of params) writeParams(header, p);
}

function checkShapes({ timestamps, columns, present }: SplitColumns): void {
  const n = timestamps.length;
  if (present.length !== columns.length) {
    throw new RangeError(`${columns.length} columns but ${present.length} presence masks`);
  }
  for (let j = 0; j < columns.length; j++) {
    if (columns[j].length !== n || (present[j] !== null && present[j]!.length !== n)) {
      throw new RangeError(`column ${j} does not have ${n} rows`);
    }
  }
}

function sealWithCrc(bytes: Uint8Array): Uint8Array {
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(CRC_OFFSET, crc32(bytes.subarray(CRC_END)), true);
  return bytes;
}

export function encodeSplit(key: number, granularity: number, data: SplitColumns): Uint8Array {
  checkShapes(data);
  const { header, stored } = planSplit(FORMAT_VERSION, data, null, 0);
  const steps = timestampSteps(key, granularity, data.timestamps, new Uint32Array(data.timestamps.length));
  const n = steps.length;
  const children: Data[] = [makeData({ type: TIMESTAMP_TYPE, length: n, data: steps })];
  stored.forEach((words, j) => {
    const mask = data.present[j];
    const nullCount = mask === null ? 0 : n - countPresent(mask);
    children.push(makeData({
      type: VALUE_TYPE,
      length: n,
      nullCount,
      ...(nullCount > 0 ? { nullBitmap: validityBitmap(mask!) } : {}),
      data: new BigUint64Array(words.buffer, words.byteOffset, n),
    }));
  });
  const { schema, struct } = shapeFor(stored.length);
  const batch = new RecordBatch(schema, makeData({ type: struct, length: n, children }));
  return sealWithCrc(BareBatchWriter.encode(header.bytes(), batch));
}

/** encodeCompactSplit's uncompressed body; 8-byte aligned for the timestamp steps' Uint32 view. */
let compactBodyBuffer = new Uint8Array(0);

function compactBody(size: number): Uint8Array {
  compactBodyBuffer = grown(compactBodyBuffer, size);
  return compactBodyBuffer.subarray(0, size);
}

/**
 * The same split in format version 2: smaller by Arrow's container, for short
 * runs of rows. `earlier`: an encoded split of the same series (the chunk a
 * freeze grows, or the one before a new chunk), whose column plan is reused
 * where it holds for these rows (see planColumns).
 */
export function encodeCompactSplit(key: number, granularity: number, data: SplitColumns, earlier?: Uint8Array): Uint8Array {
  checkShapes(data);
  const plan = earlier === undefined ? firstRowsPlan(data) : earlierParams(earlier, data.columns.length);
  const n = data.timestamps.length;
  const nullCounts = data.present.map((mask) => (mask === null ? 0 : n - countPresent(mask)));
  const bitmapBytes = (n + 7) >> 3;
  const columnsEnd = 4 * n + 8 * n * data.columns.length;
  let size = columnsEnd;
  for (const c of nullCounts) if (c > 0) size += bitmapBytes;
  // The body is laid out as it is compressed, and compressed before this
  // returns: one buffer kept for every encode rather than an array per column
  // and their concatenation (a processing thread encodes a chunk per freeze).
  const body = compactBody(size);
  const { header } = planSplit(COMPACT_FORMAT_VERSION, data, body, 4 * n, plan);
  timestampSteps(key, granularity, data.timestamps, new Uint32Array(body.buffer, body.byteOffset, n));
  header.varint(n);
  let at = columnsEnd;
  nullCounts.forEach((nullCount, j) => {
    header.varint(nullCount);
    if (nullCount === 0) return;
    validityBitmap(data.present[j]!, body.subarray(at, at + bitmapBytes));
    at += bitmapBytes;
  });
  return sealCompact(header.bytes(), body);
}

/** A compact split from its header and its uncompressed body. */
function sealCompact(head: Uint8Array, body: Uint8Array): Uint8Array {
  const compressed = compressor.compress(body);
  const out = new Uint8Array(head.length + compressed.length);
  out.set(head);
  out.set(compressed, head.length);
  return sealWithCrc(out);
}

/**
 * Rows of a compact split without an earlier plan whose layouts are costed;
 * the others are encoded on their plan (see planColumns), as the later
 * chunks of an open split are on the plan of the chunk before. The first
 * chunk of a collector's series often holds a backlog of hundreds of rows,
 * whose costing was most of a processing thread's planning.
 */
const PLANNED_ROWS = 64;

/** The plan of the first PLANNED_ROWS rows, or null for fewer rows than that (planned whole). */
function firstRowsPlan(data: SplitColumns): ColumnParams[] | null {
  if (data.timestamps.length <= PLANNED_ROWS) return null;
  const first = {
    timestamps: data.timestamps.subarray(0, PLANNED_ROWS),
    columns: data.columns.map((c) => c.subarray(0, PLANNED_ROWS)),
    present: data.present.map((p) => (p === null ? null : p.subarray(0, PLANNED_ROWS))),
  };
  // Their bytes go to the body buffer, which the whole split's then overwrite.
  return planColumns(first, compactBody(8 * PLANNED_ROWS * data.columns.length), 0, null).map(({ params }) => params);
}

/** Rows of a compact split, from its header (not checked against its checksum); null for another format version. */
export function compactRowCount(bytes: Uint8Array): number | null {
  if (bytes.length < CRC_END || bytes[0] !== COMPACT_FORMAT_VERSION) return null;
  const header = new HeaderReader(bytes.subarray(CRC_END));
  const columnCount = header.varint();
  readAllParams(header, columnCount);
  return header.varint();
}

/**
 * A compact split (`earlier`) with `rows`, which follow its last row,
 * appended: the bytes encodeCompactSplit(key, granularity, all rows,
 * earlier) gives, without decoding the earlier rows or planning them
 * again. Their stored bytes stay as they are (but for a decimal column's
 * words, repacked when the new rows' residuals need more bits); the new
 * rows are checked against each column's plan and encoded after them. Null
 * when that cannot be done (a plan that no longer holds, the plain layout,
 * another format version): encode the rows whole.
 */
export function growCompactSplit(earlier: Uint8Array, key: number, granularity: number, rows: SplitColumns): Uint8Array | null {
  const header = new HeaderReader(readChecked(earlier));
  if (earlier[0] !== COMPACT_FORMAT_VERSION) return null;
  const columnCount = header.varint();
  if (columnCount !== rows.columns.length) throw new CorruptSplitError(`split has ${columnCount} value columns, expected ${rows.columns.length}`);
  const params = readAllParams(header, columnCount);
  const paramsEnd = CRC_END + header.offset;
  checkShapes(rows);
  const words = rows.columns.map(wordsOf);
  if (params.some((p) => p.id === RAW) || !derivedStillHold(rows, words, params)) return null;
  const old = readCompactBody(header, earlier, columnCount);
  const n = old.n;
  const m = rows.timestamps.length;
  const total = n + m;
  const nullCounts = params.map((_, j) => old.nullCount(j + 1) + (rows.present[j] === null ? 0 : m - countPresent(rows.present[j]!)));
  const bitmapBytes = (total + 7) >> 3;
  const columnsEnd = 4 * total + 8 * total * columnCount;
  let size = columnsEnd;
  for (const c of nullCounts) if (c > 0) size += bitmapBytes;
  const body = compactBody(size);
  const steps = new Uint32Array(body.buffer, body.byteOffset, total);
  body.set(old.buffer(1));
  let last = 0;
  for (let i = 0; i < n; i++) last += steps[i];
  timestampSteps(key, granularity, rows.timestamps, steps.subarray(n), n === 0 ? undefined : last);
  let paramsChanged = false;
  for (let j = 0; j < columnCount; j++) {
    const at = 4 * total + 8 * total * j;
    const planes = body.subarray(at, at + 8 * total);
    const p = params[j];
    if (decodePhase(p) > 0 || p.id === CONSTANT) {
      planes.fill(0);
      continue;
    }
    const stored = old.buffer(2 * j + 3);
    const grown = grownWords(p, stored, n, old.nullCount(j + 1) > 0 ? presenceMask(old.buffer(2 * j + 2), n) : null, rows.columns[j], words[j], rows.present[j]);
    if (grown === null) return null;
    if (grown.repacked === undefined) {
      // Byte by byte: a view per plane, 8 a column, cost more than copying a chunk's few dozen rows.
      for (let k = 0; k < 8; k++) for (let i = 0, from = k * n, to = k * total; i < n; i++) planes[to + i] = stored[from + i];
    } else {
      byteSplit(grown.repacked, planes, total, 0);
      params[j] = grown.params;
      paramsChanged = true;
    }
    byteSplit(grown.added, planes, total, n);
  }
  let at = columnsEnd;
  for (let j = 0; j < columnCount; j++) {
    if (nullCounts[j] === 0) continue;
    const bitmap = body.subarray(at, at + bitmapBytes);
    bitmap.fill(0);
    const oldBitmap = old.nullCount(j + 1) > 0 ? old.buffer(2 * j + 2) : null;
    for (let i = 0; i < n; i++) if (oldBitmap === null || (oldBitmap[i >> 3] >> (i & 7)) & 1) bitmap[i >> 3] |= 1 << (i & 7);
    const mask = rows.present[j];
    for (let i = 0; i < m; i++) if (mask === null || mask[i] !== 0) bitmap[(n + i) >> 3] |= 1 << ((n + i) & 7);
    at += bitmapBytes;
  }
  const head = new ByteWriter();
  if (paramsChanged) writeHeaderStart(head, COMPACT_FORMAT_VERSION, params);
  else head.append(earlier.subarray(0, paramsEnd));
  head.varint(total);
  for (const c of nullCounts) head.varint(c);
  return sealCompact(head.bytes(), body);
}

/** What a stored column's plan gives the rows a grow adds (see grownWords). */
interface GrownColumn {
  /** The added rows' words. */
  added: Uint32Array;
  /** The column's plan for every row. */
  params: ColumnParams;
  /** The earlier rows' words packed anew when the plan changed (more residual bits), else undefined: their stored bytes stay. */
  repacked?: Uint32Array;
}

/**
 * The words a stored column's plan gives the added rows, from the state its
 * earlier rows (`stored`, n of them, present per `oldMask`) leave: the last
 * mantissa for decimal deltas, the last pattern for XOR. Added rows whose
 * decimal residuals need more bits repack the earlier rows' words with them
 * (residuals of sums of decimals grow with the sums), as encoding every row
 * would. Null when the rows do not fit the plan (see growCompactSplit).
 */
function grownWords(
  params: ColumnParams,
  stored: Uint8Array,
  n: number,
  oldMask: Uint8Array | null,
  values: Float64Array,
  bits: Uint32Array,
  mask: Uint8Array | null,
): GrownColumn | null {
  if (params.id === BYTESPLIT) return { added: rawWords(bits, mask), params };
  const oldWords = candidateWords('raw', 2 * n);
  byteJoinPlanes(stored, n, oldWords);
  if (params.id === XOR) {
    unXor(oldWords, oldMask);
    let last = n - 1;
    while (last >= 0 && !isPresent(oldMask, last)) last--;
    return { added: last < 0 ? xorWords(bits, mask) : xorWords(bits, mask, oldWords[2 * last], oldWords[2 * last + 1]), params };
  }
  if (params.id !== DELTA) return null;
  const previous = lastMantissa(oldWords, oldMask, params.residualBits);
  const decimal = decimalDeltasAt(values, bits, mask, params.decimals, params.decimals, previous, params.residualBits);
  if (decimal === null) return null;
  if (decimal.residualBits === params.residualBits) return { added: decimal.words, params };
  if (!repackResiduals(oldWords, params.residualBits, decimal.residualBits)) return null;
  return { added: decimal.words, params: { id: DELTA, decimals: params.decimals, residualBits: decimal.residualBits }, repacked: oldWords };
}

/**
 * Decimal delta words packed with `from` residual bits repacked in place
 * with `to` (more); false when a delta no longer fits a double's exact
 * integers (packDecimalDeltas' bound). Absent rows' words are 0 either way.
 */
function repackResiduals(words: Uint32Array, from: number, to: number): boolean {
  const fromHigh = 2 ** (32 - from);
  const residualMask = (1 << from) - 1;
  const shift = 2 ** to;
  const toHigh = 2 ** (32 - to);
  for (let i = 0; i < words.length; i += 2) {
    const lo = words[i];
    const delta = words[i + 1] * fromHigh + (lo >>> from);
    if (delta * shift >= TWO_53) return false;
    const hi = Math.floor(delta / toHigh);
    words[i] = (delta - hi * toHigh) * shift + (lo & residualMask);
    words[i + 1] = hi;
  }
  return true;
}

/**
 * Decodes a split; with `only`, just that value column (and the columns it
 * is derived from), leaving the others empty and their masks null: a read
 * needs one method, and decompressing and decoding the other columns was most
 * of its cost.
 */
export function decodeSplit(bytes: Uint8Array, key: number, granularity: number, columnCount: number, only?: number): SplitColumns {
  const header = new HeaderReader(readChecked(bytes));
  const stored = header.varint();
  if (stored !== columnCount) {
    throw new CorruptSplitError(`split has ${stored} value columns, expected ${columnCount}`);
  }
  const params = readAllParams(header, columnCount);
  const batch = bytes[0] === COMPACT_FORMAT_VERSION ? readCompactBody(header, bytes, columnCount) : readBatch(bytes.subarray(CRC_END + header.offset), columnCount);
  const { n } = batch;
  const wanted = wantedColumns(params, only);
  const present = params.map((_, j) => (wanted[j] && batch.nullCount(j + 1) > 0 ? presenceMask(batch.buffer(2 * j + 2), n) : null));
  const columns: Float64Array[] = params.map(() => EMPTY);
  // Derived columns read the columns they name, so those are decoded first.
  for (const phase of [0, 1, 2]) {
    for (let j = 0; j < columnCount; j++) {
      if (wanted[j] && decodePhase(params[j]) === phase) {
        columns[j] = decodeColumn(params[j], words64(batch.buffer(2 * j + 3), n), j, present, columns);
      }
    }
  }
  const steps = aligned(batch.buffer(1));
  if (steps.length < 4 * n) throw new CorruptSplitError(`the timestamps hold ${steps.length} bytes for ${n} rows`);
  return { timestamps: decodeTimestamps(key, granularity, new Uint32Array(steps.buffer, steps.byteOffset, n)), columns, present };
}

const EMPTY = new Float64Array(0);

/** Every column, or `only` and the columns it is derived from, transitively. */
function wantedColumns(params: ColumnParams[], only: number | undefined): boolean[] {
  const wanted = params.map(() => only === undefined);
  const want = (j: number): void => {
    if (wanted[j]) return;
    wanted[j] = true;
    const p = params[j];
    if (p.id === SAME) want(p.column);
    if (p.id === QUOTIENT) {
      want(p.dividend);
      want(p.divisor);
    }
  };
  if (only !== undefined) want(only);
  return wanted;
}

/**
 * The column parameters in an encoded split's header, or null when it holds
 * another column count or no readable header. Its checksum is not checked:
 * a plan is only ever reused after checking it against the rows it encodes.
 */
function earlierParams(bytes: Uint8Array, columnCount: number): ColumnParams[] | null {
  if (bytes.length < CRC_END || (bytes[0] !== FORMAT_VERSION && bytes[0] !== COMPACT_FORMAT_VERSION)) return null;
  try {
    const header = new HeaderReader(bytes.subarray(CRC_END));
    return header.varint() === columnCount ? readAllParams(header, columnCount) : null;
  } catch (error) {
    if (error instanceof CorruptSplitError) return null;
    throw error;
  }
}

/** The encoding each value column of an encoded split was stored with. */
export function splitEncodings(bytes: Uint8Array): ColumnEncoding[] {
  const header = new HeaderReader(readChecked(bytes));
  return readAllParams(header, header.varint()).map(({ id }) => ENCODING_NAMES[id]);
}

// ---------------------------------------------------------------------------
// Timestamps

/**
 * Fills `steps` (as long as `timestamps`). `after`: the offset of a row
 * before them, whose step the first must then exceed 0 (the first row of a
 * split may sit at the key).
 */
function timestampSteps(key: number, granularity: number, timestamps: Float64Array, steps: Uint32Array, after?: number): Uint32Array {
  if (!(Number.isSafeInteger(granularity) && granularity > 0)) {
    throw new RangeError(`granularity must be a positive integer of microseconds, got ${granularity}`);
  }
  let previous = after ?? 0;
  for (let i = 0; i < timestamps.length; i++) {
    const offset = (timestamps[i] - key) / granularity;
    const step = offset - previous;
    if (!Number.isInteger(offset) || !(step > 0 || (i === 0 && after === undefined && step === 0)) || step >= TWO_32) {
      throw new RangeError(
        `timestamp ${timestamps[i]} at row ${i} is not on the ${granularity} µs grid after key ${key} and the previous row`,
      );
    }
    steps[i] = step;
    previous = offset;
  }
  return steps;
}

function decodeTimestamps(key: number, granularity: number, steps: Uint32Array): Float64Array {
  const timestamps = new Float64Array(steps.length);
  let offset = 0;
  for (let i = 0; i < steps.length; i++) {
    offset += steps[i];
    timestamps[i] = key + offset * granularity;
  }
  return timestamps;
}

// ---------------------------------------------------------------------------
// Choosing encodings

interface ColumnPlan {
  params: ColumnParams;
  /** The 8n bytes the Arrow column carries. */
  stored: Uint8Array;
}

/**
 * Cheapest first: a constant, a copy of an earlier column (one raw point per
 * period makes mean, sum, last, max and min equal), a quotient of two other
 * columns (Gnocchi's mean is sum / count), then the transform (decimal
 * delta, XOR, plain bits) whose byte planes have the least entropy. A
 * quotient's operands are never derived themselves, so decoding needs no
 * more than three phases.
 */
function planColumns(data: SplitColumns, body: Uint8Array | null, at: number, earlier: ColumnParams[] | null): ColumnPlan[] {
  const { columns, present } = data;
  const n = data.timestamps.length;
  // Column j's bytes: in the body, or (a sealed split's Arrow columns) an array of its own.
  const place = (j: number): Uint8Array => (body === null ? new Uint8Array(8 * n) : body.subarray(at + 8 * n * j, at + 8 * n * (j + 1)));
  const zeros = (j: number): Uint8Array => (body === null ? zeroWords(n) : place(j).fill(0));
  // One view per column for every comparison below: a view per call made
  // most of a short chunk's planning (the quotient search alone tries up to
  // 30 pairs per column).
  const words = columns.map(wordsOf);
  // An earlier plan whose derived columns hold is kept but for stored
  // columns that turned constant or no longer fit their layout. When the
  // rows grew from the earlier ones, that is the plan made afresh but for
  // the costing of stored columns' layouts (see derivedStillHold and
  // reusedValues); for the rows after them (a new chunk), what it can miss
  // is a stored column that became a copy or quotient, a few bytes.
  if (earlier !== null && derivedStillHold(data, words, earlier)) {
    return earlier.map((params, j) => {
      if (decodePhase(params) > 0 || params.id === CONSTANT) return { params, stored: zeros(j) };
      const constant = constantBits(words[j], present[j]);
      if (constant !== null) return { params: { id: CONSTANT, lo: constant[0], hi: constant[1] }, stored: zeros(j) };
      const stored = place(j);
      return { params: reusedValues(params, columns[j], words[j], present[j], stored) ?? planValues(columns[j], words[j], present[j], stored), stored };
    });
  }
  const plans: (ColumnPlan | undefined)[] = columns.map(() => undefined);
  for (let j = 0; j < columns.length; j++) {
    const constant = constantBits(words[j], present[j]);
    if (constant !== null) {
      plans[j] = { params: { id: CONSTANT, lo: constant[0], hi: constant[1] }, stored: zeros(j) };
      continue;
    }
    for (let r = 0; r < j; r++) {
      if (sameColumn(words[j], present[j], words[r], present[r])) {
        plans[j] = { params: { id: SAME, column: r }, stored: zeros(j) };
        break;
      }
    }
  }
  const isOperand = new Uint8Array(columns.length);
  const canBeOperand = (k: number): boolean => plans[k] === undefined || plans[k].params.id === CONSTANT;
  for (let j = 0; j < columns.length; j++) {
    if (plans[j] !== undefined || isOperand[j] === 1) continue;
    search: for (let a = 0; a < columns.length; a++) {
      for (let b = 0; b < columns.length; b++) {
        if (a === j || b === j || a === b || !canBeOperand(a) || !canBeOperand(b)) continue;
        if (isQuotient(words[j], present[j], columns[a], present[a], columns[b], present[b])) {
          plans[j] = { params: { id: QUOTIENT, dividend: a, divisor: b }, stored: zeros(j) };
          isOperand[a] = isOperand[b] = 1;
          break search;
        }
      }
    }
  }
  return plans.map((plan, j) => {
    if (plan !== undefined) return plan;
    const stored = place(j);
    return { params: planValues(columns[j], words[j], present[j], stored), stored };
  });
}

/**
 * Whether the constant, copied and quotient columns of an earlier plan still
 * are for every row. When the rows grew from the earlier ones, the full plan
 * would then make the same choices: a column that was no constant, copy or
 * quotient is none with more rows, every earlier candidate that failed
 * still fails, and the operands' plans are unchanged. So the derived
 * columns' choices are reused all together or not at all.
 */
function derivedStillHold(data: SplitColumns, words: Uint32Array[], earlier: ColumnParams[]): boolean {
  const { columns, present } = data;
  for (let j = 0; j < earlier.length; j++) {
    const p = earlier[j];
    if (p.id === CONSTANT && !allBits(words[j], present[j], p.lo, p.hi)) return false;
    if (p.id === SAME && !sameColumn(words[j], present[j], words[p.column], present[p.column])) return false;
    if (p.id === QUOTIENT && !isQuotient(words[j], present[j], columns[p.dividend], present[p.dividend], columns[p.divisor], present[p.divisor])) return false;
  }
  return true;
}

/**
 * An earlier plan of a stored column applied to it, its 8n bytes written to
 * `stored`; null for the plain layout (chosen by trial compressions, for
 * repeats the next rows may not have) or decimal deltas when no decimals up
 * to the earlier ones fit. The fewest that fit are taken, as planValues
 * does (rows grown from the earlier ones fit no fewer than those). What is
 * not redone is the costing of the other layouts (most of a chunk's
 * planning): an open split's chunks keep the layout its first chunk chose,
 * which later rows of the same series rarely overturn, until it is sealed
 * and planned afresh.
 */
function reusedValues(params: ColumnParams, values: Float64Array, bits: Uint32Array, mask: Uint8Array | null, stored: Uint8Array): ColumnParams | null {
  if (params.id === XOR || params.id === BYTESPLIT) {
    byteSplit(params.id === XOR ? xorWords(bits, mask) : rawWords(bits, mask), stored);
    return params;
  }
  if (params.id !== DELTA) return null;
  const decimal = decimalDeltasAt(values, bits, mask, 0, params.decimals);
  if (decimal === null) return null;
  byteSplit(decimal.words, stored);
  const same = decimal.decimals === params.decimals && decimal.residualBits === params.residualBits;
  return same ? params : { id: DELTA, decimals: decimal.decimals, residualBits: decimal.residualBits };
}

const BYTESPLIT_PARAMS: ColumnParams = { id: BYTESPLIT };
const XOR_PARAMS: ColumnParams = { id: XOR };
const RAW_PARAMS: ColumnParams = { id: RAW };

/** The column's encoding, its 8n bytes written to `stored`. */
function planValues(values: Float64Array, bits: Uint32Array, mask: Uint8Array | null, stored: Uint8Array): ColumnParams {
  // Ties go to delta, whose decode never handles float bit patterns, then
  // to XOR. Delta is costed first: a decimal column's XOR and plain words
  // usually cost more than its deltas within their first planes, and are
  // then dropped there (cost Infinity) without costing the rest.
  const decimal = decimalDeltas(values, bits, mask);
  const deltaCost = decimal === null ? Infinity : byteSplitCost(decimal.words);
  const xor = xorWords(bits, mask);
  const xorCost = byteSplitCostUpTo(xor, deltaCost);
  const raw = rawWords(bits, mask);
  const rawCost = byteSplitCostUpTo(raw, Math.min(deltaCost, xorCost));
  let params: ColumnParams;
  let words: Uint32Array;
  if (decimal !== null && deltaCost <= xorCost && deltaCost <= rawCost) {
    params = { id: DELTA, decimals: decimal.decimals, residualBits: decimal.residualBits };
    words = decimal.words;
  } else if (xorCost <= rawCost) {
    params = XOR_PARAMS;
    words = xor;
  } else {
    params = BYTESPLIT_PARAMS;
    words = raw;
  }
  byteSplit(words, stored);
  if (params.id === DELTA || !repeatsLowWords(bits, mask)) return params;
  // Floats that are not decimals may still repeat whole or in long runs of
  // bytes (a mean of decimals, a gauge with few levels): ZSTD finds those in
  // the raw layout, which the plane estimate cannot see, so let it judge.
  const plain = new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength);
  if (compressedSize(plain) < compressedSize(stored)) {
    stored.set(plain);
    return RAW_PARAMS;
  }
  return params;
}

/**
 * Whether at least 1/8 of the present values share their low 32 bits with
 * an earlier one. The raw layout only beats the byte planes when ZSTD finds
 * such repeats (values from a small set, a mantissa repeating like a
 * third's); without them its two trial compressions, a quarter of a chunk's
 * encode, are skipped (a standard deviation never repeats).
 */
function repeatsLowWords(bits: Uint32Array, mask: Uint8Array | null): boolean {
  const n = bits.length / 2;
  let present = 0;
  for (let i = 0; i < n; i++) if (isPresent(mask, i)) present++;
  const wanted = Math.max(1, Math.ceil(present / 8));
  let shift = 32;
  while (1 << (32 - shift) < 2 * n) shift--;
  const size = 1 << (32 - shift);
  if (seenWords.length < size) {
    seenWords = new Uint32Array(size);
    seenMarks = new Uint32Array(size);
  }
  // A new mark per call empties the table without clearing it.
  mark = mark === 0xffffffff ? 1 : mark + 1;
  if (mark === 1) seenMarks.fill(0);
  let repeats = 0;
  for (let i = 0; i < n; i++) {
    if (!isPresent(mask, i)) continue;
    const lo = bits[2 * i];
    let slot = Math.imul(lo, 0x9e3779b1) >>> shift;
    while (seenMarks[slot] === mark && seenWords[slot] !== lo) slot = (slot + 1) & (size - 1);
    if (seenMarks[slot] !== mark) {
      seenMarks[slot] = mark;
      seenWords[slot] = lo;
    } else if (++repeats >= wanted) {
      return true;
    }
  }
  return false;
}

/** repeatsLowWords' open-addressing table: a slot is taken in the call whose mark it holds. */
let seenWords = new Uint32Array(0);
let seenMarks = new Uint32Array(0);
let mark = 0;

/**
 * Estimated compressed size of the byte-split words: the order-0 entropy of
 * each byte plane. ZSTD's entropy stage gets close to it on such planes, and
 * computing it costs one pass instead of a trial compression per candidate.
 */
function byteSplitCost(words: Uint32Array): number {
  const n = words.length / 2;
  const counts = planeCounts;
  for (let i = 0; i < n; i++) {
    const lo = words[2 * i];
    const hi = words[2 * i + 1];
    counts[lo & 0xff]++;
    counts[0x100 + ((lo >>> 8) & 0xff)]++;
    counts[0x200 + ((lo >>> 16) & 0xff)]++;
    counts[0x300 + (lo >>> 24)]++;
    counts[0x400 + (hi & 0xff)]++;
    counts[0x500 + ((hi >>> 8) & 0xff)]++;
    counts[0x600 + ((hi >>> 16) & 0xff)]++;
    counts[0x700 + (hi >>> 24)]++;
  }
  return countedCost(words);
}

/**
 * byteSplitCost from the plane counts of `words`, already taken; resets
 * them. Its own function so that byteSplitCostUpTo's result is this one's
 * to the last bit: the sums are added in the same order.
 */
function countedCost(words: Uint32Array): number {
  const counts = planeCounts;
  const n = words.length / 2;
  const xLogX = xLog2XUpTo(n);
  // Per plane, the sum of c log2(n / c) over its byte counts c; taking each
  // count resets it for the next call. Short columns visit only the counts
  // their bytes touched, long ones the whole table. No closure for the
  // step: one updating a captured sum took most of the estimate's time.
  let bits = 8 * xLogX[n];
  const bytes = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  const short = bytes.length < counts.length;
  const visits = short ? bytes.length : counts.length;
  for (let v = 0; v < visits; v++) {
    const index = short ? ((v & 7) << 8) | bytes[v] : v;
    const c = counts[index];
    if (c === 0) continue;
    bits -= xLogX[c];
    counts[index] = 0;
  }
  return bits / 8;
}

/**
 * byteSplitCost(words), or Infinity as soon as the first planes alone cost
 * more than `limit`: each plane's entropy is >= 0, so the candidate would
 * lose to the one that costs `limit`. Planes are taken low byte first, the
 * noisiest of a float's (the mantissa's end). The margin covers the
 * rounding of sums added in another order than byteSplitCost's.
 */
function byteSplitCostUpTo(words: Uint32Array, limit: number): number {
  if (limit === Infinity) return byteSplitCost(words);
  const n = words.length / 2;
  const counts = planeCounts;
  const xLogX = xLog2XUpTo(n);
  const step = xLogXStep;
  const bytes = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  const bound = 8 * limit + 1e-9 * (1 + 8 * xLogX[n]);
  let bits = 0;
  for (let plane = 0; plane < 8; plane++) {
    const base = plane << 8;
    // The plane's sum of c log2 c, built up as its counts grow.
    let sum = 0;
    for (let i = plane; i < bytes.length; i += 8) sum += step[counts[base | bytes[i]]++];
    bits += xLogX[n] - sum;
    if (bits > bound) {
      counts.fill(0, 0, base + 0x100);
      return Infinity;
    }
  }
  return countedCost(words);
}

/** Byte counts per plane, all 0 between calls of byteSplitCost. */
const planeCounts = new Int32Array(8 * 256);

/** x log2 x for x = 0..n, kept because Math.log2 dominates the estimate otherwise. */
let xLogXTable = new Float64Array(1);
/** xLogXStep[x]: what x log2 x gains from x to x + 1, for x below xLogXTable's length - 1. */
let xLogXStep = new Float64Array(0);

function xLog2XUpTo(n: number): Float64Array {
  if (xLogXTable.length <= n) {
    xLogXTable = new Float64Array(n + 1);
    for (let x = 1; x <= n; x++) xLogXTable[x] = x * Math.log2(x);
    xLogXStep = new Float64Array(n);
    for (let x = 0; x < n; x++) xLogXStep[x] = xLogXTable[x + 1] - xLogXTable[x];
  }
  return xLogXTable;
}

// ---------------------------------------------------------------------------
// Encodings

function writeParams(header: ByteWriter, params: ColumnParams): void {
  header.u8(params.id);
  switch (params.id) {
    case RAW:
    case BYTESPLIT:
    case XOR:
      return;
    case CONSTANT:
      header.u32(params.lo);
      header.u32(params.hi);
      return;
    case SAME:
      header.varint(params.column);
      return;
    case DELTA:
      header.u8(params.decimals);
      header.u8(params.residualBits);
      return;
    case QUOTIENT:
      header.varint(params.dividend);
      header.varint(params.divisor);
      return;
  }
}

function readAllParams(header: HeaderReader, columnCount: number): ColumnParams[] {
  const params: ColumnParams[] = [];
  for (let j = 0; j < columnCount; j++) params.push(readParams(header, j, columnCount));
  params.forEach((p, j) => {
    const sources = p.id === SAME ? [p.column] : p.id === QUOTIENT ? [p.dividend, p.divisor] : [];
    for (const source of sources) {
      if (decodePhase(params[source]) >= decodePhase(p)) {
        throw new CorruptSplitError(`column ${j} derives from column ${source}, which is itself derived`);
      }
    }
  });
  return params;
}

function readParams(header: HeaderReader, j: number, columnCount: number): ColumnParams {
  const column = (): number => {
    const k = header.varint();
    if (k >= columnCount || k === j) throw new CorruptSplitError(`column ${j} refers to column ${k}`);
    return k;
  };
  const id = header.u8();
  switch (id) {
    case RAW:
    case BYTESPLIT:
    case XOR:
      return { id };
    case CONSTANT:
      return { id, lo: header.u32(), hi: header.u32() };
    case SAME:
      return { id, column: column() };
    case DELTA: {
      const decimals = header.u8();
      const residualBits = header.u8();
      if (decimals > MAX_DECIMALS || residualBits > MAX_RESIDUAL_BITS) {
        throw new CorruptSplitError(`column ${j} has delta parameters ${decimals}, ${residualBits}`);
      }
      return { id, decimals, residualBits };
    }
    case QUOTIENT:
      return { id, dividend: column(), divisor: column() };
    default:
      throw new CorruptSplitError(`column ${j} has unknown encoding ${id}`);
  }
}

function decodePhase(params: ColumnParams): number {
  return params.id === SAME ? 2 : params.id === QUOTIENT ? 1 : 0;
}

function decodeColumn(
  params: ColumnParams,
  stored: BigUint64Array,
  j: number,
  present: (Uint8Array | null)[],
  columns: Float64Array[],
): Float64Array {
  const mask = present[j];
  const values = new Float64Array(stored.length);
  const bits = wordsOf(values);
  switch (params.id) {
    case CONSTANT:
      for (let i = 0; i < values.length; i++) {
        if (isPresent(mask, i)) {
          bits[2 * i] = params.lo;
          bits[2 * i + 1] = params.hi;
        }
      }
      return values;
    case SAME:
      if (!sameMask(mask, present[params.column], values.length)) {
        throw new CorruptSplitError(`column ${j} does not have the rows of column ${params.column}`);
      }
      values.set(columns[params.column]);
      return values;
    case QUOTIENT: {
      const dividend = columns[params.dividend];
      const divisor = columns[params.divisor];
      for (let i = 0; i < values.length; i++) if (isPresent(mask, i)) values[i] = dividend[i] / divisor[i];
      return values;
    }
    case RAW:
      bits.set(new Uint32Array(stored.buffer, stored.byteOffset, bits.length));
      return values;
    case BYTESPLIT:
      byteJoin(stored, bits);
      return values;
    case XOR:
      byteJoin(stored, bits);
      unXor(bits, mask);
      return values;
    case DELTA:
      byteJoin(stored, bits);
      undoDecimalDeltas(bits, values, mask, params.decimals, params.residualBits);
      return values;
  }
}

/** Shared and never written: the data of columns that store nothing. */
let zeros = new Uint8Array(0);

function zeroWords(n: number): Uint8Array {
  if (zeros.length < 8 * n) zeros = new Uint8Array(8 * n);
  return zeros.subarray(0, 8 * n);
}

function wordsOf(values: Float64Array): Uint32Array {
  return new Uint32Array(values.buffer, values.byteOffset, 2 * values.length);
}

function isPresent(mask: Uint8Array | null, i: number): boolean {
  return mask === null || mask[i] !== 0;
}

/** Whether every present row holds the bit pattern [lo, hi]. */
function allBits(bits: Uint32Array, mask: Uint8Array | null, lo: number, hi: number): boolean {
  for (let i = 0; i < bits.length / 2; i++) {
    if (isPresent(mask, i) && (bits[2 * i] !== lo || bits[2 * i + 1] !== hi)) return false;
  }
  return true;
}

/** The [lo, hi] bit pattern every present row shares, or null. */
function constantBits(bits: Uint32Array, mask: Uint8Array | null): [number, number] | null {
  let found: [number, number] | null = null;
  for (let i = 0; i < bits.length / 2; i++) {
    if (!isPresent(mask, i)) continue;
    if (found === null) found = [bits[2 * i], bits[2 * i + 1]];
    else if (found[0] !== bits[2 * i] || found[1] !== bits[2 * i + 1]) return null;
  }
  return found ?? [0, 0];
}

function sameMask(a: Uint8Array | null, b: Uint8Array | null, n: number): boolean {
  if (a === b) return true;
  for (let i = 0; i < n; i++) if (isPresent(a, i) !== isPresent(b, i)) return false;
  return true;
}

function sameColumn(a: Uint32Array, mask: Uint8Array | null, b: Uint32Array, otherMask: Uint8Array | null): boolean {
  const n = a.length / 2;
  if (!sameMask(mask, otherMask, n)) return false;
  for (let i = 0; i < n; i++) {
    if (isPresent(mask, i) && (a[2 * i] !== b[2 * i] || a[2 * i + 1] !== b[2 * i + 1])) return false;
  }
  return true;
}

const quotient = new Float64Array(1);
const quotientBits = wordsOf(quotient);

/**
 * Whether every present value is dividend / divisor, bit for bit. A NaN
 * quotient disqualifies: its bit pattern depends on the CPU that divides.
 */
function isQuotient(
  bits: Uint32Array,
  mask: Uint8Array | null,
  dividend: Float64Array,
  dividendMask: Uint8Array | null,
  divisor: Float64Array,
  divisorMask: Uint8Array | null,
): boolean {
  for (let i = 0; i < bits.length / 2; i++) {
    if (!isPresent(mask, i)) continue;
    if (!isPresent(dividendMask, i) || !isPresent(divisorMask, i)) return false;
    quotient[0] = dividend[i] / divisor[i];
    if (Number.isNaN(quotient[0]) || quotientBits[0] !== bits[2 * i] || quotientBits[1] !== bits[2 * i + 1]) return false;
  }
  return true;
}

/**
 * The candidates' words of the column being planned: a column is planned
 * and its bytes written out before the next, so one set of arrays serves
 * every column of every encode, where fresh ones were most of what encoding
 * allocated. Grown as needed; callers take views of the length they need.
 */
const candidates = {
  raw: new Uint32Array(0),
  xor: new Uint32Array(0),
  delta: new Uint32Array(0),
  deltas: new Float64Array(0),
  residuals: new Uint16Array(0),
};

function candidateWords(which: 'raw' | 'xor' | 'delta', length: number): Uint32Array {
  candidates[which] = grown(candidates[which], length);
  return candidates[which].subarray(0, length);
}

/** Absent rows become 0 so that they cost nothing once compressed. */
function rawWords(bits: Uint32Array, mask: Uint8Array | null): Uint32Array {
  if (mask === null) return bits;
  const out = candidateWords('raw', bits.length);
  for (let i = 0; i < mask.length; i++) {
    const present = mask[i] !== 0;
    out[2 * i] = present ? bits[2 * i] : 0;
    out[2 * i + 1] = present ? bits[2 * i + 1] : 0;
  }
  return out;
}

/** Gorilla's XOR with the previous present value (before the first: [lo, hi]), on the whole 64-bit pattern. */
function xorWords(bits: Uint32Array, mask: Uint8Array | null, lo = 0, hi = 0): Uint32Array {
  const out = candidateWords('xor', bits.length);
  for (let i = 0; i < bits.length / 2; i++) {
    if (!isPresent(mask, i)) {
      out[2 * i] = 0;
      out[2 * i + 1] = 0;
      continue;
    }
    out[2 * i] = bits[2 * i] ^ lo;
    out[2 * i + 1] = bits[2 * i + 1] ^ hi;
    lo = bits[2 * i];
    hi = bits[2 * i + 1];
  }
  return out;
}

function unXor(bits: Uint32Array, mask: Uint8Array | null): void {
  let lo = 0;
  let hi = 0;
  for (let i = 0; i < bits.length / 2; i++) {
    if (!isPresent(mask, i)) continue;
    lo = bits[2 * i] ^= lo;
    hi = bits[2 * i + 1] ^= hi;
  }
}

interface DecimalDeltas {
  decimals: number;
  residualBits: number;
  words: Uint32Array;
}

/**
 * VictoriaMetrics' decimal encoding made exact: each present value becomes
 * the mantissa m of m / 10^d (the fewest decimals d that fit every row) plus
 * its residual in units in the last place, which is 0 for values that are
 * decimals and a few units for sums of decimals. A word holds the zigzag
 * delta of m from the previous row's, shifted left by `residualBits`, and
 * the zigzag residual. Null when some value (NaN, an infinity, -0, a float
 * no decimal approaches) does not fit.
 */
function decimalDeltas(values: Float64Array, bits: Uint32Array, mask: Uint8Array | null): DecimalDeltas | null {
  return decimalDeltasAt(values, bits, mask, 0, MAX_DECIMALS);
}

/**
 * decimalDeltas with the fewest decimals from `least` to `most`; `previous`:
 * the mantissa before the first row; `residualBits`: the fewest residual
 * bits to pack with.
 */
function decimalDeltasAt(
  values: Float64Array,
  bits: Uint32Array,
  mask: Uint8Array | null,
  least: number,
  most: number,
  previous = 0,
  residualBits = 0,
): DecimalDeltas | null {
  const n = values.length;
  candidates.deltas = grown(candidates.deltas, n);
  candidates.residuals = grown(candidates.residuals, n);
  const deltas = candidates.deltas.subarray(0, n);
  const residuals = candidates.residuals.subarray(0, n);
  // Absent rows are skipped by every fit and must read as 0.
  if (mask !== null) {
    deltas.fill(0);
    residuals.fill(0);
  }
  for (let decimals = least; decimals <= most; decimals++) {
    if (fitDecimals(values, bits, mask, decimals, deltas, residuals, previous)) return packDecimalDeltas(decimals, deltas, residuals, residualBits);
  }
  return null;
}

const approx = new Float64Array(1);
const approxBits = wordsOf(approx);

/** Fills the zigzag deltas and residuals at `decimals`, or stops at the first row that does not fit. */
function fitDecimals(
  values: Float64Array,
  bits: Uint32Array,
  mask: Uint8Array | null,
  decimals: number,
  deltas: Float64Array,
  residuals: Uint16Array,
  previous: number,
): boolean {
  const scale = POW10[decimals];
  for (let i = 0; i < values.length; i++) {
    if (!isPresent(mask, i)) continue;
    // `+ 0` turns -0 into 0, whose residual from -0 is then too large to pass.
    const m = Math.round(values[i] * scale) + 0;
    approx[0] = m / scale;
    // The difference of the bit patterns, exact while small.
    const r = (bits[2 * i + 1] - approxBits[1]) * TWO_32 + (bits[2 * i] - approxBits[0]);
    if (!(Math.abs(m) <= MAX_MANTISSA && Math.abs(r) < MAX_RESIDUAL)) return false;
    deltas[i] = zigzag(m - previous);
    residuals[i] = zigzag(r);
    previous = m;
  }
  return true;
}

function packDecimalDeltas(decimals: number, deltas: Float64Array, residuals: Uint16Array, leastResidualBits: number): DecimalDeltas | null {
  let largestDelta = 0;
  let largestResidual = 0;
  for (let i = 0; i < deltas.length; i++) {
    largestDelta = Math.max(largestDelta, deltas[i]);
    largestResidual = Math.max(largestResidual, residuals[i]);
  }
  // MAX_RESIDUAL keeps the residual within the low word, so that decoding
  // needs no floating-point remainder (slow in V8).
  const residualBits = Math.max(leastResidualBits, 32 - Math.clz32(largestResidual));
  const shift = 2 ** residualBits;
  const highShift = 2 ** (32 - residualBits);
  if (largestDelta * shift >= TWO_53) return null;
  const words = candidateWords('delta', 2 * deltas.length);
  for (let i = 0; i < deltas.length; i++) {
    const hi = Math.floor(deltas[i] / highShift);
    words[2 * i] = (deltas[i] - hi * highShift) * shift + residuals[i];
    words[2 * i + 1] = hi;
  }
  return { decimals, residualBits, words };
}

function undoDecimalDeltas(
  bits: Uint32Array,
  values: Float64Array,
  mask: Uint8Array | null,
  decimals: number,
  residualBits: number,
): void {
  const scale = POW10[decimals];
  const highShift = 2 ** (32 - residualBits);
  const residualMask = (1 << residualBits) - 1;
  let m = 0;
  for (let i = 0; i < values.length; i++) {
    if (!isPresent(mask, i)) continue;
    const lo = bits[2 * i];
    const delta = bits[2 * i + 1] * highShift + (lo >>> residualBits);
    m += (lo >>> residualBits) & 1 ? -(delta + 1) / 2 : delta / 2;
    values[i] = m / scale;
    const r = lo & residualMask;
    if (r !== 0) {
      const low = bits[2 * i] + (r & 1 ? -(r + 1) / 2 : r / 2);
      const carry = Math.floor(low / TWO_32);
      bits[2 * i] = low - carry * TWO_32;
      bits[2 * i + 1] += carry;
    }
  }
}

/** The mantissa of the last present row of a column's decimal delta words. */
function lastMantissa(bits: Uint32Array, mask: Uint8Array | null, residualBits: number): number {
  const highShift = 2 ** (32 - residualBits);
  let m = 0;
  for (let i = 0; i < bits.length / 2; i++) {
    if (!isPresent(mask, i)) continue;
    const low = bits[2 * i] >>> residualBits;
    const delta = bits[2 * i + 1] * highShift + low;
    m += low & 1 ? -(delta + 1) / 2 : delta / 2;
  }
  return m;
}

function zigzag(d: number): number {
  return d >= 0 ? 2 * d : -2 * d - 1;
}

/**
 * The words' bytes into `planes`: byte k of every word together, plane k
 * `stride` bytes long (by default as many as words) and the words' bytes
 * from `from` in each.
 */
function byteSplit(words: Uint32Array, planes: Uint8Array, stride = words.length / 2, from = 0): void {
  const n = words.length / 2;
  for (let i = 0; i < n; i++) {
    const lo = words[2 * i];
    const hi = words[2 * i + 1];
    const at = from + i;
    planes[at] = lo;
    planes[stride + at] = lo >>> 8;
    planes[2 * stride + at] = lo >>> 16;
    planes[3 * stride + at] = lo >>> 24;
    planes[4 * stride + at] = hi;
    planes[5 * stride + at] = hi >>> 8;
    planes[6 * stride + at] = hi >>> 16;
    planes[7 * stride + at] = hi >>> 24;
  }
}

function byteJoin(stored: BigUint64Array, words: Uint32Array): void {
  byteJoinPlanes(new Uint8Array(stored.buffer, stored.byteOffset, stored.byteLength), stored.length, words);
}

/** The n words whose byte planes `planes` holds (byteSplit undone). */
function byteJoinPlanes(planes: Uint8Array, n: number, words: Uint32Array): void {
  for (let i = 0; i < n; i++) {
    words[2 * i] = planes[i] | (planes[n + i] << 8) | (planes[2 * n + i] << 16) | (planes[3 * n + i] << 24);
    words[2 * i + 1] = planes[4 * n + i] | (planes[5 * n + i] << 8) | (planes[6 * n + i] << 16) | (planes[7 * n + i] << 24);
  }
}

// ---------------------------------------------------------------------------
// Presence masks

function countPresent(mask: Uint8Array): number {
  let count = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 0) count++;
  return count;
}

/** Arrow validity: bit i (least significant first) set when row i has a value. */
function validityBitmap(mask: Uint8Array, bitmap: Uint8Array = new Uint8Array((mask.length + 7) >> 3)): Uint8Array {
  bitmap.fill(0);
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 0) bitmap[i >> 3] |= 1 << (i & 7);
  return bitmap;
}

function presenceMask(bitmap: Uint8Array, n: number): Uint8Array {
  const mask = new Uint8Array(n);
  for (let i = 0; i < n; i++) mask[i] = (bitmap[i >> 3] >> (i & 7)) & 1;
  return mask;
}

// ---------------------------------------------------------------------------
// Framing

/** Checks version and checksum; returns the bytes the checksum covers. */
function readChecked(bytes: Uint8Array): Uint8Array {
  if (bytes.length < CRC_END) throw new CorruptSplitError(`split of ${bytes.length} bytes is truncated`);
  if (bytes[0] !== FORMAT_VERSION && bytes[0] !== COMPACT_FORMAT_VERSION) throw new CorruptSplitError(`unknown split format version ${bytes[0]}`);
  const stored = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(CRC_OFFSET, true);
  const body = bytes.subarray(CRC_END);
  if (crc32(body) !== stored) throw new CorruptSplitError('split checksum mismatch: the bytes are corrupt or truncated');
  return body;
}

interface BatchBody {
  n: number;
  /** Null count of field `f` (0: timestamps, 1 + j: value column j). */
  nullCount(f: number): number;
  /** Buffer `i`, decompressed: field f's validity is 2f, its data 2f + 1. */
  buffer(i: number): Uint8Array;
}

const NOT_COMPRESSED = -1n;
const zstd = new Decompressor();

/**
 * Reads the record-batch message without apache-arrow's vector loader, so
 * that only the buffers asked for are decompressed. The schema is ours, not
 * stored: fields are the Uint32 timestamp steps then the Uint64 columns,
 * two buffers each (validity, data), each buffer an int64 uncompressed length
 * (-1: stored as is) then a ZSTD frame.
 */
function readBatch(message: Uint8Array, columnCount: number): BatchBody {
  try {
    const reader = new MessageReader(message);
    const msg = reader.readMessage(MessageHeader.RecordBatch);
    if (msg === null) throw new Error('no record batch message');
    const meta = msg.header();
    const body = reader.readMessageBody(msg.bodyLength);
    const fields = columnCount + 1;
    if (meta.nodes.length !== fields || meta.buffers.length !== 2 * fields) {
      throw new Error(`${meta.nodes.length} fields and ${meta.buffers.length} buffers for ${fields} fields`);
    }
    const n = Number(meta.length);
    if (meta.nodes.some((node) => Number(node.length) !== n)) throw new Error('fields of different lengths');
    const compressed = meta.compression !== null;
    const buffers = new Map<number, Uint8Array>();
    return {
      n,
      nullCount: (f) => Number(meta.nodes[f]!.nullCount),
      buffer: (i) => {
        let bytes = buffers.get(i);
        if (bytes === undefined) {
          const { offset, length } = meta.buffers[i]!;
          bytes = body.subarray(Number(offset), Number(offset) + Number(length));
          if (compressed && bytes.length > 0) bytes = decompressBuffer(bytes, i);
          buffers.set(i, bytes);
        }
        return bytes;
      },
    };
  } catch (cause) {
    throw new CorruptSplitError(`split holds no readable Arrow record batch: ${(cause as Error).message}`, { cause });
  }
}

/** A version 2 body as the Arrow batch's buffers: field f's validity is buffer 2f, its data 2f + 1. */
function readCompactBody(header: HeaderReader, bytes: Uint8Array, columnCount: number): BatchBody {
  const n = header.varint();
  const nullCounts = Array.from({ length: columnCount }, () => header.varint());
  let body: Uint8Array;
  try {
    body = zstd.decompress(bytes.subarray(CRC_END + header.offset));
  } catch (cause) {
    throw new CorruptSplitError(`split body does not decompress: ${(cause as Error).message}`, { cause });
  }
  const bitmapBytes = (n + 7) >> 3;
  const size = 4 * n + 8 * n * columnCount + bitmapBytes * nullCounts.filter((c) => c > 0).length;
  if (body.length !== size) throw new CorruptSplitError(`split body holds ${body.length} bytes where ${n} rows take ${size}`);
  const bitmapAt: number[] = [];
  let at = 4 * n + 8 * n * columnCount;
  for (const c of nullCounts) {
    bitmapAt.push(at);
    if (c > 0) at += bitmapBytes;
  }
  return {
    n,
    nullCount: (f) => (f === 0 ? 0 : nullCounts[f - 1]!),
    buffer: (i) => {
      const f = i >> 1;
      if (f === 0) return i === 1 ? body.subarray(0, 4 * n) : EMPTY_BYTES;
      if (i % 2 === 0) return nullCounts[f - 1]! > 0 ? body.subarray(bitmapAt[f - 1]!, bitmapAt[f - 1]! + bitmapBytes) : EMPTY_BYTES;
      const from = 4 * n + 8 * n * (f - 1);
      return body.subarray(from, from + 8 * n);
    },
  };
}

const EMPTY_BYTES = new Uint8Array(0);

function decompressBuffer(bytes: Uint8Array, i: number): Uint8Array {
  try {
    const prefix = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigInt64(0, true);
    return prefix === NOT_COMPRESSED ? bytes.subarray(8) : zstd.decompress(bytes.subarray(8));
  } catch (cause) {
    throw new CorruptSplitError(`split holds no readable Arrow record batch: buffer ${i}: ${(cause as Error).message}`, { cause });
  }
}

/** The bytes at an 8-byte aligned offset (copied when they are not). */
function aligned(bytes: Uint8Array): Uint8Array {
  // A copy: Buffer's slice() would be a view at the same offset.
  return bytes.byteOffset % 8 === 0 ? bytes : new Uint8Array(bytes);
}

/** A data buffer as n 64-bit words; too short means a corrupt split. */
function words64(bytes: Uint8Array, n: number): BigUint64Array {
  if (bytes.length < 8 * n) throw new CorruptSplitError(`a column holds ${bytes.length} bytes for ${n} rows`);
  const a = aligned(bytes);
  return new BigUint64Array(a.buffer, a.byteOffset, n);
}

class ByteWriter {
  private buffer = new Uint8Array(64);
  private length = 0;

  u8(value: number): void {
    this.reserve(1);
    this.buffer[this.length++] = value;
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const grown = new Uint8Array(2 * Math.max(this.buffer.length, this.length + bytes));
    grown.set(this.buffer);
    this.buffer = grown;
  }

  u32(value: number): void {
    for (let k = 0; k < 4; k++) this.u8((value >>> (8 * k)) & 0xff);
  }

  append(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.buffer.set(bytes, this.length);
    this.length += bytes.length;
  }

  varint(value: number): void {
    this.reserve(MAX_VARUINT_BYTES);
    this.length = writeVaruint(this.buffer, value, this.length);
  }

  bytes(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }
}

class HeaderReader {
  offset = 0;

  constructor(private readonly bytes: Uint8Array) {}

  u8(): number {
    if (this.offset >= this.bytes.length) throw new CorruptSplitError('split header is truncated');
    return this.bytes[this.offset++];
  }

  u32(): number {
    let value = 0;
    for (let k = 0; k < 4; k++) value += this.u8() * 2 ** (8 * k);
    return value;
  }

  varint(): number {
    const read = readVaruint(this.bytes, this.offset);
    if (read === 'truncated') throw new CorruptSplitError('split header is truncated');
    if (read === 'overlong') throw new CorruptSplitError('split header has an overlong varint');
    this.offset = read.next;
    return read.value;
  }
}
