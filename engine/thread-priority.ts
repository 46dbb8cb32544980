/**
 * Processing is background work: pushes are acknowledged once stored, and
 * the backlog drains when the API is idle. On two cores the workers took
 * CPU from the thread that parses pushes and answers reads, so the workers
 * run at a lower priority. Linux gives each thread its own nice value, and
 * setpriority() accepts a thread id where it takes a process id.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

const MAX_NICE = 19;

/** Raises the calling thread's nice value to `nice` (0..19); false where it cannot (not Linux, or refused). */
export function lowerThreadPriority(nice: number): boolean {
  if (nice <= 0) return false;
  try {
    // "PID/task/TID", for the thread reading it.
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid)) return false;
    setPriority(tid, Math.min(nice, MAX_NICE));
    return true;
  } catch {
    // No /proc, or a sandbox refusing setpriority: processing keeps the server's priority.
    return false;
  }
}
