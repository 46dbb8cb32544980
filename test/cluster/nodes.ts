/**
 * Cluster nodes for the failure tests: the compiled server started with the
 * engines' URLs, each in its own data directory on a free loopback port,
 * killed, stalled and restarted one at a time. Only the processes started
 * here are ever signalled.
 */
import { rmSync } from 'node:fs';
import { answersOrExits, kill, sleep, spawnServer, startServer, tempDir, type Exit, type Server } from '../reliability/harness.js';

export interface ClusterOptions {
  /** postgresql:// URL of the index. */
  index: string;
  /** redis:// URL of incoming, series, splits and coordination. */
  redis: string;
  /** s3:// URL of the sealed splits' object store; absent: they stay in Redis. */
  splits?: string;
  shards: number;
  leaseMs: number;
  /** More flags for every node (e.g. `--processing-interval 20`). */
  args?: readonly string[];
}

export class ClusterNode {
  private constructor(
    readonly name: string,
    private readonly args: readonly string[],
    private server: Server,
  ) {}

  static async start(name: string, options: ClusterOptions): Promise<ClusterNode> {
    const args = [
      '--node-id', name, '--index', options.index, '--incoming', options.redis, '--series', options.redis,
      '--coordination', options.redis, '--shards', String(options.shards), '--lease', String(options.leaseMs),
      ...(options.splits === undefined ? [] : ['--splits', options.splits]),
      ...(options.args ?? []),
    ];
    return new ClusterNode(name, args, await startServer(tempDir(`node-${name}`), args));
  }

  get url(): string {
    return this.server.url;
  }

  get pid(): number {
    return this.server.child.pid!;
  }

  /** What the node printed, for failure messages. */
  output(): string {
    return this.server.stdout() + this.server.stderr();
  }

  /** How the node's current process ended, once it has. */
  exited(): Promise<Exit> {
    return this.server.exited;
  }

  /** Resolves once the node's current process printed `text` on stderr; throws after `timeoutMs`. */
  async printed(text: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.server.stderr().includes(text)) {
      if (Date.now() > deadline) throw new Error(`${this.name} did not print "${text}" in ${timeoutMs} ms:\n${this.output().slice(-3000)}`);
      await sleep(5);
    }
  }

  alive(): boolean {
    return this.server.child.exitCode === null && this.server.child.signalCode === null;
  }

  /** Sends `signal` and waits for the exit (SIGKILL: a crash, SIGTERM: leaving gracefully). */
  async down(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    await kill(this.server, signal);
  }

  /** SIGSTOP: the node holds its leases but does nothing until resume(). */
  stall(): void {
    this.server.child.kill('SIGSTOP');
  }

  resume(): void {
    this.server.child.kill('SIGCONT');
  }

  /** Starts the node again, on a new port, with its data directory. */
  async restart(): Promise<void> {
    if (this.alive()) await this.down();
    this.server = await startServer(this.server.dir, [...this.args]);
  }

  /**
   * Starts the node again with GNOCCHI_FAILPOINT=`spec` (engine/failpoints.ts), after a SIGTERM if it is
   * up (it leaves gracefully); resolves once it answers, or once it died: at its fault point, maybe
   * before it listened.
   */
  async restartArmed(spec: string): Promise<void> {
    if (this.alive()) await this.down('SIGTERM');
    this.server = await spawnServer(this.server.dir, [...this.args], { GNOCCHI_FAILPOINT: spec });
    await answersOrExits(this.server);
  }

  /** Stops the node if up and removes its directory. */
  async stop(): Promise<void> {
    if (this.alive()) {
      this.resume();
      await this.down('SIGTERM');
    }
    rmSync(this.server.dir, { recursive: true, force: true });
  }
}

export async function startCluster(count: number, options: ClusterOptions): Promise<ClusterNode[]> {
  const nodes: ClusterNode[] = [];
  // One at a time: the first node creates the schema and the cluster's shard count.
  for (let i = 1; i <= count; i++) nodes.push(await ClusterNode.start(`n${i}`, options));
  return nodes;
}

/** Stops the nodes, then the engines they ran on, whatever failed before. */
export async function stopCluster(nodes: readonly ClusterNode[], engines: readonly ({ stop(): Promise<void> } | undefined)[]): Promise<void> {
  try {
    for (const node of nodes) await node.stop();
  } finally {
    for (const engine of engines) await engine?.stop();
  }
}
