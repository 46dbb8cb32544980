/**
 * The compiled server as a child process (`node dist/server/main.js`):
 * `npm test` builds dist/ first (pretest). Servers started here are killed
 * and their data directories removed by `stopServers` (an afterEach).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { freePort } from '../reliability/harness.js';

export { freePort };

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const MAIN = join(ROOT, 'dist', 'server', 'main.js');
export const AUTH = { authorization: 'basic ' + Buffer.from('admin:').toString('base64') };

export interface Server {
  child: ChildProcess;
  url: string;
  dir: string;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: Server[] = [];

export async function stopServers(): Promise<void> {
  for (const s of started.splice(0)) {
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill('SIGKILL');
      await s.exited;
    }
    rmSync(s.dir, { recursive: true, force: true });
  }
}

export async function startServer(extraArgs: string[], env: NodeJS.ProcessEnv = {}): Promise<Server> {
  expect(existsSync(MAIN), `${MAIN} is missing: run tsc (npm test does it in pretest)`).toBe(true);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'gnocchi-ts-process-test-'));
  const args = [MAIN, '--host', '127.0.0.1', '--port', String(port), '--data-dir', dir, ...extraArgs];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GNOCCHI_LOG_LEVEL: 'warn', ...env } });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const server: Server = { child, url: `http://127.0.0.1:${port}`, dir, output: () => out, exited };
  started.push(server);

  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${out}`);
    try {
      const res = await fetch(`${server.url}/`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not answer GET / in 20 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return server;
}

export async function call(s: Server, method: string, path: string, body?: unknown) {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: { ...AUTH, 'content-type': 'application/json', accept: 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, text, body: text === '' ? undefined : JSON.parse(text), headers: res.headers };
}

