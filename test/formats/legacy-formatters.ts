/**
 * The formatters of the read path as they were before they wrote bytes in
 * place, kept as the reference the fast ones must match byte for byte
 * (`pyFloat`, unchanged, is the reference for floats).
 */
import type { AggregatedSeries } from '../../engine/read-measures.js';
import { pyFloat } from '../../formats/json.js';

const TWO_DIGITS = Array.from({ length: 60 }, (_, n) => String(n).padStart(2, '0'));

export function legacyFormatTimestamp(micros: number): string {
  let seconds = Math.floor(micros / 1_000_000);
  let fraction = micros - seconds * 1_000_000;
  if (fraction < 0) {
    seconds -= 1;
    fraction += 1_000_000;
  }
  const day = Math.floor(seconds / 86_400);
  const date = new Date(day * 86_400_000);
  const prefix =
    `${String(date.getUTCFullYear()).padStart(4, '0')}-` +
    `${TWO_DIGITS[date.getUTCMonth() + 1]}-${TWO_DIGITS[date.getUTCDate()]}T`;
  const secondOfDay = seconds - day * 86_400;
  const minuteOfDay = Math.floor(secondOfDay / 60);
  const hour = Math.floor(minuteOfDay / 60);
  const time = `${prefix}${TWO_DIGITS[hour]}:${TWO_DIGITS[minuteOfDay - hour * 60]}:${TWO_DIGITS[secondOfDay - minuteOfDay * 60]}`;
  if (fraction === 0) return `${time}+00:00`;
  return `${time}.${String(fraction + 1_000_000).slice(1)}+00:00`;
}

export function legacySerializePoints(series: AggregatedSeries[]): string {
  const parts: string[] = [];
  for (const s of series) {
    const g = typeof s.granularity === 'number' ? pyFloat(s.granularity / 1e6) : JSON.stringify(s.granularity);
    for (let i = 0; i < s.timestamps.length; i++) {
      parts.push(`["${legacyFormatTimestamp(s.timestamps[i]!)}", ${g}, ${pyFloat(s.values[i]!)}]`);
    }
  }
  return `[${parts.join(', ')}]`;
}
