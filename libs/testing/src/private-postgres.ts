import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freeLoopbackPort } from './free-port';

const BIN = process.env.HERALD_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/**
 * A Postgres server of the test's own (initdb + postgres from the installed binaries) on a free
 * loopback port and a temporary data folder, for the fault suites that kill, freeze or restart
 * Postgres: the machine's shared server must never be touched. It runs in its own process group,
 * so a kill or a pause reaches the postmaster and every backend at once, as a crash or a frozen
 * VM would. fsync is off: a SIGKILL keeps what the kernel already has, and a power loss is not
 * what these suites emulate.
 */
export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/herald` (the database is created at start). */
  readonly url: string;
  readonly port: number;
  /** SIGSTOP to the whole server: connections stay open and nothing is answered. */
  pause(): void;
  resume(): void;
  /** SIGKILL to the whole server (works while paused); committed data survives a restart. */
  kill(): Promise<void>;
  /** Kills (if running) and starts the server again on the same port and data. */
  restart(): Promise<void>;
  /** Whether the postmaster is alive (it can exit by itself, e.g. when recovery fails on a full disk). */
  running(): boolean;
  stop(): Promise<void>;
}

export interface PrivateServerOptions {
  /** The folder the server's data folder is made in (a `SmallDisk`'s path, say); the OS's temporary folder by default. */
  parentDir?: string;
}

export async function startPrivatePostgres(options: PrivateServerOptions = {}): Promise<PrivatePostgres> {
  const port = await freeLoopbackPort();
  const dir = await mkdtemp(join(options.parentDir ?? tmpdir(), 'herald-pg-'));
  const data = join(dir, 'data');
  // Postgres refuses to run as root: the suite's servers run as the `postgres` user then.
  const user = process.getuid?.() === 0 ? systemUser('postgres') : null;
  if (user) await chown(dir, user.uid, user.gid);
  const as = user ? { uid: user.uid, gid: user.gid } : {};
  execFileSync(join(BIN, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync', '--no-instructions'], {
    ...as,
    stdio: 'ignore',
  });

  let child: ChildProcess | null = null;
  const start = async () => {
    const args = ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir];
    for (const setting of ['fsync=off', 'full_page_writes=off', 'max_connections=300', 'log_min_messages=fatal']) args.push('-c', setting);
    for (let attempt = 0; ; attempt++) {
      const started = spawn(join(BIN, 'postgres'), args, { ...as, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      started.stderr!.on('data', (d) => (stderr += d));
      child = started;
      const deadline = Date.now() + 30_000;
      while (started.exitCode === null && !(await answers(port))) {
        if (Date.now() > deadline) {
          started.kill('SIGKILL');
          throw new Error(`postgres on port ${port} did not answer: ${stderr}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      if (started.exitCode === null) return;
      // The backends of a killed server can take a moment to notice and let go of its shared memory.
      if (attempt >= 40) throw new Error(`postgres exited: ${stderr}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const signal = (name: NodeJS.Signals) => {
    if (child?.pid && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, name);
  };
  const kill = async () => {
    const running = child;
    child = null;
    if (!running?.pid || running.exitCode !== null || running.signalCode !== null) return;
    const exited = once(running, 'exit');
    process.kill(-running.pid, 'SIGKILL');
    await exited;
  };

  await start();
  const admin = new Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
  await admin.connect();
  await admin.query('CREATE DATABASE herald');
  await admin.end();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/herald`,
    port,
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    kill,
    restart: async () => {
      await kill();
      await start();
    },
    running: () => child !== null && child.exitCode === null && child.signalCode === null,
    stop: async () => {
      signal('SIGCONT');
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function systemUser(name: string): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, name]).toString().trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** Whether the server answers a query (not just accepts TCP: it refuses while starting up). */
async function answers(port: number): Promise<boolean> {
  const client = new Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`, connectionTimeoutMillis: 1000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
