import { ChildProcess, fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import type { ProxyMessageToParent, ProxyStats } from './bench-smtp-proxy';
import { RCPT_DOMAIN } from './smtp-options';

// The SMTP bench's child processes besides the relays: Postfix's smtp-sink and smtp-source, and the submission shim.

/** Postfix's smtp-sink as a child: `-c` prints running counters (`mesg=N`) at every ".", which give the receipt times. */
export class Sink {
  received = 0;
  /** [Date.now(), messages received so far] at each counter update. */
  timeline: [number, number][] = [];
  private constructor(
    private readonly child: ChildProcess,
    readonly dumpDir: string | null,
  ) {}

  get pid(): number {
    return this.child.pid!;
  }

  static async start(host: string, port: number, dumpDir: string | null): Promise<Sink> {
    // -u: smtp-sink refuses to run as root without dropping privileges; -d: one file per message (tmpfs).
    const args = ['-u', 'nobody', '-c', ...(dumpDir ? ['-d', `${dumpDir}/%H%M%S.`] : []), '-m', '1000', `${host}:${port}`, '1024'];
    const child = spawn('smtp-sink', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const sink = new Sink(child, dumpDir);
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    let partial = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const at = Date.now();
      const text = partial + chunk.toString('latin1');
      const i = text.lastIndexOf('\r');
      partial = text.slice(i + 1);
      const m = /mesg=(\d+)\s*$/.exec(text.slice(0, Math.max(0, i)));
      if (m && Number(m[1]) !== sink.received) {
        sink.received = Number(m[1]);
        sink.timeline.push([at, sink.received]);
      }
    });
    // listening: a TCP connect succeeds
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`smtp-sink exited: ${err}`);
      const ok = await new Promise<boolean>((resolve) => {
        const s = netConnect({ host, port });
        s.once('connect', () => (s.destroy(), resolve(true)));
        s.once('error', () => resolve(false));
      });
      if (ok) break;
      if (i > 100) throw new Error(`smtp-sink did not listen on ${host}:${port}: ${err}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // that probe was a session, not a message: nothing to count
    return sink;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGTERM');
    await exited;
  }
}

/** The submission shim (bench-smtp-proxy.ts) in a child process. */
export class Proxy {
  private constructor(
    private readonly child: ChildProcess,
    readonly ports: number[],
  ) {}

  get pid(): number {
    return this.child.pid!;
  }

  static async start(routes: { host: string; port: number; user?: string; pass?: string }[]): Promise<Proxy> {
    const child = fork(join(__dirname, 'bench-smtp-proxy.js'), [], {
      env: { ...process.env, BENCH_PROXY_ROUTES: JSON.stringify(routes.map((r) => ({ listen: 0, ...r }))) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('error', () => undefined);
    const ready = await Promise.race([
      once(child, 'message') as Promise<[ProxyMessageToParent]>,
      once(child, 'exit').then(() => {
        throw new Error('the submission shim exited before it listened');
      }),
    ]);
    const message = ready[0];
    if (message.type !== 'ready') throw new Error('the submission shim did not say ready');
    return new Proxy(child, message.ports);
  }

  async stats(): Promise<ProxyStats[]> {
    const reply = new Promise<ProxyStats[]>((resolve) => {
      const on = (m: ProxyMessageToParent) => {
        if (m.type !== 'stats') return;
        this.child.off('message', on);
        resolve(m.stats);
      };
      this.child.on('message', on);
    });
    this.child.send({ type: 'stats' });
    return reply;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.disconnect();
    await exited;
  }
}

export interface SourceRun {
  code: number | null;
  stderr: string;
  startedAt: number;
  exitedAt: number;
}

/** smtp-source: `sessions` parallel sessions, each sending its share over one connection (-d). */
export async function smtpSource(port: number, from: string, messages: number, sessions: number, size: number): Promise<SourceRun> {
  const args = ['-s', String(Math.min(sessions, messages)), '-m', String(messages), '-l', String(size), '-d', '-N', '-M', 'client.bench.test'];
  args.push('-f', from, '-t', `user@${RCPT_DOMAIN}`, '-S', 'Herald SMTP bench', `127.0.0.1:${port}`);
  const startedAt = Date.now();
  const child = spawn('smtp-source', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stderr: stderr.trim(), startedAt, exitedAt: Date.now() };
}
