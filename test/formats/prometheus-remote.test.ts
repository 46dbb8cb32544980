import { existsSync, readFileSync } from 'node:fs';
import { compress } from 'snappyjs';
import { describe, expect, it } from 'vitest';
import {
  decodeRemoteWrite,
  decodeWriteRequest,
  encodeWriteRequest,
  PrometheusDecodeError,
  PrometheusTooLarge,
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
});
