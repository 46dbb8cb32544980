/**
 * Real PostgreSQL, Redis and object stores (Ceph RGW, Swift with s3api) from Debian packages for the
 * cluster-mode tests. Each engine runs in a temporary directory on free loopback ports, started and stopped
 * by the operator scripts of scripts/cluster/ (the one implementation of how to run them; this module
 * chooses ports, times starts and looks at the processes). Stopping touches only the processes of the
 * engine's own directory.
 *
 * The failure tests take an engine down and bring it back on the same port and data:
 * `down(signal)` then `start()`, or `restart(signal)`, or `kill9()`.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { isRunning, memoryKiB, processTree } from '../../bench/processes.js';
import { freePort, ROOT } from '../reliability/harness.js';

export { isRunning };

const run = promisify(execFile);
const SCRIPTS = join(ROOT, 'scripts', 'cluster');

export type EngineKind = 'postgresql' | 'redis' | ObjectStoreKind;
export type ObjectStoreKind = 'ceph' | 'swift';

/**
 * How an engine is taken down; the signal goes to its main processes, except SIGKILL which goes to every
 * process at once (a crash). PostgreSQL: SIGINT is its fast shutdown (what `pg_ctl stop` does), SIGQUIT
 * the immediate one (`pg_ctl stop -m immediate`: no checkpoint, WAL replayed at the next start), SIGTERM
 * the smart one (waits for every client to disconnect). Redis: SIGTERM is its graceful shutdown.
 */
export type DownSignal = 'SIGTERM' | 'SIGINT' | 'SIGQUIT' | 'SIGKILL';

export interface Memory {
  /** Sum of the processes' resident set sizes: pages shared between them count once per process. */
  rssKiB: number;
  /** Sum of their proportional set sizes: shared pages split between the processes sharing them. */
  pssKiB: number;
  processes: number;
}

export interface Engine {
  readonly kind: EngineKind;
  readonly dir: string;
  readonly port: number;
  /**
   * What a client connects to: postgresql://postgres@127.0.0.1:PORT/postgres, redis://127.0.0.1:PORT, or
   * the s3:// URL of bucket `gnocchi` (a node's --splits; the bucket is created by the node).
   */
  readonly url: string;
  /** The main process (postmaster, redis-server; Ceph's monitor, Swift's object server) while up; undefined while down. */
  readonly pid: number | undefined;
  /** Milliseconds the last start took, from running the start script to the engine taking queries. */
  readonly startMs: number;
  /** The main processes and their descendants, now; empty while down. */
  pids(): number[];
  memory(): Memory;
  /** Sends `signal` (default: the engine's graceful stop) and returns once every process is gone. */
  down(signal?: DownSignal): Promise<void>;
  kill9(): Promise<void>;
  /** Starts the engine again on the same port and data after `down`. */
  start(): Promise<void>;
  restart(signal?: DownSignal): Promise<void>;
  /** Stops the engine if up, or cleans after it if it crashed, and removes its directory; a second call does nothing. */
  stop(): Promise<void>;
}

/** Why `kind` cannot run on this machine (as a test's skip note), or undefined when it can. */
export function engineMissing(kind: EngineKind): string | undefined {
  if (kind === 'postgresql') {
    if (postgresBin() !== undefined) return undefined;
    return process.env.PGBIN === undefined
      ? 'PostgreSQL: skipped, no /usr/lib/postgresql/*/bin/pg_ctl (apt-get install postgresql, or set PGBIN)'
      : `PostgreSQL: skipped, no pg_ctl in PGBIN=${process.env.PGBIN}`;
  }
  const { name, commands, packages } = PROGRAMS[kind];
  const path = (process.env.PATH ?? '').split(delimiter);
  const absent = commands.filter((c) => !path.some((d) => existsSync(join(d, c))));
  return absent.length === 0 ? undefined : `${name}: skipped, no ${absent.join(', ')} on the PATH (apt-get install ${packages})`;
}

/**
 * The object store the failure tests keep sealed splits in (`--splits`), from CLUSTER_SPLITS=ceph|swift;
 * undefined (absent or empty): they stay in Redis, as for a small site.
 */
export function splitsStoreKind(): ObjectStoreKind | undefined {
  const kind = process.env.CLUSTER_SPLITS ?? '';
  if (kind === '') return undefined;
  if (kind !== 'ceph' && kind !== 'swift') throw new Error(`CLUSTER_SPLITS=${kind}: expected ceph or swift`);
  return kind;
}

/** Why a cluster of PostgreSQL, Redis and (if `splits`) an object store cannot run here, as engineMissing says it. */
export function clusterEnginesMissing(splits: ObjectStoreKind | undefined): string | undefined {
  return engineMissing('postgresql') ?? engineMissing('redis') ?? (splits === undefined ? undefined : engineMissing(splits));
}

const PROGRAMS: Record<Exclude<EngineKind, 'postgresql'>, { name: string; commands: string[]; packages: string }> = {
  redis: { name: 'Redis', commands: ['redis-server'], packages: 'redis-server' },
  ceph: { name: 'Ceph', commands: ['ceph-mon', 'ceph-osd', 'radosgw', 'radosgw-admin', 'ceph'], packages: '--no-install-recommends ceph-mon ceph-osd radosgw ceph-common' },
  swift: {
    name: 'Swift',
    commands: ['swift-proxy-server', 'swift-object-server', 'swift-container-server', 'swift-account-server'],
    packages: '--no-install-recommends swift swift-proxy swift-object swift-account swift-container',
  },
};

/** The directory scripts/cluster/start-postgres.sh runs PostgreSQL from. */
function postgresBin(): string | undefined {
  if (process.env.PGBIN !== undefined) return existsSync(join(process.env.PGBIN, 'pg_ctl')) ? process.env.PGBIN : undefined;
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(a) - Number(b));
  return versions.length === 0 ? undefined : join(base, versions[versions.length - 1]!, 'bin');
}

export function startPostgres(): Promise<Engine> {
  return startEngine('postgresql');
}

export function startRedis(): Promise<Engine> {
  return startEngine('redis');
}

/** Ceph (monitor, OSD, radosgw) or Swift (all-in-one with s3api): an S3 endpoint for --splits. */
export function startObjectStore(kind: ObjectStoreKind): Promise<Engine> {
  return startEngine(kind);
}

/** Ports held by this process's engines, up or down, so that no two get the same one. */
const portsTaken = new Set<number>();

/** Another program may bind the free port found before the engine does: then try another. */
const PORT_ATTEMPTS = 3;

async function startEngine(kind: EngineKind): Promise<Engine> {
  const missing = engineMissing(kind);
  if (missing !== undefined) throw new Error(missing);
  for (let attempt = 1; ; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), `gnocchi-ts-${kind}-`));
    const port = await unusedPorts(PORTS[kind]);
    const engine = new ScriptedEngine(kind, dir, port);
    try {
      await engine.start();
      return engine;
    } catch (err) {
      // A start that failed half-way (Ceph's monitor up, its radosgw not) leaves processes: stop them.
      await script('stop.sh', dir, 'SIGKILL').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
      for (let i = 0; i < PORTS[kind]; i++) portsTaken.delete(port + i);
      if (attempt < PORT_ATTEMPTS && /address already in use/i.test(String(err))) continue;
      throw err;
    }
  }
}

/** Loopback ports an engine listens on from its PORT up (Ceph: radosgw, its monitor; Swift: proxy, object, container, account). */
const PORTS: Record<EngineKind, number> = { postgresql: 1, redis: 1, ceph: 2, swift: 4 };

/** A free port followed by count - 1 free ones, all taken for this process. */
async function unusedPorts(count: number): Promise<number> {
  for (;;) {
    const port = await freePort();
    const ports = Array.from({ length: count }, (_, i) => port + i);
    if (ports.some((p) => portsTaken.has(p) || p > 65535)) continue;
    if (!(await Promise.all(ports.slice(1).map(canBind))).every(Boolean)) continue;
    for (const p of ports) portsTaken.add(p);
    return port;
  }
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

const START_SCRIPT: Record<EngineKind, string> = { postgresql: 'start-postgres.sh', redis: 'start-redis.sh', ceph: 'start-ceph.sh', swift: 'start-swift.sh' };

function urlOf(kind: EngineKind, port: number): string {
  switch (kind) {
    case 'postgresql':
      return `postgresql://postgres@127.0.0.1:${port}/postgres`;
    case 'redis':
      return `redis://127.0.0.1:${port}`;
    case 'ceph':
      return `s3://gnocchi:gnocchi-secret@127.0.0.1:${port}/gnocchi`;
    case 'swift':
      return `s3://test%3Atester:testing@127.0.0.1:${port}/gnocchi`;
  }
}

class ScriptedEngine implements Engine {
  /** The processes the start script started, from its pid file (one a line). */
  private mains: number[] = [];
  startMs = 0;
  readonly url: string;
  private removed = false;

  constructor(
    readonly kind: EngineKind,
    readonly dir: string,
    readonly port: number,
  ) {
    this.url = urlOf(kind, port);
  }

  get pid(): number | undefined {
    return this.mains[0];
  }

  async start(): Promise<void> {
    if (this.removed) throw new Error(`${this.kind} in ${this.dir} was stopped for good`);
    if (this.pid !== undefined) throw new Error(`${this.kind} on port ${this.port} is already up`);
    const t0 = performance.now();
    const out = await script(START_SCRIPT[this.kind], this.dir, String(this.port));
    this.startMs = performance.now() - t0;
    if (out.trim() !== this.url) throw new Error(`${START_SCRIPT[this.kind]} printed ${out.trim()}, expected ${this.url}`);
    this.mains = readFileSync(join(this.dir, 'pid'), 'utf8').trim().split('\n').map(Number);
  }

  async down(signal?: DownSignal): Promise<void> {
    if (this.pid === undefined) throw new Error(`${this.kind} on port ${this.port} is already down`);
    await script('stop.sh', this.dir, ...(signal === undefined ? [] : [signal]));
    this.mains = [];
  }

  kill9(): Promise<void> {
    return this.down('SIGKILL');
  }

  async restart(signal?: DownSignal): Promise<void> {
    await this.down(signal);
    await this.start();
  }

  async stop(): Promise<void> {
    if (this.removed) return;
    // stop.sh also when down: it cleans after a crashed PostgreSQL.
    await script('stop.sh', this.dir);
    this.mains = [];
    rmSync(this.dir, { recursive: true, force: true });
    this.removed = true;
    for (let i = 0; i < PORTS[this.kind]; i++) portsTaken.delete(this.port + i);
  }

  pids(): number[] {
    return processTree(this.mains.filter(isRunning)).filter(isRunning);
  }

  memory(): Memory {
    const pids = this.pids();
    return { ...memoryKiB(pids), processes: pids.length };
  }
}

/** Runs one of scripts/cluster/ and answers its standard output; its standard error is in the error thrown. */
async function script(name: string, ...args: string[]): Promise<string> {
  try {
    const { stdout } = await run('bash', [join(SCRIPTS, name), ...args], { timeout: 150_000 });
    return stdout;
  } catch (err) {
    const { stderr } = err as { stderr?: string };
    throw new Error(`${name} ${args.join(' ')} failed: ${stderr?.trim() || String(err)}`);
  }
}


