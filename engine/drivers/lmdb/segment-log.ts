/**
 * The embedded mode's incoming records, in append-only segment files under
 * `<dataDir>/incoming/` rather than in the LMDB environment. Records wait
 * there only until processing consumes them, but a burst of them grew the
 * LMDB file to their high-water mark, which LMDB never gives back (46 MB of a
 * 99 MB file after 2.3M points, bench/footprint.ts); a segment file is
 * deleted once no record in it is needed.
 *
 * A record's seq is its segment's number times SEGMENT_SPAN plus its byte
 * offset there, so any thread reads it from its seq alone. On disk: u32 body
 * length, u32 CRC-32 of the body, the body (little-endian). Appends queued
 * while a write is under way go out together in the next one, which is
 * fdatasync'ed before they resolve. Segments roll past ROLL_BYTES, and the
 * one appends go to is closed once all its records are dropped. Segment
 * numbers are reserved a block at a time in meta `incomingSegment`, where a
 * restart goes on (or above its segment files), so that seqs grow across
 * restarts even once every file is gone.
 *
 * Dropped records are noted beside their segment (`<segment>.drops`: u32
 * offsets), written after the fact and never synced: a note lost in a crash
 * only makes a restart scan that record again, and processing skips what the
 * metrics' states say they consumed. Reading stops at a segment's first
 * damaged record (a write torn by a crash was never acknowledged). Records
 * of the previous layout (LMDB `incoming_batches`, below the first segment's
 * seqs) are still read and dropped through LmdbIncomingLog until consumed.
 *
 * The writer's state (the numbering, the live records) is set up on the
 * first append, scan, head or drop: a worker thread's log only fetches.
 */
import { appendFile, close, closeSync, fdatasync, fsync, mkdir, open, openSync, readdirSync, readFileSync, readSync, unlink, writev } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { crc32 } from '@node-rs/crc32';
import { grown } from '../../../formats/grown.js';
import type { Storage } from '../../storage.js';
import type { IncomingLog, Shard } from '../types.js';
import { LmdbIncomingLog } from './incoming.js';

export const SEGMENT_SPAN = 2 ** 30;
/**
 * Consumed records stay on disk until their whole segment is: small segments
 * give the room back soon, large ones cost fewer files.
 */
const ROLL_BYTES = 8 * 1024 ** 2;
const HEADER_BYTES = 8;
const SEGMENT_NAME = /^([0-9a-f]{12})\.(seg|drops)$/;
const META_KEY = 'incomingSegment';
/** Segment numbers reserved in meta at a time: one LMDB write per this many segments. */
const RESERVED_SEGMENTS = 1024;

const writevAsync = promisify(writev);
const openAsync = promisify(open);
const closeAsync = promisify(close);
const fsyncAsync = promisify(fsync);
const mkdirAsync = promisify(mkdir);
const unlinkAsync = promisify(unlink);
const fdatasyncAsync = promisify(fdatasync);
const appendFileAsync = promisify(appendFile);

export function incomingDir(dataDir: string): string {
  return join(dataDir, 'incoming');
}

const segmentOf = (seq: number): number => Math.floor(seq / SEGMENT_SPAN);
const segmentName = (segment: number, suffix = 'seg'): string => `${segment.toString(16).padStart(12, '0')}.${suffix}`;
export const segmentPath = (dir: string, segment: number, suffix = 'seg'): string => join(dir, segmentName(segment, suffix));

/** The segment numbers of the files in `dir` (`suffix`: segments, or their drop notes), ascending. */
export function segmentFiles(dir: string, suffix = 'seg'): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names.flatMap((name) => {
    const m = SEGMENT_NAME.exec(name);
    return m === null || m[2] !== suffix ? [] : [parseInt(m[1]!, 16)];
  }).sort((a, b) => a - b);
}

/**
 * Visits the whole, undamaged records of a segment's bytes in order (offset
 * of the header, body); stops at the first record that is not.
 */
export function walkSegment(bytes: Uint8Array, visit: (offset: number, body: Uint8Array) => void): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 0;
  while (offset + HEADER_BYTES <= bytes.length) {
    const length = view.getUint32(offset, true);
    const end = offset + HEADER_BYTES + length;
    if (end > bytes.length) return;
    const body = bytes.subarray(offset + HEADER_BYTES, end);
    if (crc32(body) !== view.getUint32(offset + 4, true)) return;
    visit(offset, body);
    offset = end;
  }
}

/**
 * Visits the records of the segment files in `dir` that no drops file
 * notes, in seq order: what a restart finds pending (the writer's start, a
 * backup).
 */
export function readSegments(dir: string, visit: (seq: number, body: Uint8Array) => void): void {
  for (const segment of segmentFiles(dir)) {
    const dropped = new Set(droppedOffsets(segmentPath(dir, segment, 'drops')));
    walkSegment(readFileSync(segmentPath(dir, segment)), (offset, body) => {
      if (!dropped.has(offset)) visit(segment * SEGMENT_SPAN + offset, body);
    });
  }
}

/** The offsets a drops file notes (none when it is missing); a write cut short counts what it holds whole. */
function droppedOffsets(path: string): Uint32Array {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Uint32Array(0);
    throw err;
  }
  return new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + (bytes.length & ~3)));
}

/** Deletes files in order; one already gone is fine. */
async function removeFiles(...paths: string[]): Promise<void> {
  for (const path of paths) {
    await unlinkAsync(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
}

function header(body: Uint8Array): Buffer {
  const bytes = Buffer.allocUnsafe(HEADER_BYTES);
  bytes.writeUInt32LE(body.length, 0);
  bytes.writeUInt32LE(crc32(body), 4);
  return bytes;
}

async function writeAll(fd: number, buffers: Uint8Array[], position: number): Promise<void> {
  let pending = buffers;
  while (pending.length > 0) {
    let { bytesWritten: written } = await writevAsync(fd, pending, position);
    position += written;
    const rest: Uint8Array[] = [];
    for (const b of pending) {
      if (written >= b.length) written -= b.length;
      else {
        rest.push(b.subarray(written));
        written = 0;
      }
    }
    pending = rest;
  }
}

/**
 * Bytes records are read into, reused from record to record: fetch's bytes
 * are valid during the visit only. A buffer per record (~570 KB for a push
 * of 10,000 metrics) on every batch of a processing thread left ~60 MB of
 * freed pages in each thread's malloc arena. A buffer grown past
 * KEPT_READ_BYTES is let go after the fetch.
 */
class ReadBuffer {
  private bytes = new Uint8Array(0);

  take(length: number): Uint8Array {
    this.bytes = grown(this.bytes, length);
    return this.bytes.subarray(0, length);
  }

  release(): void {
    if (this.bytes.length > KEPT_READ_BYTES) this.bytes = new Uint8Array(0);
  }
}

const KEPT_READ_BYTES = 4 * 1024 ** 2;

/** Segments opened for reading records by seq, until closed. */
class SegmentFiles {
  private readonly fds = new Map<number, number | undefined>();

  constructor(
    private readonly dir: string,
    private readonly buffer: ReadBuffer,
  ) {}

  /** A record's body (valid until the next read), or undefined once its segment is gone. */
  read(seq: number): Uint8Array | undefined {
    const segment = segmentOf(seq);
    const fd = this.open(segment);
    if (fd === undefined) return undefined;
    const position = seq - segment * SEGMENT_SPAN;
    const head = Buffer.allocUnsafe(HEADER_BYTES);
    if (readSync(fd, head, 0, HEADER_BYTES, position) !== HEADER_BYTES) throw new Error(`incoming record ${seq}: its header is cut short`);
    const body = this.buffer.take(head.readUInt32LE(0));
    if (readSync(fd, body, 0, body.length, position + HEADER_BYTES) !== body.length || crc32(body) !== head.readUInt32LE(4)) {
      throw new Error(`incoming record ${seq} in ${segmentPath(this.dir, segment)} is damaged`);
    }
    return body;
  }

  private open(segment: number): number | undefined {
    if (this.fds.has(segment)) return this.fds.get(segment);
    let fd: number | undefined;
    try {
      fd = openSync(segmentPath(this.dir, segment), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    this.fds.set(segment, fd);
    return fd;
  }

  close(): void {
    for (const fd of this.fds.values()) if (fd !== undefined) closeSync(fd);
    this.fds.clear();
  }
}

interface Appending {
  body: Uint8Array;
  /**
   * Its header, made as the append is asked for: the body was just encoded
   * and is still in the CPU's cache. Made when its write starts, after the
   * encoding of the pushes queued behind an fdatasync had evicted it, the
   * checksum of a 570 KB time-major record took a median 264 us rather than
   * 121 (node:zlib's, bench:protocols timemajor at load 4).
   */
  head: Buffer;
  resolve(seq: number): void;
  reject(err: unknown): void;
}

interface Writer {
  /** Per segment, the seqs of its records still needed. */
  live: Map<number, Set<number>>;
  active: { segment: number; fd: number; size: number } | undefined;
  /** The number the next segment may take at least. */
  nextSegment: number;
  /** Meta `incomingSegment`: no segment numbered this or above was ever started. */
  reserved: number;
  newest: number;
}

export class SegmentIncomingLog implements IncomingLog {
  readonly shards = 1;
  readonly shared = false;
  private readonly dir: string;
  private readonly legacy: LmdbIncomingLog;
  private starting: Promise<Writer> | undefined;
  /** The writer's state once started. */
  private state: Writer | undefined;
  /** Whether appends are being written: the segment they go to stays, whatever is dropped meanwhile. */
  private writing = false;
  /** The previous layout's seqs are at most this; no segment seq is. */
  private legacyEnd: number | undefined;
  private queue: Appending[] = [];
  private flushing: Promise<void> | undefined;
  /** See hurry. */
  private readonly marks = new Map<Shard, number>();
  private readonly readBuffer = new ReadBuffer();
  /** Offsets dropped per segment, not yet noted in its drops file. */
  private dropped = new Map<number, number[]>();
  private noting: Promise<void> | undefined;
  /** The note being written now: a segment retired meanwhile waits for it, lest it recreate or hold its drops file. */
  private noteInFlight: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly storage: Storage,
    dataDir: string,
    /** A segment takes no more records once this long. */
    private readonly rollBytes = ROLL_BYTES,
  ) {
    this.dir = incomingDir(dataDir);
    this.legacy = new LmdbIncomingLog(storage);
  }

  shardOf(): Shard {
    return 0;
  }

  append(records: ReadonlyMap<Shard, Uint8Array>): Promise<Map<Shard, number>> {
    return Promise.all(
      [...records].map(
        ([shard, body]) =>
          new Promise<[Shard, number]>((resolve, reject) => {
            this.queue.push({ body, head: header(body), resolve: (seq) => resolve([shard, seq]), reject });
            this.flushing ??= this.flush();
          }),
      ),
    ).then((seqs) => new Map(seqs));
  }

  private async flush(): Promise<void> {
    this.writing = true;
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0);
        try {
          const seqs = await this.write(group);
          group.forEach((a, i) => a.resolve(seqs[i]!));
        } catch (err) {
          for (const a of group) a.reject(err);
        }
      }
    } finally {
      this.writing = false;
      this.flushing = undefined;
    }
  }

  /** Writes appends in order, rolling to a new segment past ROLL_BYTES; their seqs once durable. */
  private async write(appends: readonly Appending[]): Promise<number[]> {
    const writer = await this.open();
    const seqs: number[] = [];
    let i = 0;
    while (i < appends.length) {
      const active = await this.activeSegment(writer);
      const buffers: Uint8Array[] = [];
      const given: number[] = [];
      let size = active.size;
      for (; i < appends.length && (buffers.length === 0 || size < this.rollBytes); i++) {
        const { body, head } = appends[i]!;
        given.push(active.segment * SEGMENT_SPAN + size);
        buffers.push(head, body);
        size += HEADER_BYTES + body.length;
      }
      // A failed write leaves `size` where it was: the next one overwrites its remains.
      await writeAll(active.fd, buffers, active.size);
      await fdatasyncAsync(active.fd);
      active.size = size;
      const live = writer.live.get(active.segment)!;
      for (const seq of given) live.add(seq);
      writer.newest = given.at(-1)!;
      seqs.push(...given);
    }
    return seqs;
  }

  /** The segment to append to: a new one when there is none yet or the current one is full. */
  private async activeSegment(writer: Writer): Promise<NonNullable<Writer['active']>> {
    const current = writer.active;
    if (current !== undefined && current.size < this.rollBytes) return current;
    writer.active = undefined;
    if (current !== undefined) {
      await closeAsync(current.fd);
      await this.retireIfDone(writer, current.segment);
    }
    const segment = writer.nextSegment++;
    if (segment >= writer.reserved) {
      writer.reserved = segment + RESERVED_SEGMENTS;
      await this.storage.meta.put(META_KEY, writer.reserved);
    }
    await mkdirAsync(this.dir, { recursive: true });
    const fd = await openAsync(segmentPath(this.dir, segment), 'wx');
    // The file's name must outlive a crash as surely as the records synced into it.
    const dirFd = await openAsync(this.dir, 'r');
    try {
      await fsyncAsync(dirFd);
    } finally {
      await closeAsync(dirFd);
    }
    writer.active = { segment, fd, size: 0 };
    writer.live.set(segment, new Set());
    return writer.active;
  }

  private open(): Promise<Writer> {
    this.starting ??= this.start().catch((err: unknown) => {
      this.starting = undefined;
      throw err;
    });
    return this.starting;
  }

  /**
   * The writer's state, found from the files: every whole record of every
   * segment that no drops file notes is live, the next segment numbered above
   * them all, above meta `incomingSegment` and above the previous layout's seqs.
   */
  private async start(): Promise<Writer> {
    const live = new Map<number, Set<number>>();
    let newest = this.legacyHead();
    const reserved = Number(this.storage.meta.get(META_KEY) ?? 0);
    let nextSegment = Math.max(reserved, segmentOf(newest) + 1);
    for (const segment of segmentFiles(this.dir)) {
      live.set(segment, new Set());
      nextSegment = Math.max(nextSegment, segment + 1);
    }
    readSegments(this.dir, (seq) => {
      live.get(segmentOf(seq))!.add(seq);
      newest = Math.max(newest, seq);
    });
    for (const segment of segmentFiles(this.dir, 'drops')) {
      if (!live.has(segment)) await removeFiles(segmentPath(this.dir, segment, 'drops'));
    }
    const writer: Writer = { live, active: undefined, nextSegment, reserved, newest };
    for (const segment of [...live.keys()]) await this.retireIfDone(writer, segment);
    this.state = writer;
    return writer;
  }

  /**
   * Whether a seq is the previous layout's: those are at most its meta
   * `incomingSeq` (kept ahead of them), which nothing raises any more, and
   * every segment is numbered above it.
   */
  private isLegacy(seq: number): boolean {
    return seq <= this.legacyHead();
  }

  private legacyHead(): number {
    this.legacyEnd ??= Math.max(Number(this.storage.meta.get('incomingSeq') ?? 0), ...this.storage.incomingBatches.getKeys({ reverse: true, limit: 1 }));
    return this.legacyEnd;
  }

  private appendingTo(writer: Writer, segment: number): boolean {
    return this.writing && writer.active?.segment === segment;
  }

  /**
   * Deletes a segment no record of which is needed, unless a write to it is
   * under way; the next append after the active one goes starts a new one.
   */
  private async retireIfDone(writer: Writer, segment: number): Promise<void> {
    if (writer.live.get(segment)?.size !== 0 || this.appendingTo(writer, segment)) return;
    const active = writer.active;
    if (active?.segment === segment) writer.active = undefined;
    writer.live.delete(segment);
    this.dropped.delete(segment);
    if (active?.segment === segment) await closeAsync(active.fd);
    await this.noteInFlight;
    // The drops file goes last: without its segment it means nothing.
    await removeFiles(segmentPath(this.dir, segment), segmentPath(this.dir, segment, 'drops'));
  }

  /** Notes the drops gathered since the last note, a write per segment. */
  private noteDrops(): void {
    this.noting ??= (async () => {
      while (this.dropped.size > 0) {
        const batch = this.dropped;
        this.dropped = new Map();
        this.noteInFlight = Promise.all(
          [...batch].map(([segment, offsets]) =>
            appendFileAsync(segmentPath(this.dir, segment, 'drops'), Buffer.from(Uint32Array.from(offsets).buffer)),
          ),
          // A note not written (a full disk) only costs scanning those records again after a restart.
        ).catch(() => {});
        await this.noteInFlight;
      }
    })().finally(() => (this.noting = undefined));
  }

  async scan(shard: Shard, visit: (seq: number, bytes: Uint8Array) => void, after = 0): Promise<void> {
    const writer = await this.open();
    await this.legacy.scan(shard, visit, after);
    for (const [segment, seqs] of [...writer.live].sort(([a], [b]) => a - b)) {
      if (seqs.size === 0 || (segment + 1) * SEGMENT_SPAN <= after) continue;
      walkSegment(readFileSync(segmentPath(this.dir, segment)), (offset, body) => {
        const seq = segment * SEGMENT_SPAN + offset;
        if (seq > after && seqs.has(seq)) visit(seq, body);
      });
    }
  }

  async head(): Promise<number> {
    return (await this.open()).newest;
  }

  async fetch(shard: Shard, seqs: readonly number[], visit: (seq: number, bytes: Uint8Array) => void): Promise<void> {
    const old = seqs.filter((seq) => this.isLegacy(seq));
    if (old.length > 0) await this.legacy.fetch(shard, old, visit);
    // Opened for this call only: a descriptor kept open would keep a segment deleted meanwhile on the disk.
    const files = new SegmentFiles(this.dir, this.readBuffer);
    try {
      for (const seq of seqs) {
        if (this.isLegacy(seq) || this.state?.live.get(segmentOf(seq))?.has(seq) === false) continue;
        const body = files.read(seq);
        if (body !== undefined) visit(seq, body);
      }
    } finally {
      files.close();
      this.readBuffer.release();
    }
  }

  async drop(shard: Shard, seq: number): Promise<void> {
    if (this.isLegacy(seq)) return this.legacy.drop(shard, seq);
    const writer = await this.open();
    const segment = segmentOf(seq);
    const live = writer.live.get(segment);
    if (live?.delete(seq) !== true) return;
    if (live.size === 0 && !this.appendingTo(writer, segment)) return this.retireIfDone(writer, segment);
    const offsets = this.dropped.get(segment);
    if (offsets === undefined) this.dropped.set(segment, [seq - segment * SEGMENT_SPAN]);
    else offsets.push(seq - segment * SEGMENT_SPAN);
    this.noteDrops();
  }

  /** In memory: the one shard's holder is this process, whose refreshes process at once. */
  async hurry(shard: Shard, seq: number): Promise<void> {
    if (seq > (this.marks.get(shard) ?? 0)) this.marks.set(shard, seq);
  }

  async hurried(): Promise<Map<Shard, number>> {
    return new Map(this.marks);
  }

  /** Waits for the appends under way, then closes the files. */
  async close(): Promise<void> {
    await this.flushing;
    await this.noting;
    const active = this.state?.active;
    if (active !== undefined) await closeAsync(active.fd);
    this.state = undefined;
    this.starting = undefined;
  }
}
