// The embedded incoming log in segment files: records come back from their
// seq alone (a worker thread's log), segments are deleted once every record
// in them is dropped, drops and seqs survive restarts, a torn tail is
// ignored, and records of the previous layout (LMDB incoming_batches) are
// still served until consumed.
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { incomingDir, SEGMENT_SPAN, SegmentIncomingLog, segmentFiles, segmentPath } from '../../../../engine/drivers/lmdb/segment-log.js';
import { openStorage, type Storage } from '../../../../engine/storage.js';

const text = (b: Uint8Array) => Buffer.from(b).toString();
const body = (s: string) => new Uint8Array(Buffer.from(s));
/** Small segments, so that a few records roll over. */
const ROLL = 64;

class Dir {
  readonly path = mkdtempSync(join(tmpdir(), 'gnocchi-segments-'));
  storage: Storage = openStorage(this.path);
  log = new SegmentIncomingLog(this.storage, this.path, ROLL);

  async append(...names: string[]): Promise<number[]> {
    return Promise.all(names.map(async (n) => (await this.log.append(new Map([[0, body(n)]]))).get(0)!));
  }

  async scanned(after?: number): Promise<[number, string][]> {
    const seen: [number, string][] = [];
    await this.log.scan(0, (seq, b) => seen.push([seq, text(b)]), after);
    return seen;
  }

  /** A log that has only fetched, as a worker thread's. */
  async fetchedElsewhere(seqs: number[]): Promise<[number, string][]> {
    const reader = new SegmentIncomingLog(this.storage, this.path, ROLL);
    const seen: [number, string][] = [];
    await reader.fetch(0, seqs, (seq, b) => seen.push([seq, text(b)]));
    await reader.close();
    return seen;
  }

  segments(): number[] {
    return segmentFiles(incomingDir(this.path));
  }

  async restart(): Promise<void> {
    await this.log.close();
    await this.storage.close();
    this.storage = openStorage(this.path);
    this.log = new SegmentIncomingLog(this.storage, this.path, ROLL);
  }

  async close(): Promise<void> {
    await this.log.close();
    await this.storage.close();
    rmSync(this.path, { recursive: true, force: true });
  }
}

describe('segment incoming log', () => {
  const dirs: Dir[] = [];
  const dir = () => {
    const d = new Dir();
    dirs.push(d);
    return d;
  };
  afterEach(async () => {
    for (const d of dirs.splice(0)) await d.close();
  });

  it('gives concurrent appends distinct growing seqs, read back by scan here and by fetch from another log', async () => {
    const d = dir();
    const names = Array.from({ length: 20 }, (_, i) => `record ${i} ${'x'.repeat(i)}`);
    const seqs = await d.append(...names);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(d.segments().length, 'records past the roll size go to new segments').toBeGreaterThan(1);
    const expected = seqs.map((seq, i) => [seq, names[i]]);
    expect(await d.scanned()).toEqual(expected);
    expect(await d.scanned(seqs[9])).toEqual(expected.slice(10));
    expect(await d.fetchedElsewhere([seqs[0]!, seqs[19]!])).toEqual([expected[0], expected[19]]);
    expect(await d.log.head()).toBe(seqs[19]);
  });

  it('reads the records of a fetch, longer and shorter ones in turn, each whole while visited', async () => {
    const d = dir();
    const names = ['x'.repeat(50), 'y', 'z'.repeat(40), 'w'.repeat(60)];
    const seqs = await d.append(...names);
    expect(await d.fetchedElsewhere(seqs)).toEqual(seqs.map((seq, i) => [seq, names[i]]));
  });

  it('deletes a segment once every record in it is dropped, the one appends go to included', async () => {
    const d = dir();
    const [a, b, c] = await d.append('a'.repeat(40), 'b'.repeat(40), 'c');
    const segment = (seq: number) => Math.floor(seq / SEGMENT_SPAN);
    expect(segment(a!)).toBeLessThan(segment(c!));
    await d.log.drop(0, a!);
    await d.log.drop(0, a!);
    expect(d.segments(), 'one record of the first segment is still needed').toContain(segment(a!));
    await d.log.drop(0, b!);
    expect(d.segments()).not.toContain(segment(a!));
    expect(await d.fetchedElsewhere([a!, b!, c!]), 'a deleted segment is no record').toEqual([[c, 'c']]);
    await d.log.drop(0, c!);
    expect(d.segments()).toEqual([]);
    const [e] = await d.append('e');
    expect(segment(e!), 'the next append starts a new segment').toBeGreaterThan(segment(c!));
    expect(await d.scanned()).toEqual([[e, 'e']]);
  });

  it('keeps the segment a write is under way to when its last record is dropped meanwhile', async () => {
    const d = dir();
    const [a] = await d.append('a');
    const writing = d.log.append(new Map([[0, body('b')]]));
    await d.log.drop(0, a!);
    const b = (await writing).get(0)!;
    expect(Math.floor(b / SEGMENT_SPAN)).toBe(Math.floor(a! / SEGMENT_SPAN));
    expect(await d.scanned()).toEqual([[b, 'b']]);
    expect(await d.fetchedElsewhere([b])).toEqual([[b, 'b']]);
  });

  it('leaves no deleted segment open in a log that only fetches (its blocks would stay on the disk)', async () => {
    const d = dir();
    const [a, b, c] = await d.append('a'.repeat(40), 'b'.repeat(40), 'c');
    const reader = new SegmentIncomingLog(d.storage, d.path, ROLL);
    try {
      await reader.fetch(0, [a!], () => {});
      await d.log.drop(0, a!);
      await d.log.drop(0, b!);
      expect(d.segments()).not.toContain(Math.floor(a! / SEGMENT_SPAN));
      await reader.fetch(0, [c!], () => {});
      const deletedOpen = readdirSync('/proc/self/fd').flatMap((fd) => {
        try {
          return [readlinkSync(`/proc/self/fd/${fd}`)];
        } catch {
          return [];
        }
      }).filter((target) => target.startsWith(incomingDir(d.path)) && target.endsWith('(deleted)'));
      expect(deletedOpen).toEqual([]);
    } finally {
      await reader.close();
    }
  });

  it('keeps drops and numbering across restarts, even once every segment is gone', async () => {
    const d = dir();
    const [a, b] = await d.append('a', 'b');
    await d.log.drop(0, a!);
    await d.restart();
    expect(await d.scanned(), 'a dropped record stays dropped').toEqual([[b, 'b']]);
    await d.log.drop(0, b!);
    expect(d.segments(), 'the former active segment goes once it is consumed').toEqual([]);
    expect(readdirSync(incomingDir(d.path)), 'its drops file goes with it').toEqual([]);
    await d.restart();
    const [c] = await d.append('c');
    expect(c).toBeGreaterThan(b!);
    expect(await d.scanned()).toEqual([[c, 'c']]);
  });

  /** Bodies of every size class a checksum may treat apart (none, a byte, unaligned tails, a time-major record's size). */
  const CHECKSUMMED: [string, Buffer][] = [
    ['empty', Buffer.alloc(0)],
    ['one byte', Buffer.from([0xa5])],
    ['odd-sized', Buffer.from('incoming record of 37 bytes, or so..')],
    ['570 KB of varied bytes', Buffer.from(Uint32Array.from({ length: 570_000 / 4 }, (_, i) => Math.imul(i, 2654435761)).buffer)],
  ];

  it.each(CHECKSUMMED)('heads a record (%s) with its length and the CRC-32 node:zlib gives, as segments written before', async (_, bytes) => {
    const d = dir();
    const seq = (await d.log.append(new Map([[0, bytes]]))).get(0)!;
    const segment = Math.floor(seq / SEGMENT_SPAN);
    const file = readFileSync(segmentPath(incomingDir(d.path), segment));
    const at = seq - segment * SEGMENT_SPAN;
    expect([file.readUInt32LE(at), file.readUInt32LE(at + 4)]).toEqual([bytes.length, crc32(bytes)]);
  });

  it.each(CHECKSUMMED)('reads a record (%s) a segment holds with node:zlib\'s CRC-32', async (_, bytes) => {
    const d = dir();
    await d.log.close();
    const head = Buffer.alloc(8);
    head.writeUInt32LE(bytes.length, 0);
    head.writeUInt32LE(crc32(bytes), 4);
    mkdirSync(incomingDir(d.path), { recursive: true });
    writeFileSync(segmentPath(incomingDir(d.path), 1), Buffer.concat([head, bytes]));
    await d.restart();
    const seen: Buffer[] = [];
    await d.log.scan(0, (__, b) => seen.push(Buffer.from(b)));
    expect(seen).toEqual([bytes]);
  });

  it.each([
    ['cut short (a header announcing more bytes than were written)', [200, 0, 0, 0, 1, 2, 3, 4, 5]],
    ['whole but damaged (its checksum does not match)', [3, 0, 0, 0, 1, 2, 3, 4, 7, 8, 9]],
  ])('ignores a tail record %s after a crash and appends to a new segment', async (_, tail) => {
    const d = dir();
    const [a] = await d.append('whole');
    const [file] = readdirSync(incomingDir(d.path));
    await d.log.close();
    appendFileSync(join(incomingDir(d.path), file!), Buffer.from(tail));
    await d.restart();
    expect(await d.scanned()).toEqual([[a, 'whole']]);
    const [b] = await d.append('after');
    expect(Math.floor(b! / SEGMENT_SPAN)).toBeGreaterThan(Math.floor(a! / SEGMENT_SPAN));
    expect(await d.scanned()).toEqual([[a, 'whole'], [b, 'after']]);
  });

  it('serves the previous layout\'s records until dropped, numbering above them', async () => {
    const d = dir();
    await d.log.close();
    await d.storage.incomingBatches.put(7, Buffer.from('old seven'));
    await d.storage.meta.put('incomingSeq', 1_000_007);
    await d.restart();
    const [n] = await d.append('new');
    expect(n).toBeGreaterThan(1_000_007);
    expect(await d.scanned()).toEqual([[7, 'old seven'], [n, 'new']]);
    expect(await d.fetchedElsewhere([7, n!])).toEqual([[7, 'old seven'], [n, 'new']]);
    await d.log.drop(0, 7);
    await d.storage.root.committed;
    expect(d.storage.incomingBatches.get(7)).toBeUndefined();
    expect(await d.scanned()).toEqual([[n, 'new']]);
  });

  it('leaves no drops file behind a segment that is gone', async () => {
    const d = dir();
    const [a] = await d.append('a');
    await d.log.close();
    appendFileSync(join(incomingDir(d.path), `${(Math.floor(a! / SEGMENT_SPAN) + 5).toString(16).padStart(12, '0')}.drops`), Buffer.alloc(4));
    await d.restart();
    expect(await d.scanned()).toEqual([[a, 'a']]);
    expect(readdirSync(incomingDir(d.path)).filter((n) => n.endsWith('.drops'))).toEqual([]);
  });
});
