/**
 * How long-running engine work (index builds, format upgrades, checks)
 * tells its advance to whoever started it: the server logs it, the admin
 * commands draw a bar (server/admin/progress.ts). The engine only counts.
 */
export interface Progress {
  /** Starts a task of `total` steps (0 when not known); `unit` names what is counted. */
  task(label: string, total: number, unit?: ProgressUnit): ProgressTask;
}

export type ProgressUnit = 'records' | 'bytes';

export interface ProgressTask {
  /** `n` more steps are done. */
  advance(n?: number): void;
  /** The task is over, done or failed. */
  finish(): void;
}

const idle: ProgressTask = { advance: () => {}, finish: () => {} };

/** Reports nothing: the engine's default. */
export const silentProgress: Progress = { task: () => idle };
