/**
 * Processes as /proc shows them, for the benchmarks and test harnesses that
 * count an engine's processes, CPU and memory (PostgreSQL forks a backend
 * per connection, Ceph and Swift run several servers).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

/** The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses), or undefined once gone. */
export function statFields(pid: number): string[] | undefined {
  const stat = readProc(pid, 'stat');
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Whether a process exists and has not exited (a zombie waiting to be reaped has). */
export function isRunning(pid: number): boolean {
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** The processes and all their descendants. */
export function processTree(roots: readonly number[]): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const ppid = Number(statFields(Number(name))?.[1]);
    if (!Number.isNaN(ppid)) children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
  }
  const tree = [...roots];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!) ?? []));
  return tree;
}

/**
 * CPU seconds (user + system) used so far by `roots` and their descendants,
 * including those already exited and reaped (their times move to the
 * parent's cutime/cstime).
 */
export function treeCpuSeconds(roots: readonly number[]): number {
  let ticks = 0;
  for (const pid of processTree(roots)) {
    const f = statFields(pid);
    if (f !== undefined) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  }
  return ticks / TICKS_PER_SECOND;
}

/** Resident and proportional set sizes of these processes, in KiB. */
export function memoryKiB(pids: readonly number[]): { rssKiB: number; pssKiB: number } {
  let rssKiB = 0;
  let pssKiB = 0;
  for (const pid of pids) {
    const rollup = readProc(pid, 'smaps_rollup') ?? '';
    rssKiB += Number(/^Rss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
    pssKiB += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
  }
  return { rssKiB, pssKiB };
}
