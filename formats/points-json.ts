/**
 * The points of single-metric reads as Gnocchi writes them:
 * `[[timestamp, granularity, value], ...]`.
 */
import { MAX_PY_FLOAT_LENGTH, pyFloat, writePyFloat } from './json.js';
import { MAX_TIMESTAMP_LENGTH, writeTimestamp } from './timestamp.js';

/** A series of one granularity: microseconds, or the calendar letter of a calendar resample. */
export interface PointSeries {
  granularity: number | string;
  timestamps: Float64Array;
  values: Float64Array;
}

// `, ["` before a point and `]` after it.
const POINT_PUNCTUATION = 5;

// Answers are written into one reused buffer, room being made for the
// longest possible points, and copied out at their exact length. Scratch
// buffers needed for larger answers than this are not kept.
const MAX_KEPT_SCRATCH = 4 * 1024 * 1024;
let scratch = Buffer.allocUnsafe(64 * 1024);

function scratchOf(capacity: number): Buffer {
  if (capacity <= scratch.length) return scratch;
  const buf = Buffer.allocUnsafe(capacity);
  if (capacity <= MAX_KEPT_SCRATCH) scratch = buf;
  return buf;
}

/** `", ` + the granularity + `, `: the bytes between a point's timestamp and its value. */
function middleBytes(granularity: number | string): Buffer {
  const text = typeof granularity === 'number' ? pyFloat(granularity / 1e6) : JSON.stringify(granularity);
  return Buffer.from(`", ${text}, `, 'latin1');
}

/**
 * `[[timestamp, granularity, value], ...]` as JSON text (ASCII). This is the
 * hot read path: the text is written as bytes in place, so that no string
 * is built per point, and answered as bytes: the server sends them as they
 * are, where a string would be joined to the response's headers and
 * encoded again (two more copies of the answer), and the read cache keeps
 * them. The Buffer is the answer's own (never a slice of a shared pool,
 * which a kept answer would hold on to).
 */
export function serializePoints(series: readonly PointSeries[]): Buffer {
  const middles = series.map((s) => middleBytes(s.granularity));
  const capacity = series.reduce(
    (sum, s, i) => sum + s.timestamps.length * (POINT_PUNCTUATION + MAX_TIMESTAMP_LENGTH + middles[i]!.length + MAX_PY_FLOAT_LENGTH),
    2,
  );
  const buf = scratchOf(capacity);
  let pos = 0;
  buf[pos++] = 0x5b;
  series.forEach((s, i) => {
    pos = writePoints(buf, pos, s, middles[i]!);
  });
  buf[pos++] = 0x5d;
  const answer = Buffer.allocUnsafeSlow(pos);
  buf.copy(answer, 0, 0, pos);
  return answer;
}

/** The points of `s`, each preceded by `, ` unless it is the first of the answer. */
function writePoints(buf: Buffer, pos: number, s: PointSeries, middle: Buffer): number {
  const { timestamps, values } = s;
  const n = middle.length;
  for (let i = 0; i < timestamps.length; i++) {
    if (pos > 1) {
      buf[pos++] = 0x2c;
      buf[pos++] = 0x20;
    }
    buf[pos++] = 0x5b;
    buf[pos++] = 0x22;
    pos = writeTimestamp(buf, pos, timestamps[i]!);
    for (let j = 0; j < n; j++) buf[pos + j] = middle[j]!;
    pos = writePyFloat(buf, pos + n, values[i]!);
    buf[pos++] = 0x5d;
  }
  return pos;
}
