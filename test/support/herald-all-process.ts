import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';

const BIN = join(__dirname, '..', '..', 'bin', 'herald.js');

export interface AllProcess {
  child: ChildProcess;
  url: string;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<[number | null, NodeJS.Signals | null]>;
}

/**
 * `node bin/herald.js all` (every role in one process) as a real child on a fixed API port, so a
 * test can kill it and start it again at the same address. Resolves once the API answers
 * /health/ready; the other roles start before it in the same process.
 */
export async function startAllProcess(env: NodeJS.ProcessEnv, port: number, readyTimeoutMs = 30_000): Promise<AllProcess> {
  const child = spawn(process.execPath, [BIN, 'all'], {
    env: { ...env, API_PORT: String(port), API_HOST: '127.0.0.1', DEV_BOOTSTRAP: 'false' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const url = `http://127.0.0.1:${port}`;
  const started: AllProcess = {
    child,
    url,
    exited,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`herald all exited early: ${stderr}`);
    if (await fetch(`${url}/health/ready`).then((r) => r.ok, () => false)) return started;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`herald all did not become ready: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
