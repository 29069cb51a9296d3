import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { freeLoopbackPort } from './free-port';
import type { PrivateServerOptions } from './private-postgres';
import { killServer, spawnServer } from './server-process';

/**
 * A nats-server with JetStream of the test's own (`nats-server -js -sd <tmp>`) on a free loopback
 * port, for the suites that kill, freeze or restart the broker. Its store survives `kill` and
 * `restart` (file storage, as in production); `stop` removes it.
 */
export interface PrivateNats {
  /** `nats://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  pause(): void;
  resume(): void;
  kill(): Promise<void>;
  restart(): Promise<void>;
  /** Whether JetStream answers its API (within half a second). */
  jetStreamAnswers(): Promise<boolean>;
  stop(): Promise<void>;
}

export async function startPrivateNats(options: PrivateServerOptions = {}): Promise<PrivateNats> {
  const port = await freeLoopbackPort();
  const dir = await mkdtemp(join(options.parentDir ?? tmpdir(), 'herald-nats-'));
  const url = `nats://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;

  const start = async () => {
    child = await spawnServer('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], () => jetStreamAnswers(url), 30_000);
  };
  const kill = async () => {
    const running = child;
    child = null;
    await killServer(running);
  };

  await start();
  return {
    url,
    port,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    kill,
    restart: async () => {
      await kill();
      await start();
    },
    jetStreamAnswers: () => jetStreamAnswers(url),
    stop: async () => {
      child?.kill('SIGCONT');
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function jetStreamAnswers(url: string): Promise<boolean> {
  try {
    const nc = await connect({ servers: url, timeout: 500, reconnect: false });
    try {
      await (await jetstreamManager(nc)).getAccountInfo();
      return true;
    } finally {
      await nc.close();
    }
  } catch {
    return false;
  }
}
