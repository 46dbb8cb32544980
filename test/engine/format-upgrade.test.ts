// Format 6 keys: metric and resource UUIDs as 16 bytes (engine/uuid-keys.ts),
// the order of keys and of range bounds kept; the upgrade that rewrites a
// format 5 directory's keys when it is opened, answers unchanged; and the
// upgrade of a directory written by a format 6 release (fixtures/format-6),
// its resource indexes rebuilt in format 7's layout, answers unchanged.
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { keyValueToBuffer } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { checkStorage } from '../../engine/check.js';
import type { LmdbIndexStore } from '../../engine/drivers/lmdb/index-store.js';
import { Engine } from '../../engine/engine.js';
import { DEFAULT_RESOURCE_SORT, parseResourceSorts } from '../../engine/resources.js';
import { entryCount } from '../../engine/db-stats.js';
import { decodeKey } from '../../engine/resource-index-keys.js';
import { IndexNames } from '../../engine/resource-index-names.js';
import { splitStoredValue } from '../../engine/resource-records.js';
import { dbPath, FORMAT_VERSION, ID_KEYED_DBS, idKeyed, NAMED_METRICS_IN_RECORDS, openStorage, type MetricByResourceKey, type Storage } from '../../engine/storage.js';
import { validateResourceQuery } from '../../formats/resource-query.js';
import { StorageKeyTooLong } from '../../engine/key-limit.js';
import { idFirstKeys, idKeys, idLastKeys, idValues, type KeyEncoder } from '../../engine/uuid-keys.js';

const S = 1_000_000;
const T0 = Date.UTC(2024, 0, 1) * 1000;
const U = '0000db83-68ff-5923-8857-1c374bafaf18';

function encode(encoder: KeyEncoder, key: unknown): Buffer {
  const target = Buffer.alloc(512);
  return Buffer.from(target.subarray(0, encoder.writeKey(key, target, 0)));
}

describe('UUID keys', () => {
  it.each([
    ['an id alone', idKeys, U, 17],
    ['an id that is not a UUID', idKeys, 'm1', 2],
    ['an uppercase UUID (not canonical: kept as text)', idKeys, U.toUpperCase(), 36],
    ['an id then numbers', idFirstKeys, [U, 60 * S, T0], 37],
    ['an id then a negative and a fractional number', idFirstKeys, [U, -1, 0.5], 37],
    ['an id then a name', idFirstKeys, [U, 'mem.used@region=r2'], 36],
    ['a text id then a name', idFirstKeys, ['x', 'y'], 3],
    ['a type then an id', idLastKeys('s'), ['influxdb', U], 26],
    ['a type, a number then an id', idLastKeys('sn'), ['generic', 1795701326728816, U], 35],
    ['a type with control characters, a number, a text id', idLastKeys('sn'), ['g\u0000\u0001', 1.5, 'notuuid'], 23],
  ])('read back %s', (_name, encoder, key, size) => {
    const bytes = encode(encoder, key);
    expect(bytes.length).toBe(size);
    expect(encoder.readKey(bytes, 0, bytes.length)).toEqual(key);
  });

  it.each([
    ['a UUID, as its tag and 16 bytes', U, 17],
    ['an id that is not a UUID, as its text', 'not-a-uuid', 10],
  ])('as values, read back %s', (_name, id, size) => {
    const bytes = idValues.encode(id);
    expect(bytes.length).toBe(size);
    expect(idValues.decode(Buffer.concat([bytes, Buffer.from('tail')]), bytes.length)).toBe(id);
    expect(idValues.decode(Buffer.from(id)), 'as format 5 stored it').toBe(id);
  });

  it.each([
    ['a name past the buffer after an id', idFirstKeys, [U, 'x'.repeat(600)]],
    ['an id past the buffer after a long prefix', idLastKeys('s'), ['t'.repeat(500), U]],
  ])('refuse %s as StorageKeyTooLong (a 4xx), writing nothing past it', (_name, encoder, key) => {
    const target = Buffer.alloc(512 + 8);
    expect(() => encoder.writeKey(key, target.subarray(0, 512), 0)).toThrow(StorageKeyTooLong);
    expect(target.subarray(512)).toEqual(Buffer.alloc(8));
  });

  it('keep the text order of UUIDs', () => {
    const ids = Array.from({ length: 500 }, () => randomUUID());
    const byKey = [...ids].sort((a, b) => Buffer.compare(encode(idKeys, a), encode(idKeys, b)));
    expect(byKey).toEqual([...ids].sort());
  });

  it.each([
    ['[type] < [type, id] < [type, \\uffff] < [next type, id]', idLastKeys('s'), [['t'], ['t', U], ['t', '\uffff'], ['u', U]]],
    ['[id, \'\'] < [id, name] < [id, \\uffff] < [next id, \'\']', idFirstKeys, [[U, ''], [U, 'a'], [U, '\uffff'], [randomUUID().replace(/^./, 'f'), '']]],
    ['[id, -1, 0] < [id, g, t] < [id, MAX, 0]', idFirstKeys, [[U, -1, 0], [U, 60 * S, T0], [U, Number.MAX_SAFE_INTEGER, 0]]],
    ['[type] < [type, from] < [type, from, id] < [type, +Infinity]', idLastKeys('sn'), [['t'], ['t', 5], ['t', 5, U], ['t', 6, U], ['t', Infinity]]],
  ])('order range bounds: %s', (_name, encoder, keys) => {
    const bytes = keys.map((k) => encode(encoder, k));
    for (let i = 1; i < bytes.length; i++) expect(Buffer.compare(bytes[i - 1]!, bytes[i]!)).toBe(-1);
  });
});

/** The ids of the metrics named on resources. */
const namedMetricIds = (storage: Storage) => [...storage.resources.getRange()].flatMap(({ metrics }) => [...metrics.values()]);

describe('opening a format 5 directory', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  const open = (dataDir: string) =>
    Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });

  /**
   * Moves the named metrics back into metrics_by_resource, rewrites the keys
   * as format 5 stored them (ordered-binary, UUIDs as text) and stamps format 5.
   */
  function toFormat5(storage: Storage): void {
    storage.root.transactionSync(() => {
      const byResource = storage.root.openDB<Buffer, MetricByResourceKey>({ ...idKeyed('metrics_by_resource'), encoding: 'binary' });
      for (const { key, value } of [...storage.resources.db.getRange()]) {
        const { record, metrics } = splitStoredValue(value, storage.nameCodes);
        for (const [name, metricId] of metrics) void byResource.put([key, name], idValues.encode(metricId));
        void storage.resources.db.put(key, Buffer.from(record));
      }
      void storage.meta.remove(NAMED_METRICS_IN_RECORDS);
      for (const [name, encoder] of Object.entries(ID_KEYED_DBS)) {
        const raw = storage.root.openDB<Buffer, Buffer>({ name, encoding: 'binary', keyEncoding: 'binary' });
        const entries = [...raw.getRange()].map(({ key, value }) => ({ key: Buffer.from(key), value: Buffer.from(value) }));
        for (const { key, value } of entries) {
          const text = keyValueToBuffer(encoder.readKey(key, 0, key.length));
          const textValue = name === 'metrics_by_resource' ? Buffer.from(idValues.decode(value)) : value;
          void raw.remove(key);
          void raw.put(text, textValue);
        }
      }
      void storage.meta.put('format', 5);
    });
  }

  async function answers(engine: Engine, metricIds: string[]): Promise<unknown> {
    const resources = (engine.index as LmdbIndexStore).resources;
    const listed = resources.list('generic', { history: true, sorts: parseResourceSorts(DEFAULT_RESOURCE_SORT, resources.getType('generic'), true), limit: 100 }).map((r) => [r.id, r.revision]);
    const measures = [];
    for (const id of metricIds) {
      const metric = (await engine.index.getMetric(id))!;
      measures.push(metric, (await engine.getMeasures(metric, { method: 'mean' })).map((s) => [[...s.timestamps], [...s.values]]));
    }
    return { listed, measures, named: resources.get('generic', U) };
  }

  it('rewrites its keys, answers and `check` unchanged', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-format-upgrade-'));
    dirs.push(dataDir);
    const engine = await open(dataDir);
    await engine.processor.stop();
    await engine.index.createPolicy({ name: 'p', backWindow: 0, definition: [{ granularity: S, points: 3600, timespan: 3600 * S }], aggregationMethods: ['mean'] });
    const resources = (engine.index as LmdbIndexStore).resources;
    for (const id of [U, randomUUID(), randomUUID()]) {
      await resources.create('generic', { id, originalResourceId: id, creator: 'x', userId: null, projectId: null, endedAt: null, attrs: {}, metrics: new Map([['cpu', { kind: 'new', archivePolicyName: 'p', unit: null }]]) });
      await resources.update('generic', id, { userId: 'u' });
    }
    const metricIds = namedMetricIds(engine.storage);
    const loose = await engine.index.createMetric({ id: 'not-a-uuid', name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null });
    metricIds.push(loose.id);
    // 400 irregular points: the open split has chunk records (past INLINE_CHUNK_BYTES) as well as inline rows.
    const points = { timestamps: Float64Array.from({ length: 400 }, (_, i) => T0 + i * S), values: Float64Array.from({ length: 400 }, (_, i) => Math.round(Math.sin(i) * 1e4) / 100) };
    await engine.addMeasures(new Map(metricIds.map((id) => [id, points])));
    await engine.processor.refresh(metricIds);
    expect(engine.storage.stateChunks.getCount()).toBeGreaterThan(0);
    const before = await answers(engine, metricIds);
    toFormat5(engine.storage);
    const stateKeyLengths = (storage: Storage) => [...storage.root.openDB<Buffer, Buffer>({ name: 'metric_state', keyEncoding: 'binary' }).getKeys()].map((k) => k.length).sort();
    expect(stateKeyLengths(engine.storage)).toEqual([10, 36, 36, 36]);
    await engine.close();

    const upgraded = await open(dataDir);
    expect(upgraded.storage.meta.get('format')).toBe(FORMAT_VERSION);
    expect(await answers(upgraded, metricIds)).toEqual(before);
    expect(stateKeyLengths(upgraded.storage)).toEqual([10, 17, 17, 17]);
    await upgraded.close();
    const readOnly = openStorage(dataDir, { readOnly: true });
    expect(checkStorage(readOnly).faults).toEqual([]);
    await readOnly.close();
  });
});

describe('opening a directory written by a format 6 release', () => {
  const fixtures = join(import.meta.dirname, 'fixtures', 'format-6');
  const fixture = (name: string): unknown => JSON.parse(readFileSync(join(fixtures, name), 'utf8'));
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  function unpack(): string {
    const dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-format-6-'));
    dirs.push(dataDir);
    mkdirSync(dbPath(dataDir));
    writeFileSync(join(dbPath(dataDir), 'data.mdb'), gunzipSync(readFileSync(join(fixtures, 'format-6.mdb.gz'))));
    return dataDir;
  }

  const dbNames = (storage: Storage) => [...storage.root.getKeys()].map(String);

  /** make.mjs' answers: the pages of searches.json's searches, and each metric's means. */
  async function answers(engine: Engine): Promise<unknown> {
    const resources = (engine.index as LmdbIndexStore).resources;
    type Search = { type: string; filter?: unknown; history: boolean; sort?: string[] };
    const searches = (fixture('searches.json') as Search[]).map(({ type, filter, history, sort }) =>
      resources
        .list(type, {
          filter: filter === undefined ? undefined : validateResourceQuery(filter, { resourceId: (v) => v }),
          history,
          sorts: parseResourceSorts(sort ?? DEFAULT_RESOURCE_SORT, resources.getType(type), history),
          limit: 100,
        })
        .map((r) => `${r.id}@${r.revision}`),
    );
    const measures: Record<string, unknown> = {};
    for (const id of namedMetricIds(engine.storage).sort()) {
      const metric = (await engine.index.getMetric(id))!;
      measures[id] = (await engine.getMeasures(metric, { method: 'mean' })).map((s) => [[...s.timestamps], [...s.values]]);
    }
    return { searches, measures };
  }

  it('drops resources_by_type, files each resource once by revision_start, answers and `check` unchanged', async () => {
    const dataDir = unpack();
    const old = openStorage(dataDir, { readOnly: true });
    expect(old.meta.get('format')).toBe(6);
    expect(dbNames(old)).toContain('resources_by_type');
    // Typed resources were also filed under `generic`.
    expect(entryCount(old.resourcesByRevisionStart)).toBe(16);
    await old.close();

    const engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });
    await engine.processor.stop();
    const { storage } = engine;
    expect(storage.meta.get('format')).toBe(FORMAT_VERSION);
    expect(dbNames(storage)).not.toContain('resources_by_type');
    expect(entryCount(storage.resourcesByRevisionStart)).toBe(entryCount(storage.resources));
    const names = new IndexNames(storage.meta).refresh();
    const currentFields = new Set([...storage.resourceValues.getKeys()].map((k) => names.fieldName(decodeKey(k).fieldCode)));
    expect([currentFields.has('revision_start'), currentFields.has('revision_end'), currentFields.has('started_at')]).toEqual([false, false, true]);
    expect(await answers(engine)).toEqual(fixture('answers.json'));
    await engine.close();
    const readOnly = openStorage(dataDir, { readOnly: true });
    expect(checkStorage(readOnly).faults).toEqual([]);
    await readOnly.close();
  });
});
