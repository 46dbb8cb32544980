/**
 * Everything processing rewrites for a metric, in one record so an update
 * costs one read and one write: the raw back-window tail, and per
 * granularity the open split (the newest one, still receiving points, kept
 * in the raw split form and carried as bytes: processing appends to it
 * without decoding it) and the key of the oldest sealed split (so retention only scans the
 * split store when something actually expires). Only the newest rows of
 * the tail and of each open split are inline; older ones are frozen into
 * chunk records (engine/state-chunks.ts), so an update rewrites a bounded
 * number of bytes whatever the sizes of the tail and of the splits.
 */
import type { Series } from './aggregation.js';

export interface OpenSplit {
  key: number;
  /** The split's newest rows, in the raw form of `encodeRawSplit`. */
  raw: Uint8Array;
  /** How many chunk records hold its older rows. */
  frozen: number;
}

export interface GranularityState {
  granularity: number;
  open: OpenSplit | null;
  oldestSealedKey: number | null;
}

export interface MetricState {
  /** The raw back-window points, or their newest ones when `tailFrozen` chunks hold the older. */
  tail: Series;
  tailFrozen: number;
  granularities: GranularityState[];
  /**
   * The newest incoming record (engine/incoming-batch.ts) whose points for
   * this metric are in this state: records at or below it are consumed.
   */
  lastSeq: number;
}

/**
 * Version 1 (before incoming records were shared by metrics) had no
 * `lastSeq`; versions 1 and 2 had no frozen chunks (read as 0): version 3
 * added the tail's chunk count to the header and the open split's to each
 * granularity's.
 */
export const METRIC_STATE_VERSION = 3;
const HEADERS: Record<number, number> = { 1: 8, 2: 16, 3: 20 };
const GRANULARITY_HEADERS: Record<number, number> = { 1: 28, 2: 28, 3: 32 };
const GRANULARITY_HEADER = GRANULARITY_HEADERS[METRIC_STATE_VERSION]!;

export function emptyMetricState(): MetricState {
  return { tail: { timestamps: new Float64Array(0), values: new Float64Array(0) }, tailFrozen: 0, granularities: [], lastSeq: 0 };
}

function headerSize(bytes: Uint8Array): number {
  const size = HEADERS[bytes[0]!];
  if (size === undefined) throw new Error(`Unknown metric state version ${bytes[0]}`);
  return size;
}

/** `lastSeq` alone, without decoding the rest. */
export function lastSeqOf(bytes: Buffer): number {
  return headerSize(bytes) >= 16 ? bytes.readDoubleLE(8) : 0;
}

export function encodeMetricState(state: MetricState, columnCount: number): Buffer {
  const n = state.tail.timestamps.length;
  const opens = state.granularities.map((g) => g.open?.raw ?? null);
  let size = HEADERS[METRIC_STATE_VERSION]! + 16 * n;
  for (const o of opens) size += GRANULARITY_HEADER + (o?.length ?? 0);
  const out = Buffer.allocUnsafe(size);
  out[0] = METRIC_STATE_VERSION;
  out[1] = state.granularities.length;
  out[2] = columnCount;
  out[3] = 0;
  out.writeUInt32LE(n, 4);
  out.writeDoubleLE(state.lastSeq, 8);
  out.writeUInt32LE(state.tailFrozen, 16);
  let offset = HEADERS[METRIC_STATE_VERSION]!;
  const { timestamps, values } = state.tail;
  out.set(new Uint8Array(timestamps.buffer, timestamps.byteOffset, 8 * n), offset);
  out.set(new Uint8Array(values.buffer, values.byteOffset, 8 * n), offset + 8 * n);
  offset += 16 * n;
  state.granularities.forEach((g, i) => {
    const open = opens[i] ?? null;
    out.writeDoubleLE(g.granularity, offset);
    out.writeDoubleLE(g.open === null ? Number.NaN : g.open.key, offset + 8);
    out.writeDoubleLE(g.oldestSealedKey ?? Number.NaN, offset + 16);
    out.writeUInt32LE(open?.length ?? 0, offset + 24);
    out.writeUInt32LE(g.open?.frozen ?? 0, offset + 28);
    offset += GRANULARITY_HEADER;
    if (open !== null) {
      out.set(open, offset);
      offset += open.length;
    }
  });
  return out;
}

function nullable(v: number): number | null {
  return Number.isNaN(v) ? null : v;
}

interface Entry {
  granularity: number;
  key: number | null;
  oldestSealedKey: number | null;
  offset: number;
  length: number;
  frozen: number;
}

function entries(bytes: Buffer): Entry[] {
  const count = bytes[1]!;
  const granularityHeader = GRANULARITY_HEADERS[bytes[0]!]!;
  let offset = headerSize(bytes) + 16 * bytes.readUInt32LE(4);
  const out: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const length = bytes.readUInt32LE(offset + 24);
    out.push({
      granularity: bytes.readDoubleLE(offset),
      key: nullable(bytes.readDoubleLE(offset + 8)),
      oldestSealedKey: nullable(bytes.readDoubleLE(offset + 16)),
      offset: offset + granularityHeader,
      length,
      frozen: granularityHeader > 28 ? bytes.readUInt32LE(offset + 28) : 0,
    });
    offset += granularityHeader + length;
  }
  return out;
}

function openOf(bytes: Buffer, e: Entry): OpenSplit | null {
  if (e.key === null || e.length === 0) return null;
  return { key: e.key, raw: bytes.subarray(e.offset, e.offset + e.length), frozen: e.frozen };
}

/** The state; its open splits are views into `bytes`. */
export function decodeMetricState(bytes: Buffer): MetricState {
  const n = bytes.readUInt32LE(4);
  const header = headerSize(bytes);
  const timestamps = new Float64Array(n);
  const values = new Float64Array(n);
  new Uint8Array(timestamps.buffer).set(bytes.subarray(header, header + 8 * n));
  new Uint8Array(values.buffer).set(bytes.subarray(header + 8 * n, header + 16 * n));
  return {
    lastSeq: lastSeqOf(bytes),
    tail: { timestamps, values },
    tailFrozen: header >= 20 ? bytes.readUInt32LE(16) : 0,
    granularities: entries(bytes).map((e) => ({
      granularity: e.granularity,
      open: openOf(bytes, e),
      oldestSealedKey: e.oldestSealedKey,
    })),
  };
}

/** The open split of one granularity (its inline rows are views into `bytes`), without decoding the rest. */
export function openSplitOf(bytes: Buffer, granularity: number): OpenSplit | null {
  const e = entries(bytes).find((x) => x.granularity === granularity);
  return e === undefined ? null : openOf(bytes, e);
}
