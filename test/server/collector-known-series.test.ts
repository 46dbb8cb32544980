// A collector's writes of series it wrote before (engine/collector.ts takes
// them in one pass): every write still checks each resource and the writer's
// rights, refusing in Gnocchi's order (every resource prepared before any
// right is checked), and stores each point under the metric its series names.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { collectorState, writeCollectorBatch, type CollectorWrite } from '../../engine/collector.js';
import type { IncomingPoints } from '../../engine/incoming-batch.js';
import { groupLines } from '../../server/routes/influxdb.js';
import { json, startInfluxTestApp, type TestApp } from './helpers.js';

let t: TestApp;
beforeEach(async () => {
  t = await startInfluxTestApp();
});
afterEach(async () => {
  await t.close();
});

const LINES = ['m,host=a f=1 3600000000000', 'm,host=b f=2,g=3 3600000000000', 'm,host=c f=4 3600000000000'];

/** A write of the lines as the influx route makes it, its checks refusing what `refuse` names. */
async function writeLines(lines: string[], refuse: { prepare?: string; update?: boolean; post?: boolean } = {}): Promise<void> {
  const batch = groupLines(Buffer.from(lines.join('\n')), { db: 'db1', tagToRid: 'host', precision: 'ns', creator: 'admin', nowMicros: 0 }, collectorState(t.engine).series);
  const write: CollectorWrite = {
    type: 'db1',
    creator: 'admin',
    prepare: (slot) => {
      if (slot.original === refuse.prepare) throw new Error(`prepare ${slot.original}`);
      return {};
    },
    mayUpdate: () => {
      if (refuse.update === true) throw new Error('update');
    },
    mayPost: () => {
      if (refuse.post === true) throw new Error('post');
    },
    maxSeries: 0,
  };
  await writeCollectorBatch(t.engine, batch, write);
}

/** The points pushed by `run`, by metric id: [timestamp, value] pairs. */
async function pushedBy(run: () => Promise<void>): Promise<Map<string, [number, number][]>> {
  const pushed = new Map<string, [number, number][]>();
  const addPoints = vi.spyOn(t.engine, 'addPoints').mockImplementation(async (points: IncomingPoints) => {
    const { timestamps, values } = points as { timestamps: Float64Array; values: Float64Array };
    points.metricIds.forEach((id, i) => {
      const from = points.start[i]!;
      pushed.set(id, Array.from({ length: points.count[i]! }, (_, k) => [timestamps[from + k]!, values[from + k]!]));
    });
  });
  try {
    await run();
  } finally {
    addPoints.mockRestore();
  }
  return pushed;
}

async function metricId(host: string, name: string): Promise<string> {
  const r = await json(t.app, 'GET', '/v1/resource/db1/' + host);
  return r.body.metrics[name];
}

describe('writes of known series', () => {
  it.each<[string, { prepare?: string; update?: boolean; post?: boolean }, string]>([
    ['the writer may not post measures', { post: true }, 'post'],
    ['the writer may not update the resource', { update: true }, 'update'],
    ['a resource is refused', { prepare: 'c' }, 'prepare c'],
    ['a later resource is refused while the writer may not post to any', { prepare: 'c', post: true }, 'prepare c'],
  ])('are refused on every write when %s', async (_case, refuse, message) => {
    await writeLines(LINES);
    for (let round = 0; round < 2; round++) {
      const pushed = await pushedBy(() => expect(writeLines(LINES, refuse)).rejects.toThrow(message));
      expect(pushed.size).toBe(0);
    }
  });

  it('push each point to its metric, write after write', async () => {
    await writeLines(LINES);
    const ids = { af: await metricId('a', 'm.f'), bf: await metricId('b', 'm.f'), bg: await metricId('b', 'm.g'), cf: await metricId('c', 'm.f') };
    for (let round = 1; round <= 3; round++) {
      const lines = LINES.map((line) => line.replace('3600000000000', `${3600 * (round + 1)}000000000`));
      const pushed = await pushedBy(() => writeLines(lines));
      const at = 3600 * (round + 1) * 1e6;
      expect(Object.fromEntries(pushed)).toEqual({ [ids.af]: [[at, 1]], [ids.bf]: [[at, 2]], [ids.bg]: [[at, 3]], [ids.cf]: [[at, 4]] });
    }
  });

  it('push the ids of each write as written, in the order of the last one or not, never changing those of a write pushed before', async () => {
    await writeLines(LINES);
    const id = { a: await metricId('a', 'm.f'), b: await metricId('b', 'm.f'), bg: await metricId('b', 'm.g'), c: await metricId('c', 'm.f') };
    const given: { ids: string[]; copy: string[] }[] = [];
    const addPoints = vi.spyOn(t.engine, 'addPoints').mockImplementation(async (points: IncomingPoints) => {
      given.push({ ids: points.metricIds, copy: [...points.metricIds] });
    });
    const writes: [string[], string[]][] = [
      [LINES, [id.a, id.b, id.bg, id.c]],
      [LINES, [id.a, id.b, id.bg, id.c]],
      [[LINES[2]!, LINES[0]!, LINES[1]!], [id.c, id.a, id.b, id.bg]],
      [[LINES[0]!, LINES[1]!], [id.a, id.b, id.bg]],
      [[LINES[0]!, LINES[2]!, LINES[1]!], [id.a, id.c, id.b, id.bg]],
      [LINES, [id.a, id.b, id.bg, id.c]],
    ];
    try {
      for (const [lines] of writes) await writeLines(lines);
    } finally {
      addPoints.mockRestore();
    }
    expect(given.map((g) => g.ids)).toEqual(writes.map(([, ids]) => ids));
    expect(given.map((g) => g.ids), 'what each write pushed, as pushed').toEqual(given.map((g) => g.copy));
  });

  it('push to the metric that exists now once a known one is deleted', async () => {
    await writeLines(LINES);
    await writeLines(LINES);
    const old = await metricId('b', 'm.g');
    expect((await json(t.app, 'DELETE', `/v1/metric/${old}`)).status).toBe(204);
    const pushed = await pushedBy(() => writeLines(LINES));
    const now = await metricId('b', 'm.g');
    expect(now).not.toBe(old);
    expect(pushed.has(now)).toBe(true);
    expect(pushed.has(old)).toBe(false);
    expect(pushed.size).toBe(4);
  });
});
