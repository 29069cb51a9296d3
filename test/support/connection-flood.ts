import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const CHILD = join(__dirname, 'connection-flood.child.mjs');

/** What one wave of the flood got: the first reply of every connection, by source address and reply (`220`, `421 4.7.0`, ...). */
export interface FloodWave {
  opened: number;
  /** Connections open (greeted with 220 and idle) after the wave, every wave's together. */
  held: number;
  ms: number;
  bySource: Record<string, Record<string, number>>;
  /** One full reply line of each kind. */
  samples: Record<string, string>;
}

/**
 * Idle connections by the thousand against an SMTP server, from a process of its own: the test's
 * own descriptor limit (often 1,024) would not hold them, so a shell raises the child's to its
 * hard limit (`ulimit -n`) before starting it.
 */
export class ConnectionFlood {
  private readonly replies: AsyncIterator<string>;

  private constructor(private readonly child: ChildProcess) {
    this.replies = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  }

  static start(host: string, port: number): ConnectionFlood {
    const child = spawn('sh', ['-c', 'ulimit -n "$(ulimit -H -n)" && exec "$0" "$@"', process.execPath, CHILD, host, String(port)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    return new ConnectionFlood(child);
  }

  /** Opens `perSource` connections from each source address, `concurrency` connecting at once. */
  async open(sources: string[], perSource: number, concurrency = 200): Promise<FloodWave> {
    return (await this.ask({ open: { sources, perSource, concurrency } })) as FloodWave;
  }

  /** Closes every connection and ends the process. */
  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.stdin!.end(`${JSON.stringify({ close: true })}\n`);
    // A process still busy with a wave (a failed scenario) is not waited for.
    const kill = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(kill);
  }

  private async ask(command: unknown): Promise<unknown> {
    this.child.stdin!.write(`${JSON.stringify(command)}\n`);
    const { value, done } = await this.replies.next();
    if (done) throw new Error(`the flood process ended (exit ${this.child.exitCode})`);
    return JSON.parse(value);
  }
}
