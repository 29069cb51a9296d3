import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { HeraldConfig } from '@herald/config';
import { freeLoopbackPort } from '@herald/testing';

const BIN = join(__dirname, '..', '..', 'bin', 'herald.js');

/** The environment that makes a child Herald process use a test's isolated config. */
export function envOf(config: HeraldConfig, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: config.DATABASE_URL,
    DATABASE_SCHEMA: config.DATABASE_SCHEMA,
    REDIS_URL: config.REDIS_URL,
    REDIS_PREFIX: config.REDIS_PREFIX,
    NATS_URL: config.NATS_URL.join(','),
    NATS_NAMESPACE: config.NATS_NAMESPACE,
    HERALD_REGIONS: config.HERALD_REGIONS.join(','),
    OPS_PORT: '0',
    ...extra,
  };
}

export const freePort = freeLoopbackPort;

/** Runs a one-shot CLI command (`team create`, `key create`, ...) and parses its JSON output. */
export async function herald(env: NodeJS.ProcessEnv, ...args: string[]): Promise<any> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`herald ${args.join(' ')} exited ${code}: ${err}`);
  return JSON.parse(out);
}

export interface ApiProcess {
  url: string;
  child: ChildProcess;
  /** Resolves with the exit code and signal once the process is gone. */
  exited: Promise<[number | null, NodeJS.Signals | null]>;
  stderr(): string;
  /** The JSON log lines at level error or above that the process wrote (pino, on stdout). */
  errorLogs(): string[];
  /** Sends the signal (if still running) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<[number | null, NodeJS.Signals | null]>;
}

/** A failpoint preloaded into a role: it kills itself (SIGKILL) right after an accepted email commits, before it is published or answered. */
export const CRASH_AFTER_COMMIT = { NODE_OPTIONS: `--require ${join(__dirname, 'failpoints', 'crash-after-commit.js')}` };

/** `env` with the crash-after-commit failpoint added. */
export function crashAfterCommit(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} ${CRASH_AFTER_COMMIT.NODE_OPTIONS}`.trim() };
}

/** A role whose host clock is `offsetMs` off (ahead when positive): the clock-offset failpoint, preloaded. */
export function clockOffset(offsetMs: number): Record<string, string> {
  return { NODE_OPTIONS: `--require ${join(__dirname, 'failpoints', 'clock-offset.js')}`, HERALD_TEST_CLOCK_OFFSET_MS: String(offsetMs) };
}

/** Starts `herald api` as a real child process (on a free port unless told) and waits until it is ready. */
export async function startApiProcess(env: NodeJS.ProcessEnv, port?: number, readyTimeoutMs?: number): Promise<ApiProcess> {
  return startServing('api', env, port ?? (await freePort()), readyTimeoutMs);
}

/**
 * Starts `herald all` (every role in one process) on a fixed API port, so a test can kill it and
 * start it again at the same address, and waits until its API is ready (the other roles start
 * before it in the same process).
 */
export function startAllProcess(env: NodeJS.ProcessEnv, port: number): Promise<ApiProcess> {
  return startServing('all', { ...env, DEV_BOOTSTRAP: 'false' }, port, 45_000);
}

async function startServing(command: 'api' | 'all', env: NodeJS.ProcessEnv, port: number, readyTimeoutMs = 45_000): Promise<ApiProcess> {
  const child = spawn(process.execPath, [BIN, command], {
    env: { ...env, API_PORT: String(port), API_HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const errorLogs = collectErrorLogs(child.stdout!);
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`herald ${command} exited early: ${stderr}`);
    const ready = await fetch(`${url}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`herald ${command} did not become ready: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    child,
    exited,
    stderr: () => stderr,
    errorLogs: () => [...errorLogs],
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Pino's level numbers: 50 is error, 60 fatal. */
const PINO_ERROR = 50;

/** Reads a child's stdout (pino JSON lines) and keeps the last 50 lines at level error or above. */
function collectErrorLogs(stdout: Readable): string[] {
  const kept: string[] = [];
  let partial = '';
  stdout.setEncoding('utf8');
  stdout.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes('"level":')) continue;
      const level = Number(/"level":(\d+)/.exec(line)?.[1]);
      if (level < PINO_ERROR) continue;
      kept.push(line);
      if (kept.length > 50) kept.shift();
    }
  });
  return kept;
}
