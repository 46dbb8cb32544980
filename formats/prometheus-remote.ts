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
 * hysnappy (Snappy compiled to WebAssembly: snappyjs, which copies byte by
 * byte, took ~15% of the write path's main thread), bounded by the caller's
 * limit on the uncompressed size. The
 * write path first tries scanWriteRequest, which reads the shape every
 * encoder writes straight from the bytes (protobufjs builds two objects per
 * sample) and leaves anything else to decodeWriteRequest.
 */
import { isUtf8 } from 'node:buffer';
import protobuf from 'protobufjs/light.js';
import { snappyUncompressor } from 'hysnappy';
import { FormatError } from './errors.js';
import { epochSecondsToMicros } from './timestamp.js';

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

/** One WebAssembly instance for the process, made once (its memory grows to the largest body seen). */
const uncompressBlock = snappyUncompressor();

const INVALID_SNAPPY = 'Unable to decompress body: Invalid Snappy bitstream';

/**
 * The uncompressed length a Snappy block starts with (a varint of at most
 * five bytes), or -1 when it has none or one of 2^31 or more.
 */
function uncompressedLength(bytes: Uint8Array): number {
  let length = 0;
  for (let i = 0, scale = 1; i < 5 && i < bytes.length; i++, scale *= 128) {
    const c = bytes[i]!;
    length += (c & 0x7f) * scale;
    if (c < 0x80) return length < 2 ** 31 ? length : -1;
  }
  return -1;
}

/** Snappy block decompression, refusing to inflate beyond `maxLength` bytes. */
export function snappyUncompress(bytes: Uint8Array, maxLength: number): Uint8Array {
  const length = uncompressedLength(bytes);
  if (length === -1) throw new PrometheusDecodeError(INVALID_SNAPPY);
  if (length > maxLength) throw new PrometheusTooLarge(`The uncompressed length of ${length} is too big, expect at most ${maxLength}`);
  try {
    return uncompressBlock(bytes, length);
  } catch (err) {
    // hysnappy's own refusals (a bad copy, a block shorter or longer than its length) are Errors; a trap is a corrupt block too. Anything else (memory) is not the client's.
    if (err instanceof WebAssembly.RuntimeError || (err instanceof Error && err.constructor === Error)) throw new PrometheusDecodeError(INVALID_SNAPPY);
    throw err;
  }
}

/** The body of a remote write request, decompressed and decoded. */
export function decodeRemoteWrite(body: Uint8Array, maxUncompressed: number): WriteRequest {
  return decodeWriteRequest(snappyUncompress(body, maxUncompressed));
}

/**
 * A WriteRequest read straight from its bytes for the write path: no
 * object per series, label or sample. Each series' labels stay encoded
 * (their bytes identify the series to a cache; readLabels decodes them);
 * samples go to typed arrays.
 */
export interface ScannedWriteRequest {
  /** Number of time series. */
  count: number;
  /** Per series, its LabelPair fields as encoded: bytes [labelsStart[i], labelsEnd[i]). */
  labelsStart: Int32Array;
  labelsEnd: Int32Array;
  /** Per series, its samples: [sampleStart[i], sampleStart[i + 1]). */
  sampleStart: Int32Array;
  timestampsMs: Float64Array;
  values: Float64Array;
}

/** Tags (field number << 3 | wire type) of the shape scanWriteRequest reads. */
const LENGTH_FIELD_1 = 0x0a;
const LENGTH_FIELD_2 = 0x12;
const DOUBLE_FIELD_1 = 0x09;
const VARINT_FIELD_2 = 0x10;
/** Longest int64 varint read here: 7 bytes, 49 bits, exact in a double. */
const MAX_VARINT_BYTES = 7;

/** Series the next scan reserves room for: one more than the last scanned request had (at least 64). */
let seriesExpected = 64;
/** A huge request does not make every later scan reserve as much. */
const MAX_SERIES_EXPECTED = 1 << 16;

/** Thrown inside the scanner when the message leaves the plain shape; never escapes this module. */
class OffShape extends Error {}
const OFF_SHAPE = new OffShape();

/** Reads varints and delimited fields; throws OFF_SHAPE past what it reads. */
class Cursor {
  pos = 0;

  constructor(protected readonly bytes: Uint8Array) {}

  /** A varint of at most `maxBytes` bytes (a length: 4, so below 2^28). */
  varint(end: number, maxBytes: number): number {
    const b = this.bytes;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < maxBytes && this.pos < end; i++) {
      const c = b[this.pos++]!;
      value += (c & 0x7f) * scale;
      if (c < 0x80) return value;
      scale *= 128;
    }
    throw OFF_SHAPE;
  }

  /** The end of the length-delimited field whose length comes next. */
  delimited(end: number): number {
    const length = this.varint(end, 4);
    if (length > end - this.pos) throw OFF_SHAPE;
    return this.pos + length;
  }
}

class MessageScanner extends Cursor {
  private readonly view: DataView;
  series = 0;
  samples = 0;
  // As many series as the last request had (a collector's requests are alike): grown from a few by doubling, they were copied through every size.
  labelsStart = new Int32Array(seriesExpected);
  labelsEnd = new Int32Array(seriesExpected);
  sampleStart = new Int32Array(seriesExpected + 1);
  timestampsMs: Float64Array;
  values: Float64Array;

  constructor(bytes: Uint8Array) {
    super(bytes);
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    // A sample takes at least 13 bytes encoded.
    const capacity = Math.max(MIN_SAMPLES, Math.ceil(bytes.length / 13));
    const i = spareSamples.findIndex((kept) => kept.timestamps.length >= capacity);
    if (i !== -1) {
      const kept = spareSamples.splice(i, 1)[0]!;
      this.timestampsMs = kept.timestamps;
      this.values = kept.values;
    } else {
      this.timestampsMs = new Float64Array(capacity);
      this.values = new Float64Array(capacity);
    }
  }

  request(): void {
    const end = this.bytes.length;
    while (this.pos < end) {
      if (this.bytes[this.pos++] !== LENGTH_FIELD_1) throw OFF_SHAPE;
      this.timeSeries(this.delimited(end));
    }
    this.sampleStart[this.series] = this.samples;
    seriesExpected = Math.max(64, Math.min(this.series + 1, MAX_SERIES_EXPECTED));
  }

  /** Labels first, then samples, as every encoder writes them. */
  private timeSeries(end: number): void {
    const b = this.bytes;
    if (this.series + 1 === this.labelsStart.length) this.growSeries();
    this.labelsStart[this.series] = this.pos;
    while (this.pos < end && b[this.pos] === LENGTH_FIELD_1) {
      this.pos++;
      this.labelPair(this.delimited(end));
    }
    this.labelsEnd[this.series] = this.pos;
    this.sampleStart[this.series] = this.samples;
    this.samplesOf(end);
    this.series++;
  }

  /**
   * The samples up to `end`. Each is read in one step when it has the shape
   * every encoder gives it (a one-byte length, the value, then the
   * timestamp ending the sample), which reads as `sample` would read it:
   * ~10,000 samples a request, where the general reading's calls per field
   * cost ~3 times as much. Any other sample takes the general reading.
   */
  private samplesOf(end: number): void {
    const b = this.bytes;
    const { view } = this;
    let pos = this.pos;
    let n = this.samples;
    let timestamps = this.timestampsMs;
    let values = this.values;
    while (pos < end) {
      const length = b[pos + 1]!;
      const sampleEnd = pos + 2 + length;
      // A timestamp of 5 to 7 bytes (since 1970-01-04) ending the sample, read in int32 pieces: a double per byte cost as much as the rest.
      if (b[pos] === LENGTH_FIELD_2 && length >= 15 && length <= 17 && sampleEnd <= end && b[pos + 2] === DOUBLE_FIELD_1 && b[pos + 11] === VARINT_FIELD_2 && n < values.length) {
        const q = pos + 12;
        const c0 = b[q]!;
        const c1 = b[q + 1]!;
        const c2 = b[q + 2]!;
        const c3 = b[q + 3]!;
        // Every byte but the last continues the varint, the last ends it.
        let continued = c0 & c1 & c2 & c3;
        let high = 0;
        let shift = 0;
        for (let j = q + 4; j < sampleEnd - 1; j++, shift += 7) {
          continued &= b[j]!;
          high |= (b[j]! & 0x7f) << shift;
        }
        const last = b[sampleEnd - 1]!;
        if ((continued & 0x80) !== 0 && last < 0x80) {
          high |= last << shift;
          values[n] = view.getFloat64(pos + 3, true);
          timestamps[n++] = ((c0 & 0x7f) | ((c1 & 0x7f) << 7) | ((c2 & 0x7f) << 14) | ((c3 & 0x7f) << 21)) + high * 2 ** 28;
          pos = sampleEnd;
          continue;
        }
      }
      this.pos = pos;
      this.samples = n;
      if (b[this.pos++] !== LENGTH_FIELD_2) throw OFF_SHAPE;
      this.sample(this.delimited(end));
      pos = this.pos;
      n = this.samples;
      timestamps = this.timestampsMs;
      values = this.values;
    }
    this.pos = pos;
    this.samples = n;
  }

  private labelPair(end: number): void {
    while (this.pos < end) {
      const tag = this.bytes[this.pos++];
      if (tag !== LENGTH_FIELD_1 && tag !== LENGTH_FIELD_2) throw OFF_SHAPE;
      this.pos = this.delimited(end);
    }
  }

  private sample(end: number): void {
    let value = 0;
    let timestampMs = 0;
    while (this.pos < end) {
      const tag = this.bytes[this.pos++];
      if (tag === DOUBLE_FIELD_1) {
        if (end - this.pos < 8) throw OFF_SHAPE;
        value = this.view.getFloat64(this.pos, true);
        this.pos += 8;
      } else if (tag === VARINT_FIELD_2) {
        timestampMs = this.varint(end, MAX_VARINT_BYTES);
      } else {
        throw OFF_SHAPE;
      }
    }
    if (this.samples === this.values.length) this.growSamples();
    this.timestampsMs[this.samples] = timestampMs;
    this.values[this.samples++] = value;
  }

  private growSeries(): void {
    const size = 2 * this.labelsStart.length;
    const grown = (a: Int32Array, length: number) => {
      const next = new Int32Array(length);
      next.set(a);
      return next;
    };
    this.labelsStart = grown(this.labelsStart, size);
    this.labelsEnd = grown(this.labelsEnd, size);
    this.sampleStart = grown(this.sampleStart, size + 1);
  }

  private growSamples(): void {
    const grown = (a: Float64Array) => {
      const next = new Float64Array(2 * a.length);
      next.set(a);
      return next;
    };
    this.timestampsMs = grown(this.timestampsMs);
    this.values = grown(this.values);
  }
}

/**
 * Sample columns of scanned requests their readers are done with, for the
 * next scans: fresh ones of a request's size (hundreds of KB) are allocated
 * and faulted in each time, a visible share of the write path's profile.
 * As many as requests are usually in flight (a write holds its columns
 * until its points are stored).
 */
const spareSamples: { timestamps: Float64Array; values: Float64Array }[] = [];
const MAX_SPARE = 8;
/** Larger columns are not kept (at most 8 MB kept in all). */
const MAX_SPARE_SAMPLES = 1 << 16;
/** Samples a scan reserves room for at least (smaller columns are not kept). */
const MIN_SAMPLES = 64;

/**
 * Hands back the sample columns of a scanned request (or any) no longer
 * read, for the next scanWriteRequest. When the pool is full they take the
 * place of smaller ones: columns of small requests do not keep those of
 * large ones out.
 */
export function recycleScanned(columns: { timestamps: Float64Array; values: Float64Array }): void {
  const size = columns.timestamps.length;
  if (size < MIN_SAMPLES || size > MAX_SPARE_SAMPLES || columns.values.length !== size) return;
  if (spareSamples.length < MAX_SPARE) {
    spareSamples.push(columns);
    return;
  }
  let smallest = 0;
  for (let i = 1; i < spareSamples.length; i++) if (spareSamples[i]!.timestamps.length < spareSamples[smallest]!.timestamps.length) smallest = i;
  if (spareSamples[smallest]!.timestamps.length < size) spareSamples[smallest] = columns;
}

/**
 * An uncompressed WriteRequest in the plain shape every encoder writes
 * (known fields with their wire types, labels before samples, timestamps
 * of at most 7 varint bytes, so from 1970 to 19810), or null: the caller
 * then takes decodeWriteRequest, which gives the same requests and every
 * error. Label strings are checked when readLabels decodes them.
 */
export function scanWriteRequest(bytes: Uint8Array): ScannedWriteRequest | null {
  const s = new MessageScanner(bytes);
  try {
    s.request();
  } catch (err) {
    if (err !== OFF_SHAPE) throw err;
    recycleScanned({ timestamps: s.timestampsMs, values: s.values });
    return null;
  }
  return {
    count: s.series,
    labelsStart: s.labelsStart,
    labelsEnd: s.labelsEnd,
    sampleStart: s.sampleStart,
    timestampsMs: s.timestampsMs,
    values: s.values,
  };
}

/**
 * The labels of a scanned series (bytes [start, end) from
 * scanWriteRequest), each field's last occurrence counting as in
 * decodeWriteRequest; null when a string is not UTF-8 (decodeWriteRequest
 * refuses the request).
 */
export function readLabels(bytes: Buffer, start: number, end: number): Label[] | null {
  const s = new Cursor(bytes);
  s.pos = start;
  const labels: Label[] = [];
  while (s.pos < end) {
    s.pos++;
    const pairEnd = s.delimited(end);
    const label: Label = { name: '', value: '' };
    while (s.pos < pairEnd) {
      const tag = bytes[s.pos++];
      const stringEnd = s.delimited(pairEnd);
      const text = utf8(bytes, s.pos, stringEnd);
      if (text === null) return null;
      if (tag === LENGTH_FIELD_1) label.name = text;
      else label.value = text;
      s.pos = stringEnd;
    }
    labels.push(label);
  }
  return labels;
}

function utf8(bytes: Buffer, start: number, end: number): string | null {
  for (let i = start; i < end; i++) {
    if (bytes[i]! >= 0x80) return isUtf8(bytes.subarray(start, end)) ? bytes.toString('utf8', start, end) : null;
  }
  return bytes.toString('latin1', start, end);
}

/**
 * Turns timestamps [from, to) of a column from milliseconds into
 * microseconds in place, each as epochSecondsToMicros reads `ms / 1000`;
 * answers the index of the first it refuses (the ones before it turned),
 * -1 when none. Its own arithmetic for the usual case: a call answering
 * `number | undefined` boxed every result, 16 bytes of garbage a sample.
 */
export function millisToMicros(column: Float64Array, from: number, to: number): number {
  for (let k = from; k < to; k++) {
    const ms = column[k]!;
    // epochSecondsToMicros' rounding; from 0 on, its other checks come to the bound (NaN fails the first test, infinity the second).
    const micros = Math.round((ms / 1000) * 1_000_000) + 0;
    if (ms >= 0 && micros <= Number.MAX_SAFE_INTEGER) {
      column[k] = micros;
      continue;
    }
    const checked = epochSecondsToMicros(ms / 1000);
    if (checked === undefined) return k;
    column[k] = checked;
  }
  return -1;
}
