import { existsSync, readFileSync } from 'node:fs';
import { compress } from 'snappyjs';
import fc from 'fast-check';
import { uncompress } from 'snappyjs';
import { describe, expect, it } from 'vitest';
import { epochSecondsToMicros } from '../../formats/timestamp.js';
import {
  decodeRemoteWrite,
  decodeWriteRequest,
  encodeWriteRequest,
  millisToMicros,
  PrometheusDecodeError,
  PrometheusTooLarge,
  readLabels,
  snappyUncompress,
  recycleScanned,
  scanWriteRequest,
  type WriteRequest,
} from '../../formats/prometheus-remote.js';

const FIXTURES = '/usr/lib/python3/dist-packages/gnocchi/tests/functional/gabbits/prometheus_fixtures/';

describe('WriteRequest', () => {
  it('round-trips labels, values and int64 millisecond timestamps', () => {
    const request: WriteRequest = {
      timeseries: [
        {
          labels: [{ name: '__name__', value: 'up' }, { name: 'job', value: 'j' }, { name: 'instance', value: 'é:1' }],
          samples: [{ value: 1.5, timestampMs: 1506146578352 }, { value: -0, timestampMs: 0 }, { value: NaN, timestampMs: 2 ** 52 }],
        },
        { labels: [], samples: [] },
      ],
    };
    const decoded = decodeWriteRequest(encodeWriteRequest(request));
    expect(decoded.timeseries).toHaveLength(2);
    expect(decoded.timeseries[0]!.labels).toEqual(request.timeseries[0]!.labels);
    expect(decoded.timeseries[0]!.samples.map((s) => s.timestampMs)).toEqual([1506146578352, 0, 2 ** 52]);
    expect(decoded.timeseries[0]!.samples[0]!.value).toBe(1.5);
    expect(Number.isNaN(decoded.timeseries[0]!.samples[2]!.value)).toBe(true);
    expect(decoded.timeseries[1]).toEqual({ labels: [], samples: [] });
  });

  it('decodes an empty request', () => {
    expect(decodeWriteRequest(new Uint8Array())).toEqual({ timeseries: [] });
  });

  it.skipIf(!existsSync(FIXTURES))('decodes the Gnocchi fixtures', () => {
    const request = decodeRemoteWrite(readFileSync(FIXTURES + '031b586e-ebe1-4737-812e-cf0ddf26f5ad.dump'), 1 << 20);
    expect(request.timeseries).toHaveLength(100);
    const names = new Set(request.timeseries.map((ts) => ts.labels.find((l) => l.name === '__name__')?.value));
    expect(names.size).toBe(56);
    expect(request.timeseries[0]!.samples[0]).toEqual({ value: 5749, timestampMs: 1506146578352 });
  });

  const bad: [string, Uint8Array][] = [
    ['a truncated message', encodeWriteRequest({ timeseries: [{ labels: [{ name: 'a', value: 'b' }], samples: [] }] }).subarray(0, 5)],
    ['a bad wire type', Uint8Array.from([0x0f, 0x01])],
    ['an overlong varint', Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])],
  ];
  it.each(bad)('refuses %s', (_name, bytes) => {
    expect(() => decodeWriteRequest(bytes)).toThrow(PrometheusDecodeError);
  });
});

describe('snappy', () => {
  it('refuses what is not snappy', () => {
    expect(() => decodeRemoteWrite(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), 1000)).toThrow(PrometheusDecodeError);
    expect(() => decodeRemoteWrite(Buffer.from('hello world'), 1000)).toThrow(PrometheusDecodeError);
  });

  it('refuses to inflate beyond the limit', () => {
    const bomb = compress(new Uint8Array(100_000));
    expect(bomb.length).toBeLessThan(10_000);
    expect(() => decodeRemoteWrite(bomb, 10_000)).toThrow(PrometheusTooLarge);
  });

  it('inflates what another encoder compressed, byte for byte (literals, overlapping copies, blocks past 64 KB)', () => {
    // Few distinct bytes: long runs and repeats, so copies of every offset size and overlapping ones.
    const text = fc.array(fc.oneof(fc.constantFrom(0x61, 0x62), fc.integer({ min: 0, max: 255 })), { maxLength: 300 });
    const bytes = fc.tuple(text, fc.integer({ min: 1, max: 400 })).map(([unit, times]) => Uint8Array.from(Array.from({ length: times }, () => unit).flat()));
    fc.assert(
      fc.property(bytes, (raw) => {
        expect(Buffer.from(snappyUncompress(compress(raw), raw.length))).toEqual(Buffer.from(raw));
      }),
      { numRuns: 300 },
    );
  });

  const corrupt: [string, number[]][] = [
    ['no length', []],
    ['a length of six bytes', [0x80, 0x80, 0x80, 0x80, 0x80, 0x01]],
    ['a length beyond 2^31', [0x80, 0x80, 0x80, 0x80, 0x08]],
    ['a block shorter than its length', [0x05, 0x08, 0x61, 0x62, 0x63]],
    ['a block longer than its length', [0x02, 0x08, 0x61, 0x62, 0x63]],
    ['a copy from before the start', [0x08, 0x00, 0x61, 0x0d, 0x05]],
    ['a literal cut short', [0x05, 0x10, 0x61]],
  ];
  it.each(corrupt)('refuses %s as an invalid body, not an oversized one', (_name, bytes) => {
    expect(() => snappyUncompress(Uint8Array.from(bytes), 1 << 20)).toThrow(new PrometheusDecodeError('Unable to decompress body: Invalid Snappy bitstream'));
    expect(() => snappyUncompress(Uint8Array.from(bytes), 1 << 20)).not.toThrow(PrometheusTooLarge);
  });

  it('names the length and the limit when a body would inflate too far', () => {
    expect(() => snappyUncompress(compress(new Uint8Array(5000)), 4096)).toThrow('The uncompressed length of 5000 is too big, expect at most 4096');
  });
});

/** A request as scanWriteRequest and readLabels read it; null where they step aside (to decodeWriteRequest). */
function scanned(bytes: Uint8Array): WriteRequest | null {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const s = scanWriteRequest(buffer);
  if (s === null) return null;
  const timeseries: WriteRequest['timeseries'] = [];
  for (let i = 0; i < s.count; i++) {
    const labels = readLabels(buffer, s.labelsStart[i]!, s.labelsEnd[i]!);
    if (labels === null) return null;
    const samples = [];
    for (let k = s.sampleStart[i]!; k < s.sampleStart[i + 1]!; k++) samples.push({ value: s.values[k]!, timestampMs: s.timestampsMs[k]! });
    timeseries.push({ labels, samples });
  }
  return { timeseries };
}

/** decodeWriteRequest's request, or its error message. */
function decoded(bytes: Uint8Array): WriteRequest | string {
  try {
    return decodeWriteRequest(bytes);
  } catch (err) {
    return (err as Error).message;
  }
}

const tag = (field: number, wire: number) => (field << 3) | wire;
const varint = (n: number) => {
  const out: number[] = [];
  do {
    out.push((n % 128) + (n >= 128 ? 128 : 0));
    n = Math.floor(n / 128);
  } while (n > 0);
  return out;
};
const delimited = (field: number, bytes: number[]) => [tag(field, 2), ...varint(bytes.length), ...bytes];
const text = (field: number, s: string) => delimited(field, [...Buffer.from(s)]);
const label = (name: string, value: string) => delimited(1, [...text(1, name), ...text(2, value)]);
const sample = (value: number, ms: number) => {
  const double = Buffer.alloc(8);
  double.writeDoubleLE(value);
  return delimited(2, [tag(1, 1), ...double, tag(2, 0), ...varint(ms)]);
};
const request = (...series: number[][]) => Uint8Array.from(series.flatMap((ts) => delimited(1, ts)));

describe('scanWriteRequest', () => {
  const plain: [string, Uint8Array][] = [
    ['an encoded request', encodeWriteRequest({ timeseries: [{ labels: [{ name: '__name__', value: 'up' }, { name: 'job', value: 'é' }], samples: [{ value: 1.5, timestampMs: 1506146578352 }, { value: -0, timestampMs: 0 }] }, { labels: [], samples: [] }] })],
    ['an empty request', new Uint8Array()],
    ['fields in another order, repeated', request([...label('a', 'b'), ...delimited(2, [tag(2, 0), 5, tag(1, 1), 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, tag(2, 0), 7])])],
    ['a label pair given twice a field', request([...delimited(1, [...text(1, 'a'), ...text(2, 'x'), ...text(1, 'b')])])],
    ['defaults', request([...delimited(1, []), ...delimited(2, [])])],
    ['a 7-byte timestamp', request([...label('a', 'b'), ...sample(2, 2 ** 49 - 1)])],
    // As long as a sample with a 6-byte timestamp: the second timestamp counts.
    ['a timestamp given twice, the first of 4 bytes', request([...label('a', 'b'), ...delimited(2, [tag(1, 1), 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, tag(2, 0), ...varint(2 ** 27), tag(2, 0), 9])])],
  ];
  it.each(plain)('reads %s as decodeWriteRequest does', (_name, bytes) => {
    expect(scanned(bytes)).toEqual(decodeWriteRequest(bytes));
  });

  it('reads any timestamp and value as decodeWriteRequest does', () => {
    const samples = fc.array(fc.tuple(fc.double(), fc.oneof(fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 2 ** 27, max: 2 ** 49 - 1 }))), { maxLength: 20 });
    fc.assert(
      fc.property(samples, (pairs) => {
        const bytes = request([...label('a', 'b'), ...pairs.flatMap(([value, ms]) => sample(value, ms))]);
        expect(scanned(bytes)).toEqual(decodeWriteRequest(bytes));
      }),
      { numRuns: 500 },
    );
  });

  it('scans into recycled columns large enough, those of small requests not keeping larger ones out', () => {
    const big = Buffer.from(encodeWriteRequest({ timeseries: [{ labels: [{ name: '__name__', value: 'a' }], samples: Array.from({ length: 3000 }, (_, i) => ({ value: i, timestampMs: i })) }] }));
    for (let i = 0; i < 20; i++) recycleScanned({ timestamps: new Float64Array(64), values: new Float64Array(64) });
    // As many as the scan reserves for the request (a sample takes at least 13 bytes).
    const large = { timestamps: new Float64Array(Math.ceil(big.length / 13)), values: new Float64Array(Math.ceil(big.length / 13)) };
    recycleScanned(large);
    const s = scanWriteRequest(big)!;
    expect(s.timestampsMs).toBe(large.timestamps);
    expect(s.values).toBe(large.values);
  });

  it('reads each request alike after columns of another were recycled', () => {
    const big = encodeWriteRequest({ timeseries: [{ labels: [{ name: '__name__', value: 'a' }], samples: Array.from({ length: 500 }, (_, i) => ({ value: i, timestampMs: i })) }] });
    const small = plain[0]![1];
    const first = scanWriteRequest(Buffer.from(big))!;
    recycleScanned({ timestamps: first.timestampsMs, values: first.values });
    // The recycled columns are those of the next scan large enough: nothing of the first request shows.
    expect(scanned(small)).toEqual(decodeWriteRequest(small));
    expect(scanned(big)).toEqual(decodeWriteRequest(big));
  });

  it.skipIf(!existsSync(FIXTURES))('reads the Gnocchi fixtures', () => {
    for (const f of ['031b586e-ebe1-4737-812e-cf0ddf26f5ad.dump', 'a0c06674-a5ef-4621-883c-e94880a2de02.dump', '1ea8f6f7-eebe-49d5-8276-ceb2d56c5ba4.dump']) {
      const bytes = uncompress(readFileSync(FIXTURES + f));
      expect(scanned(bytes)).not.toBeNull();
      expect(scanned(bytes)).toEqual(decodeWriteRequest(bytes));
    }
  });

  const aside: [string, Uint8Array][] = [
    ['an unknown field', request([...label('a', 'b'), ...text(3, 'x')])],
    ['samples before labels', request([...sample(1, 1), ...label('a', 'b')])],
    ['a negative timestamp', request([...label('a', 'b'), ...delimited(2, [tag(2, 0), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])])],
    ['an 8-byte timestamp', request([...label('a', 'b'), ...sample(1, 2 ** 49)])],
    ['a truncated message', request([...label('a', 'b')]).subarray(0, 5)],
    ['a label longer than its series', request([tag(1, 2), 7, ...text(1, 'a'), ...text(2, 'b')], [...label('c', 'd')])],
    ['a bad wire type', Uint8Array.from([0x0f, 0x01])],
    ['a label that is not UTF-8', request([...delimited(1, [...text(1, 'a'), tag(2, 2), 1, 0xff])])],
  ];
  it.each(aside)('leaves %s to decodeWriteRequest', (_name, bytes) => {
    expect(scanned(bytes)).toBeNull();
  });

  it('never reads a request otherwise than decodeWriteRequest', () => {
    const base = [
      ...request([...label('__name__', 'up'), ...label('job', 'j'), ...sample(1.25, 1700000000000), ...sample(2, 1700000060000)]),
      ...request([...label('__name__', 'é'), ...sample(-3, 5)]),
    ];
    let read = 0;
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(base.length - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }), fc.option(fc.nat(base.length)), (edits, cut) => {
        const bytes = Uint8Array.from(base).subarray(0, cut ?? base.length);
        for (const [at, value] of edits) if (at < bytes.length) bytes[at] = value;
        const fast = scanned(bytes);
        if (fast === null) return;
        read++;
        expect(fast).toEqual(decoded(bytes));
      }),
      { numRuns: 10000, seed: 17 },
    );
    // Mutations mostly keep the plain shape: the comparison is not vacuous.
    expect(read).toBeGreaterThan(500);
  });
});

describe('millisToMicros', () => {
  it('turns each timestamp as epochSecondsToMicros reads ms / 1000, stopping at the first it refuses', () => {
    const edges = fc.constantFrom(0, -0, -1, 0.4, -0.0004, 1.5, 2 ** 53 / 1000, 2 ** 53 / 1000 + 1, 2 ** 49 - 1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY);
    const ms = fc.oneof(fc.integer({ min: 0, max: 2 ** 49 }), fc.double({ min: -1e16, max: 1e16 }), edges);
    fc.assert(
      fc.property(fc.array(ms, { maxLength: 12 }), (column) => {
        const turned = Float64Array.from(column);
        const refused = millisToMicros(turned, 0, column.length);
        const expected = column.map((t) => epochSecondsToMicros(t / 1000));
        const first = expected.indexOf(undefined);
        expect(refused).toBe(first);
        const done = first === -1 ? column.length : first;
        expect([...turned.subarray(0, done)]).toEqual(expected.slice(0, done));
        expect([...turned.subarray(done)]).toEqual(column.slice(done));
      }),
      { numRuns: 2000 },
    );
  });
});
