import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';

const BIN = join(__dirname, '..', '..', 'bin', 'herald.js');

/** What `herald all` prints once every role is up (the development bootstrap's summary). */
export interface Boot {
  api_url: string;
  api_key: string;
  dashboard_url: string;
  /** The development user `npm start` prints for the dashboard's sign-in. */
  dashboard_user: { email: string; password: string };
  regions: string[];
  roles: Record<string, string>;
  /** Each database it migrated as it booted (its URL without the password), what it holds, what was applied. */
  migrations: { database: string; holds: string[]; applied: string[] }[];
}

export interface Running {
  boot: Boot;
  stop(): Promise<void>;
}

/** `herald all` with the development bootstrap on free ports; resolves with its printed summary. */
export async function startHeraldAll(flags: string[], env: NodeJS.ProcessEnv): Promise<Running> {
  const child: ChildProcess = spawn(process.execPath, [BIN, 'all', ...flags], {
    env: {
      ...env,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      DEV_BOOTSTRAP: 'true',
      API_HOST: '127.0.0.1',
      API_PORT: '0',
      SMTP_HOST: '127.0.0.1',
      SMTP_PORTS: '0:tls,0:starttls',
      BOUNCE_MX_HOST: '127.0.0.1',
      BOUNCE_MX_PORT: '0',
      DOMAIN_CACHE_MS: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 15_000)))]);
    // Cleared, else the timer keeps jest from exiting for up to 15 s after the suite.
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  try {
    await waitFor(
      () => output.includes('"api_key"') || child.exitCode !== null,
      () => `herald all to boot: ${output}`,
      75_000,
    );
    if (child.exitCode !== null) throw new Error(`herald all exited: ${output}`);
  } catch (error) {
    await stop();
    throw error;
  }
  const summary = output.slice(output.indexOf('{\n'), output.indexOf('\n}\n') + 2);
  return { boot: JSON.parse(summary) as Boot, stop };
}

export async function waitFor(check: () => Promise<boolean> | boolean, what: string | (() => string), timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
