import { ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { SinkMessageToParent } from './bench-mx-sinks';

/** The sinks' child process (bench-mx-sinks.ts), asked over IPC. */
export class SinkProcess {
  private constructor(private readonly child: ChildProcess) {}

  get pid(): number {
    return this.child.pid!;
  }

  static async start(hosts: string[], port: number): Promise<SinkProcess> {
    const child = fork(join(__dirname, 'bench-mx-sinks.js'), [], {
      env: { ...process.env, BENCH_SINK_HOSTS: hosts.join(','), BENCH_SINK_PORT: String(port) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const sinks = new SinkProcess(child);
    // A send after the channel closed (teardown on Ctrl-C) is answered by `ask` rejecting, not by a crash.
    child.on('error', () => undefined);
    await Promise.race([
      sinks.ask('ready'),
      once(child, 'exit').then(() => {
        throw new Error('the sink process exited before it listened');
      }),
    ]);
    return sinks;
  }

  /** Sends `{type}` (unless it is 'ready') and resolves with the child's next message of that type. */
  ask<T extends SinkMessageToParent['type']>(type: T): Promise<Extract<SinkMessageToParent, { type: T }>> {
    return new Promise((resolve, reject) => {
      if (type !== 'ready' && !this.child.connected) return reject(new Error('the sink process is gone'));
      const onMessage = (message: SinkMessageToParent) => {
        if (message.type !== type) return;
        this.child.off('message', onMessage);
        resolve(message as Extract<SinkMessageToParent, { type: T }>);
      };
      this.child.on('message', onMessage);
      if (type !== 'ready') this.child.send({ type });
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.disconnect();
    await exited;
  }
}
