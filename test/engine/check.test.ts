// engine/check.ts on data the engine wrote (typed resources with history,
// metrics with sealed splits, open splits and tail chunks): clean data has
// no fault, and each kind of damage is reported as its kind, on its record.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkStorage, type Fault } from '../../engine/check.js';
import { Engine } from '../../engine/engine.js';
import type { MetricRecord } from '../../engine/index.js';
import { decodeMetricState, encodeMetricState, type MetricState } from '../../engine/metric-state.js';
import type { Progress } from '../../engine/progress.js';
import { entryBytes, type IndexTarget, type StoredValue } from '../../engine/resource-index-keys.js';
import { IndexNames } from '../../engine/resource-index-names.js';
import type { Storage } from '../../engine/storage.js';

const S = 1_000_000;
const T0 = Date.UTC(2024, 0, 1) * 1000;
const HOST = '00000000-0000-4000-8000-000000000001';
const BOX = '00000000-0000-4000-8000-000000000002';
const STANDALONE = '00000000-0000-4000-8000-0000000000aa';
/** 1 s points over 2.5 h: two sealed 1 s splits and an open one with two frozen chunks, per metric. */
const POINTS = 9000;

let dataDir: string;
let engine: Engine;
let attached: MetricRecord;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gnocchi-check-'));
  engine = await Engine.open({ dataDir, defaultArchivePolicies: false, defaultAggregationMethods: ['mean'], workers: 0, processingIntervalMs: 1e9 });
  await engine.index.createPolicy({
    name: 'p',
    backWindow: 0,
    definition: [
      { granularity: S, points: 86_400, timespan: 86_400 * S },
      { granularity: 60 * S, points: 1440, timespan: 86_400 * S },
    ],
    aggregationMethods: ['mean', 'max'],
  });
  await engine.index.createType({ name: 'host', state: 'creating', attributes: [{ name: 'host_name', type: 'string', required: false, minLength: 0, maxLength: 255 }] });
  const base = { creator: 'admin', userId: 'u', projectId: null, endedAt: null };
  await engine.index.create('host', {
    ...base,
    id: HOST,
    originalResourceId: 'h1',
    attrs: { host_name: 'one' },
    metrics: new Map([['cpu', { kind: 'new', archivePolicyName: 'p', unit: null }]]),
  });
  await engine.index.update('host', HOST, { attrs: { host_name: 'two' } });
  await engine.index.create('generic', { ...base, id: BOX, originalResourceId: 'b', attrs: {} });
  attached = (await engine.index.metricByName(HOST, 'cpu'))!;
  const standalone = await engine.index.createMetric({ id: STANDALONE, name: null, unit: null, archivePolicyName: 'p', creator: 'x', resourceId: null });
  const timestamps = Float64Array.from({ length: POINTS }, (_, i) => T0 + i * S);
  const values = Float64Array.from({ length: POINTS }, (_, i) => (i % 7) / 4);
  await engine.addMeasures(new Map([[attached.id, { timestamps, values }], [standalone.id, { timestamps, values }]]));
  await engine.refresh([attached.id, standalone.id]);
});

afterEach(async () => {
  await engine.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const first = <T>(keys: Iterable<T>): T => {
  for (const k of keys) return k;
  throw new Error('no such record');
};

/** The bytes of a value index entry of a `host` resource. */
function valueEntry(s: Storage, field: string, value: StoredValue, target: IndexTarget): { key: Buffer; dup: Buffer } {
  const names = new IndexNames(s.meta).refresh();
  return entryBytes(names.typeCode('host')!, names.fieldCode(field)!, value, target);
}

/** Rewrites the standalone metric's state: `change` gets the 1 s open split's chunk keys. */
function changeState(s: Storage, change: (state: MetricState, chunkKeys: [string, number, number][]) => void): void {
  const state = decodeMetricState(Buffer.from(s.states.get(STANDALONE)!));
  change(state, [...s.stateChunks.getKeys({ start: [STANDALONE, S, 0], end: [STANDALONE, 2 * S, 0] })]);
  s.states.putSync(STANDALONE, encodeMetricState(state, 2));
}

const fineOpen = (state: MetricState) => state.granularities.find((g) => g.granularity === S)!.open!;

describe('checkStorage', () => {
  it('finds no fault in what the engine wrote, having read every kind of record', () => {
    const report = checkStorage(engine.storage);
    expect(report.faults).toEqual([]);
    expect(report.checked).toMatchObject({ metrics: 2, resources: 2, resource_history: 1, name_codes: 5, codes_by_name: 5 });
    expect(report.checked.splits).toBeGreaterThanOrEqual(4);
    expect(report.checked.state_chunks).toBeGreaterThanOrEqual(2);
  });

  it('tells its progress: one task whose steps are the records read', () => {
    const seen: { label: string; total: number; done: number; finished: boolean }[] = [];
    const progress: Progress = {
      task(label, total) {
        const t = { label, total, done: 0, finished: false };
        seen.push(t);
        return { advance: (n = 1) => void (t.done += n), finish: () => void (t.finished = true) };
      },
    };
    checkStorage(engine.storage, progress);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ label: 'checking', finished: true });
    expect(seen[0]!.done).toBe(seen[0]!.total);
  });

  const damages: { damage: string; change: (s: Storage) => void; expected: Partial<Fault> }[] = [
    {
      damage: 'a frozen chunk of an open split deleted',
      change: (s) => s.stateChunks.removeSync(first(s.stateChunks.getKeys({ start: [STANDALONE, S, 0], end: [STANDALONE, 2 * S, 0] }))),
      expected: { kind: 'state-mismatch', db: 'metric_state', key: STANDALONE, reason: expect.stringMatching(/counts 2 chunks, 1 are stored/) },
    },
    {
      damage: 'a flipped byte in an encoded chunk',
      change: (s) => {
        const key = first(s.stateChunks.getKeys({ start: [STANDALONE, S, 0], end: [STANDALONE, 2 * S, 0] }));
        const bytes = Buffer.from(s.stateChunks.get(key)!);
        bytes[bytes.length - 3]! ^= 0x40;
        s.stateChunks.putSync(key, bytes);
      },
      expected: { kind: 'chunk-corrupt', db: 'state_chunks', reason: expect.stringMatching(/checksum/) },
    },
    {
      damage: 'an encoded chunk under a key that is not its first row',
      change: (s) => {
        const key = first(s.stateChunks.getKeys({ start: [STANDALONE, S, 0], end: [STANDALONE, 2 * S, 0] }));
        const bytes = s.stateChunks.get(key)!;
        s.stateChunks.removeSync(key);
        s.stateChunks.putSync([key[0], key[1], key[2] + S], bytes);
      },
      expected: { kind: 'state-mismatch', db: 'metric_state', key: STANDALONE, reason: expect.stringMatching(/row 1024 at \d+ does not follow row 1023/) },
    },
    {
      damage: 'an inline chunk beside chunk records',
      change: (s) =>
        changeState(s, (state, [key]) => {
          fineOpen(state).inline = { first: key![2], bytes: Buffer.from(s.stateChunks.get(key!)!) };
        }),
      expected: { kind: 'state-mismatch', db: 'metric_state', key: STANDALONE, reason: expect.stringMatching(/an inline chunk and 2 chunk records/) },
    },
    {
      damage: 'a newest chunk key that is not the newest chunk',
      change: (s) =>
        changeState(s, (state, [key]) => {
          fineOpen(state).newest = key![2];
        }),
      expected: { kind: 'state-mismatch', db: 'metric_state', key: STANDALONE, reason: expect.stringMatching(/keeps \d+ as its newest chunk, the newest stored is \d+/) },
    },
    {
      damage: 'a flipped byte in an inline chunk',
      change: (s) =>
        changeState(s, (state, keys) => {
          const bytes = Buffer.from(s.stateChunks.get(keys[0]!)!);
          bytes[bytes.length - 3]! ^= 0x40;
          for (const key of keys) s.stateChunks.removeSync(key);
          Object.assign(fineOpen(state), { frozen: 0, newest: undefined, inline: { first: keys[0]![2], bytes } });
        }),
      expected: { kind: 'state-corrupt', db: 'metric_state', key: STANDALONE, reason: expect.stringMatching(/inline chunk: .*checksum/) },
    },
    {
      damage: 'a tail chunk the state does not count',
      change: (s) => s.stateChunks.putSync([STANDALONE, 0, T0], s.stateChunks.get(first(s.stateChunks.getKeys({ start: [STANDALONE, S, 0] })))!),
      expected: { kind: 'chunk-orphan', db: 'state_chunks', key: [STANDALONE, 0, T0] },
    },
    {
      damage: 'a chunk no open split holds',
      change: (s) => s.stateChunks.putSync([STANDALONE, 60 * S, 0], s.stateChunks.get(first(s.stateChunks.getKeys({ start: [STANDALONE, S, 0] })))!),
      expected: { kind: 'chunk-orphan', db: 'state_chunks', key: [STANDALONE, 60 * S, 0] },
    },
    {
      damage: 'a state of no metric',
      change: (s) => s.states.putSync('no-such-metric', s.states.get(STANDALONE)!),
      expected: { kind: 'state-orphan', db: 'metric_state', key: 'no-such-metric' },
    },
    {
      damage: 'a truncated state',
      change: (s) => s.states.putSync(STANDALONE, s.states.get(STANDALONE)!.subarray(0, 100)),
      expected: { kind: 'state-corrupt', db: 'metric_state', key: STANDALONE },
    },
    {
      damage: 'a split of a granularity the policy lacks',
      change: (s) => s.splits.putSync([STANDALONE, 7 * S, 0], s.splits.get(first(s.splits.getKeys({ start: [STANDALONE, S, 0] })))!),
      expected: { kind: 'split-orphan', db: 'splits', key: [STANDALONE, 7 * S, 0] },
    },
    {
      damage: 'a truncated split',
      change: (s) => {
        const key = first(s.splits.getKeys({ start: [STANDALONE, S, 0] }));
        s.splits.putSync(key, s.splits.get(key)!.subarray(0, 30));
      },
      expected: { kind: 'split-corrupt', db: 'splits' },
    },
    {
      damage: 'the oldest sealed key past a sealed split',
      change: (s) => {
        const key = first(s.splits.getKeys({ start: [STANDALONE, S, 0] }));
        s.splits.putSync([key[0], key[1], key[2] - 3600 * S], s.splits.get(key)!);
      },
      expected: { kind: 'state-mismatch', db: 'metric_state', key: STANDALONE, reason: expect.stringMatching(/retention would miss it/) },
    },
    {
      damage: 'a sealed split where the open split is',
      change: (s) => {
        const key = first(s.splits.getKeys({ start: [STANDALONE, S, 0] }));
        s.splits.putSync([key[0], key[1], key[2] + 2 * 3600 * S], s.splits.get(key)!);
      },
      expected: { kind: 'state-mismatch', db: 'metric_state', key: STANDALONE, reason: expect.stringMatching(/is sealed, yet \d+ is open/) },
    },
    {
      damage: 'a resources_by_revision_start entry removed',
      change: (s) => s.resourcesByRevisionStart.removeSync(first(s.resourcesByRevisionStart.getKeys({ start: ['host'], end: ['host', Infinity] }))),
      expected: { kind: 'index-missing', db: 'resources_by_revision_start' },
    },
    {
      damage: 'a resource_history_values entry removed',
      change: (s) => {
        const { key, dup } = valueEntry(s, 'host_name', 'one', { id: HOST, revision: 1, revisionStart: (first(s.resourceHistory.getRange()).value as { revisionStart: number }).revisionStart });
        expect(s.resourceHistoryValues.removeSync(key, dup)).toBe(true);
      },
      expected: { kind: 'index-missing', db: 'resource_history_values', key: ['host', 'host_name', 'one', HOST, 1] },
    },
    {
      damage: 'a resource_values entry with a stale value',
      change: (s) => {
        const { key, dup } = valueEntry(s, 'host_name', 'one', { id: HOST, revision: -1, revisionStart: 1 });
        s.resourceValues.putSync(key, dup);
      },
      expected: { kind: 'index-extra', db: 'resource_values', key: ['host', 'host_name', 'one', HOST] },
    },
    {
      damage: 'a resource_values entry with a stale revision_start',
      change: (s) => {
        const { key, dup } = valueEntry(s, 'host_name', 'two', { id: HOST, revision: -1, revisionStart: 1 });
        s.resourceValues.putSync(key, dup);
      },
      expected: { kind: 'index-extra', db: 'resource_values', key: ['host', 'host_name', 'two', HOST] },
    },
    {
      damage: 'a resource naming another metric',
      change: (s) => s.resources.setMetrics(HOST, new Map([['cpu', STANDALONE]])),
      expected: { kind: 'index-mismatch', db: 'resources', key: [HOST, 'cpu'] },
    },
    {
      // The record leaves its name to the resource (metric-records.ts): the fault cannot tell it.
      damage: 'a resource not naming its metric',
      change: (s) => s.resources.setMetrics(HOST, new Map()),
      expected: { kind: 'index-missing', db: 'resources', key: [HOST, null] },
    },
    {
      damage: 'a resource not naming its metric stored whole (format 11)',
      change: (s) => {
        const id = s.resources.metricsOf(HOST).get('cpu')!;
        s.metrics.db.putSync(id, s.metrics.get(id)!);
        s.resources.setMetrics(HOST, new Map());
      },
      expected: { kind: 'index-missing', db: 'resources', key: [HOST, 'cpu'] },
    },
    {
      damage: 'a metric name code whose name has another code',
      change: (s) => s.nameCodes.byName!.putSync('cpu', 99),
      expected: { kind: 'index-mismatch', db: 'codes_by_name', key: 'cpu' },
    },
    {
      damage: 'a metric name whose code names nothing',
      change: (s) => s.nameCodes.byName!.putSync('gone', 7),
      expected: { kind: 'index-extra', db: 'codes_by_name', key: 'gone' },
    },
    {
      damage: 'a resource naming a metric that does not exist',
      change: (s) => s.resources.setMetrics(HOST, new Map([['cpu', s.resources.metricsOf(HOST).get('cpu')!], ['gone', '3f0c6d28-8c62-4b38-9b8a-5d1f0e9f6a11']])),
      expected: { kind: 'index-extra', db: 'resources', key: [HOST, 'gone'] },
    },
    {
      damage: 'a resource whose type is gone',
      change: (s) => s.resourceTypes.removeSync('host'),
      expected: { kind: 'resource-type-missing', db: 'resources', key: HOST },
    },
  ];

  it.each(damages)('reports $damage', ({ change, expected }) => {
    change(engine.storage);
    const report = checkStorage(engine.storage);
    expect(report.faults).toContainEqual(expect.objectContaining(expected));
    expect(report.faultCount).toBe(report.faults.length);
  });
});
