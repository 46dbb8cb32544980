// Index records stored as arrays of their fields: they read back whole
// (properties beyond the named fields included), smaller than the maps of
// format 4, whose records still read as they were stored; UUID fields as
// 16 bytes, text UUIDs of format 5 still read; a record keyed by its id
// stored without it, read back with it from the key, records of format 6
// (with it) still read.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { upgradeFormat } from '../../engine/format-upgrade.js';
import { fieldsEncoder } from '../../engine/record-codec.js';
import { dbPath, FORMAT_VERSION, openStorage } from '../../engine/storage.js';

const ID = '5a301761-f78b-46e2-8900-8b4f6fe6675a';
const METRIC = { id: ID, name: 'cpu.util', unit: '%', archivePolicyName: 'low', creator: 'admin:admin', resourceId: null };
const RESOURCE = {
  id: ID, type: 'instance', originalResourceId: 'vm-1', creator: 'admin:admin', userId: null, projectId: 'p1',
  startedAt: 1.7e15, endedAt: null, revisionStart: 1.7e15 + 1, attrs: { host: 'compute-1', vcpus: 4, flavor: null },
};
const maps = new Packr({ useRecords: false });

describe('index records as arrays of their fields', () => {
  const metrics = fieldsEncoder<Record<string, unknown>>(Object.keys(METRIC));
  const resources = fieldsEncoder<Record<string, unknown>>(Object.keys(RESOURCE));

  it.each([
    ['a metric', metrics, METRIC],
    ['a resource', resources, RESOURCE],
    ['a record with a property no field names', metrics, { ...METRIC, kept: [1, 'two'] }],
    ['a record missing a field', metrics, { id: ID, name: null }],
  ])('reads back %s whole', (_, encoder, record) => {
    const bytes = encoder.encode(record);
    expect(encoder.decode(bytes)).toEqual(record);
    expect(encoder.decode(Buffer.concat([bytes, Buffer.from('tail')]), bytes.length), 'within the size lmdb-js gives').toEqual(record);
  });

  describe('one field read alone', () => {
    type Encoder = ReturnType<typeof fieldsEncoder<Record<string, unknown>>>;
    const keyed = (record: Record<string, unknown>) => fieldsEncoder<Record<string, unknown>>(Object.keys(record), ['id'], 'id');
    const compact = fieldsEncoder<Record<string, unknown>>(Object.keys(RESOURCE), ['id'], 'id', { sameAs: { startedAt: 'revisionStart' }, objects: ['attrs'] });
    const cases: [string, Encoder, Record<string, unknown>, (e: Encoder, r: Record<string, unknown>) => Uint8Array][] = [
      ['a metric of its fields', metrics, METRIC, (e, r) => e.encode(r)],
      ['a resource of its fields', resources, RESOURCE, (e, r) => e.encode(r)],
      ['a metric keyed by its id', keyed(METRIC), METRIC, (e, r) => e.encode(r)],
      ['a resource with compact fields', compact, { ...RESOURCE, startedAt: RESOURCE.revisionStart, attrs: {} }, (e, r) => e.encode(r)],
      ['a metric as a map (format 4)', metrics, METRIC, (_, r) => maps.pack(r)],
    ];

    it.each(cases)('%s: each field as the whole record reads it', (_, encoder, record, encode) => {
      const bytes = encode(encoder, record);
      const whole = encoder.decode(bytes);
      for (const name of Object.keys(record)) expect(encoder.field(bytes, name), name).toEqual(whole[name]);
    });
  });

  it.each([
    ['a metric', metrics, METRIC],
    ['a resource', resources, RESOURCE],
  ])('stores %s in fewer bytes than a map, and reads a map as it was stored', (_, encoder, record) => {
    const map = maps.pack(record);
    expect(encoder.encode(record).length).toBeLessThan(map.length * 0.7);
    expect(encoder.decode(map)).toEqual(record);
  });

  it('reads the records of a format 4 directory, written as maps', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gnocchi-records-'));
    try {
      const old = open({ path: dbPath(dir) });
      await old.openDB({ name: 'metrics', encoding: 'msgpack' }).put(ID, METRIC);
      await old.openDB({ name: 'resources', encoding: 'msgpack' }).put(ID, RESOURCE);
      await old.openDB({ name: 'meta', encoding: 'msgpack' }).put('format', 4);
      await old.close();
      const storage = openStorage(dir);
      // Format 6 keys hold UUIDs as bytes: opening rewrites the text ones.
      upgradeFormat(storage);
      expect(storage.metrics.get(ID)).toEqual(METRIC);
      expect(storage.resources.get(ID)).toEqual(RESOURCE);
      await storage.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('a record keyed by its id', () => {
    const keyed = fieldsEncoder<Record<string, unknown>>(Object.keys(METRIC), ['id', 'resourceId'], 'id');
    const uuids = fieldsEncoder<Record<string, unknown>>(Object.keys(METRIC), ['id', 'resourceId']);

    it('is stored without it, which decodes as undefined in its place', () => {
      const bytes = keyed.encode(METRIC);
      // Its 16 bytes and msgpack header, for the marker byte.
      expect(uuids.encode(METRIC).length - bytes.length).toBe(18 - 1);
      const record = keyed.decode(Buffer.concat([bytes, Buffer.from('tail')]), bytes.length);
      expect(Object.keys(record)).toEqual(Object.keys(METRIC));
      expect(record).toEqual({ ...METRIC, id: undefined });
    });

    it('reads a record stored with it (format 6) as it was stored', () => {
      expect(keyed.decode(uuids.encode(METRIC))).toEqual(METRIC);
    });

    it('reads back with its id from the key through the storage, in listings too', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'gnocchi-records-'));
      try {
        const storage = openStorage(dir);
        await storage.metrics.put(ID, METRIC);
        await storage.resources.put('not-a-uuid', { ...RESOURCE, id: 'not-a-uuid' });
        expect(storage.metrics.get(ID)).toEqual(METRIC);
        expect([...storage.resources.getRange()]).toEqual([{ key: 'not-a-uuid', value: { ...RESOURCE, id: 'not-a-uuid' }, metrics: new Map() }]);
        expect(storage.metrics.db.getBinary(ID)![0], 'stored without it').toBe(0xc1);
        await storage.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('compact fields (format 11)', () => {
    const compact = fieldsEncoder<Record<string, unknown>>(Object.keys(RESOURCE), ['id'], undefined, { sameAs: { startedAt: 'revisionStart' }, objects: ['attrs'] });
    const plain = fieldsEncoder<Record<string, unknown>>(Object.keys(RESOURCE), ['id']);
    const started = { ...RESOURCE, startedAt: RESOURCE.revisionStart };

    it.each([
      // A float64 (9 bytes) for `true` (1).
      ['a started_at that is the revision_start', started, 8],
      ['one that is not', RESOURCE, 0],
      // An empty map takes 3 bytes (msgpackr's map16), nil 1.
      ['no attributes', { ...RESOURCE, attrs: {} }, 2],
      ['both', { ...started, attrs: {} }, 10],
      ['a started_at missing like its revision_start', { ...RESOURCE, startedAt: undefined, revisionStart: undefined }, 0],
    ])('read back %s, stored in fewer bytes', (_, record, saved) => {
      const bytes = compact.encode(record);
      expect(compact.decode(bytes)).toEqual(record);
      expect(plain.encode(record).length - bytes.length).toBe(saved);
    });

    it('read a record stored before them (format 10) as it was stored', () => {
      for (const record of [started, { ...started, attrs: {} }, RESOURCE]) expect(compact.decode(plain.encode(record))).toEqual(record);
    });

    it('of a format 10 directory read as they were once it is stamped 11', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'gnocchi-records-'));
      try {
        const keyedPlain = fieldsEncoder<Record<string, unknown>>(Object.keys(RESOURCE), ['id'], 'id');
        const record = { ...started, attrs: {} };
        let storage = openStorage(dir);
        const bytes = keyedPlain.encode(record);
        // Format 10's layout: the record's length (a byte here) and the record, no named metric.
        await storage.resources.db.put(ID, Buffer.concat([Buffer.from([bytes.length]), bytes]));
        await storage.meta.put('format', 10);
        await storage.close();
        storage = openStorage(dir);
        upgradeFormat(storage);
        expect(storage.meta.get('format')).toBe(FORMAT_VERSION);
        expect(storage.resources.get(ID)).toEqual(record);
        await storage.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("are a resource's through the storage", async () => {
      const dir = mkdtempSync(join(tmpdir(), 'gnocchi-records-'));
      try {
        const storage = openStorage(dir);
        const record = { ...started, attrs: {} };
        await storage.resources.put(ID, record);
        expect(storage.resources.get(ID)).toEqual(record);
        // The mark of named metrics by code and the record's length (a byte each), then the record without its id (the key holds it),
        // its type and creator as codes (engine/resource-records.ts), 10 bytes fewer.
        const keyedPlain = fieldsEncoder<Record<string, unknown>>(Object.keys(RESOURCE), ['id'], 'id');
        const code = (name: string) => storage.root.transactionSync(() => storage.nameCodes.code(name));
        const coded = { ...record, type: code(record.type), creator: code(record.creator) };
        expect(storage.resources.db.getBinary(ID)!.length).toBe(2 + keyedPlain.encode(coded).length - 10);
        await storage.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('UUID fields', () => {
    const uuids = fieldsEncoder<Record<string, unknown>>(Object.keys(METRIC), ['id', 'resourceId']);
    const RESOURCE_ID = 'f85c5c7b-512c-5832-99cc-a939f88920fd';

    it.each([
      ['canonical UUIDs, as 16 bytes each', { ...METRIC, resourceId: RESOURCE_ID }, 2 * 20],
      ['a canonical UUID and null', METRIC, 20],
      ['ids that are not canonical UUIDs, as text', { ...METRIC, id: 'not-a-uuid', resourceId: RESOURCE_ID.toUpperCase() }, 0],
    ])('read back %s', (_, record, saved) => {
      const bytes = uuids.encode(record);
      expect(uuids.decode(bytes)).toEqual(record);
      expect(metrics.encode(record).length - bytes.length).toBe(saved);
    });

    it('read a record of text UUIDs as it was stored', () => {
      const record = { ...METRIC, resourceId: RESOURCE_ID };
      expect(uuids.decode(metrics.encode(record))).toEqual(record);
    });
  });
});
