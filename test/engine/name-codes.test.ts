// Resources hold their metrics' names, their type and their creator as
// codes (engine/name-codes.ts): a
// name has one code for good, a code is never given twice (not even one
// given by a write that rolled back), a code found by a write is kept only
// once that write committed, and names read back right in a later process.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openStorage, type Storage } from '../../engine/storage.js';
import type { ResourceRecord } from '../../engine/resource-search.js';
import { tempDirs } from '../temp-dirs.js';

const dataDir = tempDirs('gnocchi-name-codes-');

const record = (id: string): ResourceRecord => ({
  id,
  type: 'generic',
  originalResourceId: id,
  creator: 'admin',
  userId: null,
  projectId: null,
  startedAt: 1_700_000_000_000_000,
  endedAt: null,
  revisionStart: 1_700_000_000_000_000,
  attrs: {},
});

/** Writes resource `id` naming `names` as a resource write does: one transaction, run through `writing`. */
function create(s: Storage, id: string, names: string[], fail = false): void {
  s.nameCodes.writing(() =>
    s.root.transactionSync(() => {
      s.resources.putIfAbsent(id, record(id), new Map(names.map((n) => [n, randomUUID()])));
      if (fail) throw new Error('refused after its writes');
    }),
  );
}

describe('name codes', () => {
  it('give a name one code, shared by every resource naming it, stored once', async () => {
    const dir = dataDir();
    let s = openStorage(dir);
    const ids = Array.from({ length: 3 }, () => randomUUID());
    for (const id of ids) create(s, id, ['cpu.usage@region=r0', 'mem.used@region=r0']);
    const code = (name: string) => s.root.transactionSync(() => s.nameCodes.code(name));
    // The resources' type and creator have theirs first.
    expect([code('generic'), code('admin'), code('cpu.usage@region=r0'), code('mem.used@region=r0')]).toEqual([1, 2, 3, 4]);
    expect([...s.nameCodes.byCode!.getKeys()]).toEqual([1, 2, 3, 4]);
    await s.close();
    s = openStorage(dir);
    for (const id of ids) expect([...s.resources.metricsOf(id).keys()]).toEqual(['cpu.usage@region=r0', 'mem.used@region=r0']);
    expect(code('cpu.usage@region=r0')).toBe(3);
    await s.close();
  });

  it('never give twice a code a write that rolled back gave, nor keep it for its name', async () => {
    const dir = dataDir();
    let s = openStorage(dir);
    expect(() => create(s, randomUUID(), ['lost'], true)).toThrow('refused after its writes');
    expect([...s.nameCodes.byCode!.getKeys()], 'rolled back').toEqual([]);
    const [a, b] = [randomUUID(), randomUUID()];
    create(s, a, ['other']);
    create(s, b, ['lost', 'other']);
    // The write that rolled back gave 1 to 3 (its type, creator and name); the next gave 4 to 6.
    expect(s.root.transactionSync(() => s.nameCodes.code('other'))).toBe(6);
    expect(s.root.transactionSync(() => s.nameCodes.code('lost'))).toBe(7);
    await s.close();
    s = openStorage(dir);
    expect([...s.resources.metricsOf(a).keys()]).toEqual(['other']);
    expect([...s.resources.metricsOf(b).keys()]).toEqual(['lost', 'other']);
    await s.close();
  });

  it('read in a directory opened read-only that has none yet, and refuse to give one there', async () => {
    const dir = dataDir();
    const raw = openStorage(dir);
    await raw.close();
    const s = openStorage(dir, { readOnly: true });
    expect(s.nameCodes.name(1)).toBeUndefined();
    await s.close();
  });
});
