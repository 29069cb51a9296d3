import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

/**
 * Starts a private server (`command args`) and resolves once `answers()` says it serves; throws
 * with its stderr if it exits first or does not answer within `timeoutMs`.
 */
export async function spawnServer(command: string, args: string[], answers: () => Promise<boolean>, timeoutMs: number): Promise<ChildProcess> {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const deadline = Date.now() + timeoutMs;
  while (!(await answers())) {
    if (child.exitCode !== null) throw new Error(`${command} exited: ${stderr}`);
    if (Date.now() > deadline) {
      await killServer(child);
      throw new Error(`${command} did not answer within ${timeoutMs} ms: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return child;
}

/** SIGKILL (works while paused too) and waits for the exit; nothing if it has exited already. */
export async function killServer(child: ChildProcess | null): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}
