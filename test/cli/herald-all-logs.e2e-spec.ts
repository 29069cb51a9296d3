import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isolatedConfig, IsolatedConfig } from '@herald/testing';
import { envOf, freePort } from '../support/herald-process';

const BIN = join(__dirname, '..', '..', 'bin', 'herald.js');
const ROLES = ['api', 'smtp', 'worker', 'webhooks', 'metrics'];

interface LogLine {
  role?: string;
  level?: number;
  msg?: string;
  context?: string;
}

/**
 * `herald all` (what `npm start` runs, development bootstrap included) writes each role's lines
 * with that role, and keeps writing them after boot. The warning is provoked by killing the NATS
 * server the process uses: every role's connection warns that it lost it. NATS is a private
 * nats-server, so the machine's shared one is never touched.
 */
describe('herald all: the logs of every role', () => {
  let isolated: IsolatedConfig;
  let nats: ChildProcess | undefined;
  let natsDir: string;
  let herald: ChildProcess | undefined;
  let output = '';

  beforeAll(async () => {
    isolated = await isolatedConfig();
    natsDir = await mkdtemp(join(tmpdir(), 'herald-nats-'));
    const natsPort = await freePort();
    nats = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(natsPort), '-sd', natsDir], { stdio: 'ignore' });
    await waitFor(() => accepts(natsPort), 'the private nats-server to listen');
    const apiPort = await freePort();
    herald = spawn(process.execPath, [BIN, 'all'], {
      env: envOf(isolated.config, {
        NODE_ENV: 'development',
        LOG_LEVEL: 'warn',
        DEV_BOOTSTRAP: 'true',
        NATS_URL: `nats://127.0.0.1:${natsPort}`,
        API_HOST: '127.0.0.1',
        API_PORT: String(apiPort),
        SMTP_HOST: '127.0.0.1',
        SMTP_PORTS: '0:tls,0:starttls',
        BOUNCE_MX_HOST: '127.0.0.1',
        BOUNCE_MX_PORT: '0',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    herald.stdout!.on('data', (d) => (output += d));
    herald.stderr!.on('data', (d) => (output += d));
    // The development bootstrap (the application the old code silenced the logger with) runs
    // after the roles are up; its JSON summary on stdout marks the end of boot.
    await waitFor(
      () => output.includes('"api_key"'),
      () => `herald all to boot: ${output}`,
    );
  });

  afterAll(async () => {
    if (herald && herald.exitCode === null) {
      const exited = once(herald, 'exit');
      herald.kill('SIGKILL');
      await exited;
    }
    if (nats && nats.exitCode === null) nats.kill('SIGKILL');
    await rm(natsDir, { recursive: true, force: true });
    // The streams were made on the private server, gone with it.
    await isolated.cleanup().catch(() => undefined);
  });

  it('writes a warning of each role after boot, tagged with that role', async () => {
    const exited = once(nats!, 'exit');
    nats!.kill('SIGKILL');
    await exited;
    const warnings = () => lines(output).filter((l) => l.level === 40 && l.context === 'NatsService' && l.msg?.startsWith('disconnected from'));
    const roles = () => new Set(warnings().map((l) => l.role));
    await waitFor(
      () => roles().size === ROLES.length,
      () => `a disconnect warning of each role: ${output}`,
    );
    console.log(`disconnect warnings by role: ${JSON.stringify(warnings().map((l) => l.role))}`);
    expect(roles()).toEqual(new Set(ROLES));
  });
});

function lines(text: string): LogLine[] {
  return text.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

async function waitFor(check: () => Promise<boolean> | boolean, what: string | (() => string), timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
