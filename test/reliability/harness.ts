/**
 * Plumbing for the reliability suites: the compiled server
 * (`node dist/server/main.js`, built by `tsc` before the tests run) as a
 * child process that a test can SIGKILL and restart on the same data
 * directory, an HTTP client that tells "definitely not applied" from
 * "maybe applied" failures, and a seeded PRNG.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const MAIN = join(ROOT, 'dist', 'server', 'main.js');
const AUTH = 'basic ' + Buffer.from('admin:').toString('base64');

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Server {
  child: ChildProcess;
  url: string;
  dir: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<Exit>;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `gnocchi-ts-${prefix}-`));
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Spawns the server without waiting for it (for startups expected to fail); `env` adds to this process's environment. */
export async function spawnServer(dir: string, extraArgs: string[] = [], env: Record<string, string> = {}): Promise<Server> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run tsc first (npm test does it in pretest)`);
  const port = await freePort();
  const args = [
    MAIN, '--host', '127.0.0.1', '--port', String(port), '--data-dir', dir,
    '--no-default-archive-policies', '--workers', '1', ...extraArgs,
  ];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, GNOCCHI_LOG_LEVEL: 'warn', ...env },
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, url: `http://127.0.0.1:${port}`, dir, stdout: () => out, stderr: () => err, exited };
}

/** Spawns the server and resolves once it answers `GET /`. */
export async function startServer(dir: string, extraArgs: string[] = [], env: Record<string, string> = {}): Promise<Server> {
  const server = await spawnServer(dir, extraArgs, env);
  if (!(await answersOrExits(server))) {
    throw new Error(`server exited with ${server.child.exitCode ?? server.child.signalCode}:\n${server.stdout()}${server.stderr()}`);
  }
  return server;
}

/**
 * Resolves true once the server answers `GET /`, false once it has exited
 * (a server armed to die may die before it listens); kills it after 30 s
 * of neither.
 */
export async function answersOrExits(server: Server): Promise<boolean> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) return false;
    try {
      const res = await fetch(`${server.url}/`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status === 200) return true;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      server.child.kill('SIGKILL');
      throw new Error(`server did not answer GET / in 30 s:\n${server.stdout()}${server.stderr()}`);
    }
    await sleep(25);
  }
}

export async function kill(server: Server, signal: NodeJS.Signals = 'SIGKILL'): Promise<Exit> {
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill(signal);
  return server.exited;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export interface Answer {
  status: number;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/**
 * The outcome of a write whose answer may never arrive: `refused` means the
 * connection was refused (the request never reached a server, so it was not
 * applied); `lost` means the request may or may not have been applied.
 */
export type Outcome = { kind: 'answer'; answer: Answer } | { kind: 'refused' } | { kind: 'lost'; error: string };

export async function request(base: string, method: string, path: string, body?: unknown, timeoutMs = 20_000): Promise<Outcome> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: AUTH, 'content-type': 'application/json', accept: 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    text = await res.text();
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    if (cause?.code === 'ECONNREFUSED') return { kind: 'refused' };
    return { kind: 'lost', error: String((cause as Error | undefined)?.message ?? err) };
  }
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { kind: 'answer', answer: { status: res.status, text, body: parsed } };
}

/** A request that must be answered (the server is not being killed). */
export async function call(base: string, method: string, path: string, body?: unknown, timeoutMs?: number): Promise<Answer> {
  const o = await request(base, method, path, body, timeoutMs);
  if (o.kind !== 'answer') throw new Error(`${method} ${path}: no answer (${o.kind}${o.kind === 'lost' ? `: ${o.error}` : ''})`);
  return o.answer;
}

/** mulberry32: small, fast, good enough to drive a test reproducibly. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function seedFromEnv(name: string): number {
  const raw = process.env[name];
  if (raw !== undefined && raw !== '') {
    const n = Number(raw);
    if (!Number.isInteger(n)) throw new Error(`${name}=${raw} is not an integer`);
    return n >>> 0;
  }
  return Math.floor(Math.random() * 2 ** 32);
}

export function randInt(rand: () => number, lo: number, hi: number): number {
  return lo + Math.floor(rand() * (hi - lo + 1));
}

export const BASE_SECONDS = Date.UTC(2024, 0, 1) / 1000;

export function isoSeconds(offset: number): string {
  return new Date((BASE_SECONDS + offset) * 1000).toISOString().replace('Z', '+00:00');
}
