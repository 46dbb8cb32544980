/**
 * The one progress reporter of the admin commands and of the server's
 * start-up (engine/progress.ts is what the engine sees): a cli-progress bar
 * when stderr is a terminal, otherwise a line every interval (done/total,
 * rate) so that logs show a long operation is alive without flooding.
 * Works for synchronous engine loops too: nothing waits for a timer.
 */
import cliProgress from 'cli-progress';
import type { Progress, ProgressTask, ProgressUnit } from '../../engine/progress.js';

/** Environment variable: milliseconds between progress lines when not on a terminal. */
const PROGRESS_INTERVAL_ENV = 'GNOCCHI_PROGRESS_INTERVAL';
const DEFAULT_INTERVAL_MS = 2000;

export interface ProgressOptions {
  stream?: NodeJS.WriteStream;
  /** Draw a bar (default: whether `stream` is a terminal). */
  tty?: boolean;
  /** Between two lines when not drawing a bar (default: $GNOCCHI_PROGRESS_INTERVAL, else 2 s). */
  intervalMs?: number;
}

function intervalFromEnv(): number {
  const ms = Number(process.env[PROGRESS_INTERVAL_ENV]);
  return process.env[PROGRESS_INTERVAL_ENV] !== undefined && Number.isFinite(ms) && ms >= 0 ? ms : DEFAULT_INTERVAL_MS;
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** `n` of `unit`, bytes in binary multiples. */
export function formatAmount(n: number, unit: ProgressUnit): string {
  if (unit === 'records') return String(Math.round(n));
  let i = 0;
  while (n >= 1024 && i < UNITS.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(1)} ${UNITS[i]}`;
}

function lineTask(stream: NodeJS.WriteStream, intervalMs: number, label: string, total: number, unit: ProgressUnit): ProgressTask {
  const started = Date.now();
  let lastLine = started;
  let done = 0;
  let lines = 0;
  const line = (now: number, suffix = '') => {
    const seconds = Math.max((now - started) / 1000, 1e-3);
    const of = total > 0 ? `/${formatAmount(total, unit)} (${((100 * done) / total).toFixed(1)}%)` : '';
    stream.write(`${label}: ${formatAmount(done, unit)}${of}, ${formatAmount(done / seconds, unit)}/s${suffix}\n`);
    lines++;
  };
  return {
    advance(n = 1) {
      done += n;
      const now = Date.now();
      if (now - lastLine >= intervalMs) {
        lastLine = now;
        line(now);
      }
    },
    finish() {
      // A short task says nothing; one that printed says it ended.
      if (lines > 0) line(Date.now(), `, finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    },
  };
}

function barTask(stream: NodeJS.WriteStream, label: string, total: number, unit: ProgressUnit): ProgressTask {
  const started = Date.now();
  let done = 0;
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: `${label} [{bar}] {percentage}% | {value}/{total} | {rate}/s | ETA {eta_formatted}`,
      formatValue: (v, options, type) => (type === 'value' || type === 'total' ? formatAmount(v, unit) : cliProgress.Format.ValueFormat(v, options, type)),
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  const rate = () => formatAmount(done / Math.max((Date.now() - started) / 1000, 1e-3), unit);
  bar.start(total, 0, { rate: rate() });
  return {
    advance(n = 1) {
      done += n;
      bar.update(done, { rate: rate() });
    },
    finish() {
      bar.update(done, { rate: rate() });
      bar.stop();
    },
  };
}

export function progressReporter(options: ProgressOptions = {}): Progress {
  const stream = options.stream ?? process.stderr;
  const tty = options.tty ?? stream.isTTY === true;
  const intervalMs = options.intervalMs ?? intervalFromEnv();
  return {
    task: (label, total, unit = 'records') => (tty ? barTask(stream, label, total, unit) : lineTask(stream, intervalMs, label, total, unit)),
  };
}
