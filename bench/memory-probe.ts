/**
 * Preloaded into a server by `bench:footprint --memory-detail` (node
 * `--import`; worker threads inherit it, so it runs in the main thread and
 * in every piscina worker): each thread samples its own V8 heap (young and
 * old generation, large objects, code), the ArrayBuffers and external memory
 * of its isolate, and the main thread the process' resident memory by kind
 * (/proc/self/status), every SAMPLE_MS, into DIR/thread-ID.json (DIR from
 * GNOCCHI_MEMORY_PROBE). The bench reads the files while the server runs:
 * a thread's last sample is at most SAMPLE_MS old, a thread that exited
 * keeps its last.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { isMainThread, threadId } from 'node:worker_threads';

export const SAMPLE_MS = 250;

/** Bytes of one thread (the process' RSS kinds in the main thread only). */
export interface ThreadSample {
  at: number;
  /** V8 heap committed, all spaces, and in use. */
  heapTotal: number;
  heapUsed: number;
  /** Young generation (new_space) committed. */
  young: number;
  /** Old generation committed: old, code, map and shared spaces. */
  old: number;
  /** Large objects committed (large_object, code_large_object, new_large_object). */
  large: number;
  /** V8's own malloc'ed memory, and its peak. */
  malloced: number;
  arrayBuffers: number;
  external: number;
  rss?: number;
  anon?: number;
  file?: number;
}

export interface ThreadMemory {
  threadId: number;
  main: boolean;
  /** What the module of a worker thread runs (workers/NAME.js), `main` for the main thread. */
  role: string;
  last: ThreadSample;
  /** Sample by sample (the bench picks the one nearest the process' peak). */
  samples: ThreadSample[];
}

function statusBytes(status: string, name: string): number {
  return Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
}

function sample(): ThreadSample {
  const heap = getHeapStatistics();
  let young = 0;
  let old = 0;
  let large = 0;
  for (const space of getHeapSpaceStatistics()) {
    if (space.space_name === 'new_space') young += space.space_size;
    else if (space.space_name.includes('large_object')) large += space.space_size;
    else old += space.space_size;
  }
  const usage = process.memoryUsage();
  const s: ThreadSample = {
    at: Date.now(),
    heapTotal: heap.total_heap_size,
    heapUsed: heap.used_heap_size,
    young,
    old,
    large,
    malloced: heap.malloced_memory,
    arrayBuffers: usage.arrayBuffers,
    external: usage.external,
  };
  if (isMainThread) {
    const status = readFileSync('/proc/self/status', 'utf8');
    s.rss = statusBytes(status, 'VmRSS');
    s.anon = statusBytes(status, 'RssAnon');
    s.file = statusBytes(status, 'RssFile');
  }
  return s;
}

const dir = process.env.GNOCCHI_MEMORY_PROBE;
if (dir !== undefined && dir !== '') {
  const { workerData } = await import('node:worker_threads');
  const module = (workerData as { module?: string } | null)?.module;
  const name = isMainThread ? 'main' : (/\/([^/]+)\.js$/.exec(module ?? '')?.[1] ?? 'worker');
  const samples: ThreadSample[] = [];
  const file = join(dir, `thread-${threadId}.json`);
  const write = () => {
    const s = sample();
    samples.push(s);
    const memory: ThreadMemory = { threadId, main: isMainThread, role: name, last: s, samples };
    writeFileSync(`${file}.tmp`, JSON.stringify(memory));
    renameSync(`${file}.tmp`, file);
  };
  write();
  setInterval(write, SAMPLE_MS).unref();
}
