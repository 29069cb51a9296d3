import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { HeraldConfig } from '@herald/config';

/** The three outbox tables, each with the producer that writes it and the relay that drains it. */
export type OutboxKind = 'dispatches' | 'email-events' | 'resource-events';

/**
 * Where an outbox process stops for good, to be killed there. `before-publish`: its entries are
 * committed and their publish has begun, but nothing reached the stream. `after-publish`: the
 * stream acknowledged every entry, and the rows are not yet recorded as published.
 */
export type OutboxFault = 'none' | 'before-publish' | 'after-publish';

/** Messages to an outbox process, over its IPC channel. */
export type ToOutboxProcess = { boot: HeraldConfig } | { do: 'commit'; teamId: string } | { do: 'relay' } | { do: 'close' };

/** Messages from an outbox process. */
export type FromOutboxProcess =
  { ready: true } | { committed: string[] } | { halted: OutboxFault; id: string } | { relayed: number; published: string[] } | { failed: string };

const CHILD = join(__dirname, 'outbox-process.child.ts');
const REGISTER = join(__dirname, 'ts-register.js');

/**
 * One process of a role, reduced to an outbox: its producer (which commits entries and publishes
 * them) and its relay, on a test's isolated schema and NATS namespace. A real child process, so a
 * test can kill it with SIGKILL at a fault point, where nothing of it gets to clean up.
 */
export class OutboxProcess {
  private readonly inbox: FromOutboxProcess[] = [];
  private readonly waiters = new Set<() => void>();
  private stderr = '';
  private readonly exited: Promise<[number | null, NodeJS.Signals | null]>;

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (message: FromOutboxProcess) => {
      this.inbox.push(message);
      for (const wake of this.waiters) wake();
    });
    child.stderr!.on('data', (d) => (this.stderr += d));
    this.exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    void this.exited.then(() => this.waiters.forEach((wake) => wake()));
  }

  /** Starts a process for `kind` that stops at `fault`, and waits until it has booted. */
  static async start(config: HeraldConfig, kind: OutboxKind, fault: OutboxFault): Promise<OutboxProcess> {
    const child = spawn(process.execPath, ['-r', REGISTER, CHILD, kind, fault], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    const outbox = new OutboxProcess(child);
    outbox.send({ boot: config });
    await outbox.next((m) => ('ready' in m ? true : undefined));
    return outbox;
  }

  /** Commits 12 entries through the producer's write path, then publishes them; answers their ids. */
  async commit(teamId: string): Promise<string[]> {
    this.send({ do: 'commit', teamId });
    return this.next((m) => ('committed' in m ? m.committed : undefined));
  }

  /** One relay pass; answers how many entries it published, and their ids. */
  async relay(): Promise<{ relayed: number; published: string[] }> {
    this.send({ do: 'relay' });
    return this.next((m) => ('relayed' in m ? m : undefined));
  }

  /** Resolves once `count` publishes have stopped at the process's fault point; answers their ids. */
  async halted(count = 1): Promise<string[]> {
    const ids: string[] = [];
    while (ids.length < count) ids.push(await this.next((m) => ('halted' in m ? m.id : undefined)));
    return ids;
  }

  /** kill -9: the process gets no chance to finish anything. */
  async kill(): Promise<NodeJS.Signals | null> {
    this.child.kill('SIGKILL');
    return (await this.exited)[1];
  }

  /** A graceful stop: the process closes its outbox, Postgres and NATS, then exits. */
  async close(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.send({ do: 'close' });
    return (await this.exited)[0];
  }

  private send(message: ToOutboxProcess): void {
    this.child.send(message);
  }

  /** Takes the first message `pick` answers for (leaving the others); throws if the process fails or exits first. */
  private async next<T>(pick: (m: FromOutboxProcess) => T | undefined, timeoutMs = 30_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const failed = this.inbox.find((m): m is { failed: string } => 'failed' in m);
      if (failed) throw new Error(`outbox process failed: ${failed.failed}\n${this.stderr}`);
      for (const [i, message] of this.inbox.entries()) {
        const picked = pick(message);
        if (picked === undefined) continue;
        this.inbox.splice(i, 1);
        return picked;
      }
      if (this.child.exitCode !== null || this.child.signalCode !== null) throw new Error(`outbox process exited: ${this.stderr}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`outbox process did not answer in ${timeoutMs} ms: ${this.stderr}`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.waiters.add(wake);
      });
    }
  }
}
