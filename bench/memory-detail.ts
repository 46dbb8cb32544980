/**
 * Where a server's memory is (`bench:footprint --memory-detail`): per
 * thread, the V8 heaps and buffers bench/memory-probe.ts sampled inside
 * it, at the process' peak RSS and now; and the process' resident pages by
 * kind of mapping, from /proc/PID/smaps.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SAMPLE_MS, type ThreadMemory, type ThreadSample } from './memory-probe.js';

/** Threads sample on their own clocks: a worker's sample this much after the main thread's peak is of the same moment. */
const SAMPLE_SLACK_MS = SAMPLE_MS / 2;

export interface Probe {
  dir: string;
  /** Node options and environment that load the probe into a server. */
  nodeArgs: string[];
  env: Record<string, string>;
  remove(): void;
}

export function memoryProbe(): Probe {
  const dir = mkdtempSync(join(tmpdir(), 'gnocchi-memory-'));
  return {
    dir,
    nodeArgs: ['--import', new URL('./memory-probe.js', import.meta.url).href],
    env: { GNOCCHI_MEMORY_PROBE: dir },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export function readThreads(dir: string): ThreadMemory[] {
  return readdirSync(dir)
    .filter((f) => /^thread-\d+\.json$/.test(f))
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as ThreadMemory)
    .sort((a, b) => a.threadId - b.threadId);
}

/**
 * Each thread's last sample at or before the main thread's sample of highest
 * RSS (a piscina worker samples only while it runs: idle, it blocks in
 * Atomics.wait, and its heap does not change either); none for a thread
 * started later.
 */
export function atPeak(threads: ThreadMemory[]): { at: number; rss: number; anon: number; file: number; samples: Map<number, ThreadSample> } {
  const main = threads.find((t) => t.main)!;
  const peak = main.samples.reduce((a, b) => ((b.rss ?? 0) > (a.rss ?? 0) ? b : a));
  const samples = new Map<number, ThreadSample>();
  for (const t of threads) {
    const before = t.samples.filter((s) => s.at <= peak.at + SAMPLE_SLACK_MS).at(-1);
    if (before !== undefined) samples.set(t.threadId, before);
  }
  return { at: peak.at, rss: peak.rss ?? Number.NaN, anon: peak.anon ?? Number.NaN, file: peak.file ?? Number.NaN, samples };
}

/** Resident bytes of the process by kind of mapping. */
export interface SmapsBreakdown {
  /** The LMDB file (data.mdb under the data directory). */
  lmdb: number;
  /** Other files: node's binary, shared libraries. */
  otherFiles: number;
  /** The brk heap: glibc's main malloc arena. */
  brkHeap: number;
  /** glibc's per-thread malloc arenas: anonymous 64 MiB-aligned reservations (HEAP_MAX_SIZE). */
  arenas: number;
  arenaCount: number;
  stacks: number;
  /** The rest of the anonymous memory: V8's heap pages, large mallocs (mmapped), native modules' own mappings. */
  otherAnon: number;
}

const ARENA = 64 * 1024 * 1024;

export function smapsBreakdown(pid: number, dataDir: string): SmapsBreakdown {
  const out: SmapsBreakdown = { lmdb: 0, otherFiles: 0, brkHeap: 0, arenas: 0, arenaCount: 0, stacks: 0, otherAnon: 0 };
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return out;
  }
  const header = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ (\d+)\s*(.*)$/;
  let kind: keyof SmapsBreakdown | undefined;
  for (const line of text.split('\n')) {
    const h = header.exec(line);
    if (h !== null) {
      const start = Number.parseInt(h[1]!, 16);
      const path = h[5]!;
      const inode = h[4]!;
      if (path.includes(dataDir)) kind = 'lmdb';
      else if (path === '[heap]') kind = 'brkHeap';
      else if (path.startsWith('[stack')) kind = 'stacks';
      else if (inode !== '0') kind = 'otherFiles';
      else if (path === '' && start % ARENA === 0 && h[3]!.startsWith('rw')) {
        kind = 'arenas';
        out.arenaCount++;
      } else kind = 'otherAnon';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss !== null && kind !== undefined && kind !== 'arenaCount') out[kind] += Number(rss[1]) * 1024;
  }
  return out;
}
