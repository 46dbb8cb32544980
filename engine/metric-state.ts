/**
 * Everything processing rewrites for a metric, in one record so an update
 * costs one read and one write: the raw back-window tail, and per
 * granularity the open split (the newest one, still receiving points, kept
 * in the raw split form and carried as bytes: processing appends to it
 * without decoding it) and the key of the oldest sealed split (so retention only scans the
 * split store when something actually expires).
 */
import type { Series } from './aggregation.js';
import { decodeStoredSplit, type SplitColumns } from './split.js';

export interface OpenSplit {
  key: number;
  /** The split in the raw form of `encodeRawSplit`. */
  raw: Uint8Array;
}

export interface GranularityState {
  granularity: number;
  open: OpenSplit | null;
  oldestSealedKey: number | null;
}

export interface MetricState {
  tail: Series;
  granularities: GranularityState[];
  /**
   * The newest incoming record (engine/incoming-batch.ts) whose points for
   * this metric are in this state: records at or below it are consumed.
   */
  lastSeq: number;
}

/** Version 1 (before incoming records were shared by metrics) had no `lastSeq`. */
const VERSION = 2;
const HEADERS: Record<number, number> = { 1: 8, 2: 16 };
const GRANULARITY_HEADER = 28;

export function emptyMetricState(): MetricState {
  return { tail: { timestamps: new Float64Array(0), values: new Float64Array(0) }, granularities: [], lastSeq: 0 };
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
  let size = HEADERS[VERSION]! + 16 * n;
  for (const o of opens) size += GRANULARITY_HEADER + (o?.length ?? 0);
  const out = Buffer.allocUnsafe(size);
  out[0] = VERSION;
  out[1] = state.granularities.length;
  out[2] = columnCount;
  out[3] = 0;
  out.writeUInt32LE(n, 4);
  out.writeDoubleLE(state.lastSeq, 8);
  let offset = HEADERS[VERSION]!;
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
}

function entries(bytes: Buffer): Entry[] {
  const count = bytes[1]!;
  let offset = headerSize(bytes) + 16 * bytes.readUInt32LE(4);
  const out: Entry[] = [];
  for (let i = 0; i < count; i++) {
    const length = bytes.readUInt32LE(offset + 24);
    out.push({
      granularity: bytes.readDoubleLE(offset),
      key: nullable(bytes.readDoubleLE(offset + 8)),
      oldestSealedKey: nullable(bytes.readDoubleLE(offset + 16)),
      offset: offset + GRANULARITY_HEADER,
      length,
    });
    offset += GRANULARITY_HEADER + length;
  }
  return out;
}

function openOf(bytes: Buffer, e: Entry): OpenSplit | null {
  if (e.key === null || e.length === 0) return null;
  return { key: e.key, raw: bytes.subarray(e.offset, e.offset + e.length) };
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
    granularities: entries(bytes).map((e) => ({
      granularity: e.granularity,
      open: openOf(bytes, e),
      oldestSealedKey: e.oldestSealedKey,
    })),
  };
}

/** Only the open split of one granularity, only column `only`: what a read needs. */
export function openSplitOf(bytes: Buffer, granularity: number, only: number): { key: number; data: SplitColumns } | null {
  const e = entries(bytes).find((x) => x.granularity === granularity);
  const open = e === undefined ? null : openOf(bytes, e);
  if (open === null) return null;
  return { key: open.key, data: decodeStoredSplit(open.raw, open.key, e!.granularity, bytes[2]!, only) };
}
