/**
 * What a data directory's LMDB environment holds: per named database its
 * records, key and value bytes and B-tree pages, the file's pages used and
 * free, and the points stored (rows of sealed and open splits, raw tail
 * points), so that the bytes a point costs can be traced to the database
 * that spends them. Read-only: runs beside a server.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from 'lmdb';
import type { ArchivePolicy } from './archive-policy.js';
import { decodeMetricState } from './metric-state.js';
import { silentProgress, type Progress, type ProgressTask } from './progress.js';
import { decodeStoredSplit, rawRowCount, type SplitColumns } from './split.js';
import { decodeChunk } from './state-chunks.js';
import { incomingDir, segmentFiles, segmentPath } from './drivers/lmdb/segment-log.js';
import { dbPath, DUP_SORT_DBS, type Storage } from './storage.js';

/** A B-tree's figures as LMDB's mdb_stat gives them (lmdb-js getStats()). */
interface TreeStats {
  pageSize: number;
  treeDepth: number;
  treeBranchPageCount: number;
  treeLeafPageCount: number;
  entryCount: number;
  overflowPages: number;
}

/** The root's getStats(): its own tree (the catalogue of named databases), the environment, the free list's tree. */
interface EnvironmentStats extends TreeStats {
  lastPageNumber: number;
  free: TreeStats;
}

function treeStats(db: { getStats(): unknown }): TreeStats {
  return db.getStats() as TreeStats;
}

/** Records in a database, from LMDB's own count (no walk). */
export function entryCount(db: { getStats(): unknown }): number {
  return treeStats(db).entryCount;
}

function pagesOf(s: TreeStats): number {
  return s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages;
}

/** LMDB's two meta pages, at the head of the file. */
const META_PAGES = 2;

export interface DatabaseStats {
  /** The LMDB name (engine/storage.ts maps them to the engine's fields). */
  name: string;
  records: number;
  keyBytes: number;
  valueBytes: number;
  treeDepth: number;
  branchPages: number;
  leafPages: number;
  /** Pages of values too large for a leaf page, each value on its own run of pages. */
  overflowPages: number;
  /** All its pages times the page size: what it costs in the file. */
  bytes: number;
}

export interface PointStats {
  /** Rows of sealed splits (one row: one period of one granularity, all methods). */
  sealedRows: number;
  /** Rows of open splits, inline in states and in chunks. */
  openRows: number;
  /** Raw points kept for the back window, inline in states and in chunks. */
  tailPoints: number;
  /** Sealed splits that do not decode (see `gnocchi-ts check`): their rows are not counted. */
  unreadableSplits: number;
}

export interface StorageStats {
  fileBytes: number;
  pageSize: number;
  /** Pages the file spans: LMDB's last page number + 1. */
  filePages: number;
  /** Pages of every tree: the named databases, the catalogue, the free list, and the meta pages. */
  usedPages: number;
  /** Pages no tree uses: reusable, or kept for readers of older snapshots. */
  freePages: number;
  databases: DatabaseStats[];
  metrics: number;
  resources: number;
  splits: number;
  points: PointStats;
  /** sealedRows + openRows + tailPoints. */
  storedPoints: number;
  /** Bytes of used pages per stored point; null without points. */
  bytesPerPoint: number | null;
  /** The incoming segment files beside the environment (engine/drivers/lmdb/segment-log.ts). */
  incoming: { segments: number; bytes: number };
}

/** A running server deletes segments as it goes: one gone since it was listed counts nothing. */
function incomingFiles(dataDir: string): StorageStats['incoming'] {
  const dir = incomingDir(dataDir);
  const segments = segmentFiles(dir);
  const files = [...segments.map((n) => segmentPath(dir, n)), ...segmentFiles(dir, 'drops').map((n) => segmentPath(dir, n, 'drops'))];
  const bytes = files.reduce((sum, path) => sum + (statSync(path, { throwIfNoEntry: false })?.size ?? 0), 0);
  return { segments: segments.length, bytes };
}

/** A named database opened for its bytes: keys and values as stored. */
interface RawView {
  name: string;
  db: Database<Buffer, Buffer>;
}

function rawViews(storage: Storage): RawView[] {
  return [...storage.root.getKeys()].map((name) => ({
    name: String(name),
    db: storage.root.openDB<Buffer, Buffer>({ name: String(name), encoding: 'binary', keyEncoding: 'binary' }),
  }));
}

/** Bytes of LMDB's page header in the lmdb-js builds. */
const PAGE_HEADER = 24;

/**
 * Pages of the trees a dupSort database keeps for keys whose dups outgrow
 * the key's node, which LMDB's counts leave out: estimated from each key's
 * dup count and size as full leaf pages (and the branch pages above them).
 * A lower bound: pages split half full hold fewer.
 */
function dupTreePages(db: Database<Buffer, Buffer>, pageSize: number): { branch: number; leaf: number } {
  // LMDB's largest node (me_nodemax): larger dups move to their own tree.
  const nodeMax = (((pageSize - PAGE_HEADER) / 2) & ~1) - 2;
  let branch = 0;
  let leaf = 0;
  for (const key of db.getKeys()) {
    const n = db.getValuesCount(key);
    const size = db.get(key)?.length ?? 0;
    if (8 + key.length + PAGE_HEADER + n * size <= nodeMax) continue;
    const leaves = Math.ceil(n / Math.floor((pageSize - PAGE_HEADER) / size));
    leaf += leaves;
    if (leaves > 1) branch += Math.ceil(leaves / Math.floor((pageSize - PAGE_HEADER) / (8 + size + 2)));
  }
  return { branch, leaf };
}

function databaseStats({ name, db }: RawView, task: ProgressTask, dupTrees = { branch: 0, leaf: 0 }): DatabaseStats {
  const s = treeStats(db);
  let keyBytes = 0;
  let valueBytes = 0;
  for (const { key, value } of db.getRange()) {
    keyBytes += key.length;
    valueBytes += value.length;
    task.advance();
  }
  return {
    name,
    records: s.entryCount,
    keyBytes,
    valueBytes,
    treeDepth: s.treeDepth,
    branchPages: s.treeBranchPageCount + dupTrees.branch,
    leafPages: s.treeLeafPageCount + dupTrees.leaf,
    overflowPages: s.overflowPages,
    bytes: (pagesOf(s) + dupTrees.branch + dupTrees.leaf) * s.pageSize,
  };
}

/** Method counts of the metrics' policies, looked up once per metric. */
function columnCounts(storage: Storage): (metricId: string) => number | undefined {
  let lastId: string | undefined;
  let last: number | undefined;
  return (metricId) => {
    if (metricId !== lastId) {
      lastId = metricId;
      const metric = storage.metrics.getStored(metricId);
      const policy = metric === undefined ? undefined : (storage.policies.get(metric.archivePolicyName) as ArchivePolicy | undefined);
      last = policy?.aggregationMethods.length;
    }
    return last;
  };
}

function countPoints(storage: Storage, task: ProgressTask): PointStats {
  const points: PointStats = { sealedRows: 0, openRows: 0, tailPoints: 0, unreadableSplits: 0 };
  const columnsOf = columnCounts(storage);
  /** Rows of stored split bytes, decoding one column; 0 and counted unreadable when they do not decode. */
  const rows = (metricId: string, decode: (ncols: number) => SplitColumns): number => {
    const ncols = columnsOf(metricId);
    try {
      if (ncols === undefined) throw new Error('no policy');
      return decode(ncols).timestamps.length;
    } catch {
      points.unreadableSplits++;
      return 0;
    }
  };
  for (const { key, value } of storage.splits.getRange()) {
    const [metricId, granularity, splitKey] = key;
    points.sealedRows += rows(metricId, (ncols) => decodeStoredSplit(value, splitKey, granularity, ncols, 0));
    task.advance();
  }
  for (const { key, value } of storage.states.getRange()) {
    const state = decodeMetricState(value);
    points.tailPoints += state.tail.timestamps.length;
    for (const { granularity, open } of state.granularities) {
      if (open === null) continue;
      points.openRows += rawRowCount(open.raw);
      const { inline } = open;
      if (inline !== undefined) points.openRows += rows(key, (ncols) => decodeChunk(inline.bytes, [key, granularity, inline.first], ncols, 0));
    }
    task.advance();
  }
  for (const { key, value } of storage.stateChunks.getRange()) {
    // Granularity 0 is the tail's (engine/state-chunks.ts).
    if (key[1] === 0) points.tailPoints += rawRowCount(value);
    else points.openRows += rows(key[0], (ncols) => decodeChunk(value, key, ncols, 0));
    task.advance();
  }
  return points;
}

export interface PageUsage {
  pageSize: number;
  /** Pages the file spans: LMDB's last page number + 1. */
  filePages: number;
  /** Pages of every tree: the named databases, the catalogue, the free list, and the meta pages. */
  usedPages: number;
}

function pageUsage(env: EnvironmentStats, views: RawView[], dupTreePageCount = 0): PageUsage {
  const named = views.reduce((n, v) => n + pagesOf(treeStats(v.db)), 0) + dupTreePageCount;
  return { pageSize: env.pageSize, filePages: env.lastPageNumber + 1, usedPages: named + pagesOf(env) + pagesOf(env.free) + META_PAGES };
}

/** Pages in use, from LMDB's counts (no walk, so without the dup trees of dupSort databases): what a compacting copy writes, about. */
export function environmentPages(storage: Storage): PageUsage {
  return pageUsage(storage.root.getStats() as EnvironmentStats, rawViews(storage));
}

/** One consistent snapshot: runs synchronously, so lmdb-js keeps one read transaction throughout. */
export function storageStats(storage: Storage, dataDir: string, progress: Progress = silentProgress): StorageStats {
  const env = storage.root.getStats() as EnvironmentStats;
  const views = rawViews(storage);
  const walked = views.reduce((n, v) => n + entryCount(v.db), 0) + entryCount(storage.splits) + entryCount(storage.states) + entryCount(storage.stateChunks);
  const task = progress.task('reading', walked);
  try {
    const dupSorted = new Map(Object.entries(DUP_SORT_DBS).map(([field, name]) => [name as string, storage[field as keyof typeof DUP_SORT_DBS]]));
    const dupTrees = new Map(views.flatMap(({ name }) => {
      const db = dupSorted.get(name);
      return db === undefined ? [] : [[name, dupTreePages(db, env.pageSize)] as const];
    }));
    const databases = views.map((view) => databaseStats(view, task, dupTrees.get(view.name)));
    const points = countPoints(storage, task);
    const dupTreePageCount = [...dupTrees.values()].reduce((n, t) => n + t.branch + t.leaf, 0);
    const { pageSize, filePages, usedPages } = pageUsage(env, views, dupTreePageCount);
    const storedPoints = points.sealedRows + points.openRows + points.tailPoints;
    return {
      fileBytes: statSync(join(dbPath(dataDir), 'data.mdb')).size,
      pageSize,
      filePages,
      usedPages,
      freePages: Math.max(0, filePages - usedPages),
      databases,
      metrics: entryCount(storage.metrics),
      resources: entryCount(storage.resources),
      splits: entryCount(storage.splits),
      points,
      storedPoints,
      bytesPerPoint: storedPoints === 0 ? null : (usedPages * pageSize) / storedPoints,
      incoming: incomingFiles(dataDir),
    };
  } finally {
    task.finish();
  }
}
