import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from './free-port';
import { killServer, spawnServer } from './server-process';

/**
 * A redis-server of the test's own, on a free loopback port, for the suites that stop, freeze or
 * kill Redis: the machine's shared server (127.0.0.1:6379) must never be touched. No persistence,
 * so a restart comes back empty, as after losing a Redis without AOF.
 */
export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  /** SIGSTOP: connections stay open and nothing is answered (a hang, not a refusal). */
  pause(): void;
  /** SIGCONT after `pause`. */
  resume(): void;
  /** SIGKILL (works while paused too); the data, in memory only, is gone. */
  kill(): Promise<void>;
  /** A new, empty server on the same port; resolves once it answers PING. */
  restart(): Promise<void>;
  /** Kills the server and removes its directory. */
  stop(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freeLoopbackPort();
  const dir = await mkdtemp(join(tmpdir(), 'herald-redis-'));
  let child: ChildProcess | null = null;

  const start = async () => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'warning'];
    child = await spawnServer('redis-server', args, () => answersPing(port), 30_000);
  };
  const kill = async () => {
    const running = child;
    child = null;
    await killServer(running);
  };

  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    kill,
    restart: async () => {
      await kill();
      await start();
    },
    stop: async () => {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One PING over a raw socket, so the helper needs no Redis client of its own. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}
