/**
 * What statsd samples add up to over one flush interval, as measures by
 * metric name. Metrics are named `key|type` (`hits|c`, `rt|ms`), as
 * `gnocchi-statsd` names them, so a counter and a timer sharing a key stay
 * apart. Per interval: a counter is the sum of value / rate; a gauge is its
 * last value, deltas applied to the value it had (kept across intervals, 0
 * at first); every timer sample is a measure of its own, for the archive
 * policy's methods to summarise; a set is its count of distinct members.
 * Only what was received in the interval becomes a measure. Timestamps are
 * the arrival times in microseconds, strictly increasing (nowMicros), so a
 * metric's measures never share one.
 */
import { nowMicros } from '../engine/resources.js';
import type { StatsdSample } from '../formats/statsd.js';

/** Measures of one metric in time order. */
export interface Points {
  timestamps: number[];
  values: number[];
}

interface Latest {
  value: number;
  at: number;
}

export class StatsdInterval {
  private counters = new Map<string, Latest>();
  /** Gauges received this interval. */
  private gauges = new Map<string, Latest>();
  /** Every gauge's value, for the deltas of later intervals. */
  private readonly gaugeValues = new Map<string, number>();
  private timers = new Map<string, Points>();
  private sets = new Map<string, { members: Set<string>; at: number }>();

  add(sample: StatsdSample): void {
    const name = `${sample.name}|${sample.type}`;
    const at = nowMicros();
    switch (sample.type) {
      case 'c': {
        const counter = this.counters.get(name);
        const value = sample.value / sample.rate;
        if (counter === undefined) this.counters.set(name, { value, at });
        else {
          counter.value += value;
          counter.at = at;
        }
        break;
      }
      case 'g': {
        const value = sample.delta ? (this.gaugeValues.get(name) ?? 0) + sample.value : sample.value;
        this.gaugeValues.set(name, value);
        this.gauges.set(name, { value, at });
        break;
      }
      case 'ms': {
        let timer = this.timers.get(name);
        if (timer === undefined) this.timers.set(name, (timer = { timestamps: [], values: [] }));
        timer.timestamps.push(at);
        timer.values.push(sample.value);
        break;
      }
      case 's': {
        const set = this.sets.get(name);
        if (set === undefined) this.sets.set(name, { members: new Set([sample.member]), at });
        else {
          set.members.add(sample.member);
          set.at = at;
        }
        break;
      }
    }
  }

  /** The interval's measures by metric name; the next interval starts empty (gauge values stay). */
  drain(): Map<string, Points> {
    const out = new Map<string, Points>(this.timers);
    const one = (name: string, { value, at }: Latest) => out.set(name, { timestamps: [at], values: [value] });
    for (const [name, latest] of this.counters) one(name, latest);
    for (const [name, latest] of this.gauges) one(name, latest);
    for (const [name, { members, at }] of this.sets) one(name, { value: members.size, at });
    this.counters = new Map();
    this.gauges = new Map();
    this.timers = new Map();
    this.sets = new Map();
    return out;
  }
}
