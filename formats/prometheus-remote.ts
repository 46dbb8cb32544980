/**
 * Prometheus remote write: a Snappy-compressed (block format) protobuf
 * `WriteRequest` (Gnocchi's `rest/prometheus/remote.proto`):
 *
 *   message Sample       { double value = 1; int64 timestamp_ms = 2; }
 *   message LabelPair    { string name = 1; string value = 2; }
 *   message TimeSeries   { repeated LabelPair labels = 1; repeated Sample samples = 2; }
 *   message WriteRequest { repeated TimeSeries timeseries = 1; }
 *
 * Decoding uses protobufjs (reflection from the JSON descriptor below) and
 * snappyjs, bounded by the caller's limit on the uncompressed size.
 */
import protobuf from 'protobufjs/light.js';
import { uncompress } from 'snappyjs';
import { FormatError } from './errors.js';

export interface Label {
  name: string;
  value: string;
}

export interface Sample {
  value: number;
  /** Milliseconds since the epoch. */
  timestampMs: number;
}

export interface TimeSeries {
  labels: Label[];
  samples: Sample[];
}

export interface WriteRequest {
  timeseries: TimeSeries[];
}

export class PrometheusDecodeError extends FormatError {}

/** The body would inflate beyond the allowed size. */
export class PrometheusTooLarge extends PrometheusDecodeError {}

const root = protobuf.Root.fromJSON({
  nested: {
    remote: {
      nested: {
        Sample: {
          fields: { value: { type: 'double', id: 1 }, timestamp_ms: { type: 'int64', id: 2 } },
        },
        LabelPair: {
          fields: { name: { type: 'string', id: 1 }, value: { type: 'string', id: 2 } },
        },
        TimeSeries: {
          fields: {
            labels: { rule: 'repeated', type: 'LabelPair', id: 1 },
            samples: { rule: 'repeated', type: 'Sample', id: 2 },
          },
        },
        WriteRequest: {
          fields: { timeseries: { rule: 'repeated', type: 'TimeSeries', id: 1 } },
        },
      },
    },
  },
});

const WRITE_REQUEST = root.lookupType('remote.WriteRequest');

interface RawWriteRequest {
  timeseries?: { labels?: { name?: string; value?: string }[]; samples?: { value?: number; timestamp_ms?: number }[] }[];
}

/** Decodes an uncompressed `WriteRequest`. */
export function decodeWriteRequest(bytes: Uint8Array): WriteRequest {
  let raw: RawWriteRequest;
  try {
    const message = WRITE_REQUEST.decode(bytes);
    raw = WRITE_REQUEST.toObject(message, { longs: Number, defaults: false, arrays: true }) as RawWriteRequest;
  } catch (err) {
    throw new PrometheusDecodeError(`Unable to decode WriteRequest: ${(err as Error).message}`);
  }
  return {
    timeseries: (raw.timeseries ?? []).map((ts) => ({
      labels: (ts.labels ?? []).map((l) => ({ name: l.name ?? '', value: l.value ?? '' })),
      samples: (ts.samples ?? []).map((s) => ({ value: s.value ?? 0, timestampMs: s.timestamp_ms ?? 0 })),
    })),
  };
}

/** Encodes a `WriteRequest` (uncompressed): for tests and tools. */
export function encodeWriteRequest(request: WriteRequest): Uint8Array {
  const message = WRITE_REQUEST.fromObject({
    timeseries: request.timeseries.map((ts) => ({
      labels: ts.labels,
      samples: ts.samples.map((s) => ({ value: s.value, timestamp_ms: s.timestampMs })),
    })),
  });
  return WRITE_REQUEST.encode(message).finish();
}

/** Snappy block decompression, refusing to inflate beyond `maxLength` bytes. */
export function snappyUncompress(bytes: Uint8Array, maxLength: number): Uint8Array {
  try {
    return uncompress(bytes, maxLength);
  } catch (err) {
    if (/too big/.test((err as Error).message)) throw new PrometheusTooLarge((err as Error).message);
    throw new PrometheusDecodeError(`Unable to decompress body: ${(err as Error).message}`);
  }
}

/** The body of a remote write request, decompressed and decoded. */
export function decodeRemoteWrite(body: Uint8Array, maxUncompressed: number): WriteRequest {
  return decodeWriteRequest(snappyUncompress(body, maxUncompressed));
}
