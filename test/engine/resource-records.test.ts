// The resources database holds each resource's record and its named
// metrics in one value: writes of either keep the other, names come back
// in UTF-8 order whatever order they were given in, a name keeps the key
// limit it had in metrics_by_resource, a record's type and creator are
// stored as codes, and a value that does not read says so.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_STORAGE_KEY_BYTES, StorageKeyTooLong } from '../../engine/key-limit.js';
import { CorruptResourceValue, splitStoredValue, withNamedMetrics } from '../../engine/resource-records.js';
import type { ResourceRecord } from '../../engine/resource-search.js';
import { openStorage, RESOURCE_RECORDS, type Storage } from '../../engine/storage.js';
import { idValues } from '../../engine/uuid-keys.js';
import { tempDirs } from '../temp-dirs.js';

const dataDir = tempDirs('gnocchi-resource-records-');
const ID = '0000db83-68ff-5923-8857-1c374bafaf18';
const record = (patch: Partial<ResourceRecord> = {}): ResourceRecord => ({
  id: ID,
  type: 'generic',
  originalResourceId: 'host-1',
  creator: 'admin',
  userId: null,
  projectId: null,
  startedAt: 1_700_000_000_000_000,
  endedAt: null,
  revisionStart: 1_700_000_000_000_001,
  attrs: { host: 'a' },
  ...patch,
});

let storage: Storage;
beforeEach(() => {
  storage = openStorage(dataDir());
});
afterEach(async () => {
  await storage.close();
});

describe('resource records', () => {
  it.each([
    ['no named metric', []],
    ['one', [['cpu', randomUUID()]]],
    ['several, given out of order, one not a canonical UUID, names beyond ASCII', [['mem', randomUUID()], ['cpu', 'not-a-uuid'], ['é.temp', randomUUID()], ['Z', randomUUID()]]],
  ] as [string, [string, string][]][])('reads back the record and its named metrics in UTF-8 order: %s', (_case, named) => {
    expect(storage.resources.putIfAbsent(ID, record(), new Map(named))).toBe(true);
    expect(storage.resources.get(ID)).toEqual(record());
    const sorted = [...named].sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect([...storage.resources.metricsOf(ID)]).toEqual(sorted);
    expect([...storage.resources.getRange()]).toEqual([{ key: ID, value: record(), metrics: new Map(sorted) }]);
  });

  it('keeps the named metrics when the record changes, and the record when they do', () => {
    const cpu = randomUUID();
    storage.resources.putIfAbsent(ID, record(), new Map([['cpu', cpu]]));
    storage.resources.put(ID, record({ attrs: { host: 'b' } }));
    expect(storage.resources.metricsOf(ID)).toEqual(new Map([['cpu', cpu]]));
    const mem = randomUUID();
    storage.resources.setMetrics(ID, new Map([['mem', mem]]));
    expect(storage.resources.get(ID)).toEqual(record({ attrs: { host: 'b' } }));
    expect(storage.resources.metricsOf(ID)).toEqual(new Map([['mem', mem]]));
  });

  it('refuses to write over a resource, and answers no named metric for one that does not exist', () => {
    storage.resources.putIfAbsent(ID, record(), new Map([['cpu', randomUUID()]]));
    expect(storage.resources.putIfAbsent(ID, record({ creator: 'other' }), new Map())).toBe(false);
    expect(storage.resources.get(ID)!.creator).toBe('admin');
    expect(storage.resources.metricsOf(randomUUID())).toEqual(new Map());
  });

  it('takes a name off only when it names the metric given', () => {
    const cpu = randomUUID();
    storage.resources.putIfAbsent(ID, record(), new Map([['cpu', cpu], ['mem', randomUUID()]]));
    storage.resources.unnameMetric(ID, 'cpu', randomUUID());
    expect(storage.resources.metricsOf(ID).get('cpu')).toBe(cpu);
    storage.resources.unnameMetric(ID, 'cpu', cpu);
    expect([...storage.resources.metricsOf(ID).keys()]).toEqual(['mem']);
    storage.resources.unnameMetric(randomUUID(), 'cpu', cpu);
  });

  it('refuses a name longer than its key in metrics_by_resource could be, writing nothing', () => {
    const longest = 'a'.repeat(MAX_STORAGE_KEY_BYTES - 18);
    expect(storage.resources.putIfAbsent(ID, record(), new Map([[longest, randomUUID()]]))).toBe(true);
    expect(() => storage.resources.setMetrics(ID, new Map([[`${longest}a`, randomUUID()]]))).toThrow(StorageKeyTooLong);
    expect([...storage.resources.metricsOf(ID).keys()]).toEqual([longest]);
  });

  it('lays a value out as the record bytes and the named metrics by code, and says when one does not read', () => {
    const bytes = Buffer.from('any record bytes');
    const codes = storage.nameCodes;
    const value = storage.root.transactionSync(() => withNamedMetrics(bytes, new Map([['cpu', ID]]), codes));
    expect(value[0], 'the mark of names by code').toBe(0);
    expect(splitStoredValue(value, codes)).toEqual({ record: bytes, metrics: new Map([['cpu', ID]]) });
    expect(() => splitStoredValue(value.subarray(0, value.length - 3), codes)).toThrow(CorruptResourceValue);
    expect(() => splitStoredValue(Buffer.from([0x40]), codes)).toThrow(CorruptResourceValue);
    const unknownCode = Buffer.from(value);
    unknownCode[1 + 1 + bytes.length] = 0x7f;
    expect(() => splitStoredValue(unknownCode, codes)).toThrow(/no name has code 127/);
  });

  it('reads a value of format 12, its names in full, and writes it again by code', () => {
    const cpu = randomUUID();
    const entry = (name: string, id: string) => {
      const idBytes = idValues.encode(id);
      return Buffer.concat([Buffer.from([name.length]), Buffer.from(name), Buffer.from([idBytes.length]), idBytes]);
    };
    storage.root.transactionSync(() => storage.resources.putIfAbsent(ID, record(), new Map()));
    const coded = storage.resources.db.getBinary(ID)!;
    // Format 12's layout: no mark, the record's length and the record, each name in full.
    const recordBytes = coded.subarray(2, 2 + coded[1]!);
    storage.resources.db.putSync(ID, Buffer.concat([Buffer.from([recordBytes.length]), recordBytes, entry('cpu', cpu), entry('mem', ID)]));
    const named = new Map([['cpu', cpu], ['mem', ID]]);
    expect(storage.resources.get(ID)).toEqual(record());
    expect(storage.resources.metricsOf(ID)).toEqual(named);
    expect(storage.resources.owner(ID, cpu)).toEqual({ creator: 'admin', name: 'cpu' });
    storage.root.transactionSync(() => storage.resources.put(ID, record({ originalResourceId: 'host-2' })));
    expect(storage.resources.db.getBinary(ID)![0], 'written by code').toBe(0);
    expect(storage.resources.metricsOf(ID)).toEqual(named);
  });

  it('stores a record\'s type and creator as codes, and reads a record of format 13 that holds their text', () => {
    const keystone = `${'u'.repeat(32)}:${'p'.repeat(32)}`;
    const r = record({ type: 'influxdb', creator: keystone });
    const cpu = randomUUID();
    storage.root.transactionSync(() => storage.resources.putIfAbsent(ID, r, new Map([['cpu', cpu]])));
    const coded = storage.resources.db.getBinary(ID)!;
    const recordBytes = coded.subarray(2, 2 + coded[1]!);
    const asText = RESOURCE_RECORDS.encode(r);
    expect(asText.length - recordBytes.length, 'the text of both, but a byte each').toBeGreaterThanOrEqual(keystone.length + 'influxdb'.length);
    expect(Buffer.from(recordBytes).includes(keystone)).toBe(false);
    expect(storage.resources.get(ID)).toEqual(r);
    expect(storage.resources.owner(ID, cpu)).toEqual({ creator: keystone, name: 'cpu' });
    expect(storage.resources.namedAndCreator(ID)).toEqual({ metrics: new Map([['cpu', cpu]]), creator: keystone });
    expect(storage.resources.namedAndCreator(randomUUID())).toBeUndefined();
    expect([...storage.resources.getRange()]).toEqual([{ key: ID, value: r, metrics: new Map([['cpu', cpu]]) }]);

    // Format 13's record: the text of both.
    storage.root.transactionSync(() => storage.resources.db.putSync(ID, withNamedMetrics(asText, new Map([['cpu', cpu]]), storage.nameCodes)));
    expect(storage.resources.get(ID)).toEqual(r);
    expect(storage.resources.owner(ID, cpu)).toEqual({ creator: keystone, name: 'cpu' });
    storage.root.transactionSync(() => storage.resources.put(ID, record({ type: 'influxdb', creator: keystone, originalResourceId: 'host-2' })));
    expect(storage.resources.db.getBinary(ID)!.length, 'written by code').toBe(coded.length);

    const unknownType = RESOURCE_RECORDS.encode({ ...r, type: 0x7f });
    storage.root.transactionSync(() => storage.resources.db.putSync(ID, withNamedMetrics(unknownType, new Map(), storage.nameCodes)));
    expect(() => storage.resources.get(ID)).toThrow(/no name has code 127/);
  });
});
