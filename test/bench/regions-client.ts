// The bench's side of regions-infra.ts: forks it, waits until its servers are up, and sends it
// commands over IPC (regions-bench.ts).
import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import type { RegionsCommand, RegionsReply } from './regions-infra';

/** The regions' child process (regions-infra.ts): the supercluster, B's database proxy, the delay. */
export class Regions {
  private readonly waiting = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  private next = 0;

  private constructor(
    private readonly child: ChildProcess,
    /** Where the child's servers are: A's and B's NATS nodes, A's monitoring port, the proxies' ports (RegionsReply 'ready'). */
    readonly at: Omit<Extract<RegionsReply, { type: 'ready' }>, 'type'>,
  ) {
    child.on('message', (reply: RegionsReply) => {
      if (reply.type === 'ready' || reply.id === undefined) return;
      const waiter = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (reply.type === 'done') waiter?.resolve();
      else waiter?.reject(new Error(`regions: ${reply.message}`));
    });
  }

  static async start(postgresPort: number, redisPort: number): Promise<Regions> {
    const child = fork(join(__dirname, 'regions-infra.js'), [], {
      env: { ...process.env, BENCH_B_PG_PORT: String(postgresPort), BENCH_REDIS_PORT: String(redisPort) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const ready = await new Promise<RegionsReply>((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`regions-infra exited ${code} before it was ready`)));
    });
    if (ready.type !== 'ready') {
      child.kill('SIGKILL');
      throw new Error(`regions-infra: ${ready.type === 'failed' ? ready.message : ready.type}`);
    }
    const { type: _, ...at } = ready;
    return new Regions(child, at);
  }

  command(type: RegionsCommand['type'], ms = 0): Promise<void> {
    if (!this.child.connected) return Promise.resolve();
    const id = ++this.next;
    const done = new Promise<void>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    this.child.send({ id, type, ms } as RegionsCommand);
    return done;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    await this.command('stop').catch(() => undefined);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
}
