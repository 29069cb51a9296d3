import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { sendStreamName } from '@herald/bus';
import { HeraldConfig } from '@herald/config';
import { SENDERS_DURABLE } from '../../apps/worker/src/worker.app';
import { envOf, freePort } from './herald-process';

const BIN = join(__dirname, '..', '..', 'bin', 'herald.js');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The environment of a `herald worker` child that delivers like the in-process roles of a
 * DeliveryWorld: envOf's isolation plus the world's DNS server, MX port and delivery settings
 * (which envOf leaves out).
 */
export function workerEnv(config: HeraldConfig, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const delivery: Record<string, string> = { DNS_SERVERS: config.DNS_SERVERS.join(',') };
  for (const [key, value] of Object.entries(config)) {
    if (!/^(DELIVERY_|DOMAIN_CACHE_MS$|DNS_TIMEOUT_MS$|MAX_EMAIL_BYTES$)/.test(key) || value === undefined) continue;
    if (Array.isArray(value)) delivery[key] = value.join(',');
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') delivery[key] = String(value);
  }
  return envOf(config, { ...delivery, ...extra });
}

export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  opsUrl: string;
  /** Resolves with the exit code and signal once the process is gone. */
  exited: Promise<[number | null, NodeJS.Signals | null]>;
  stderr(): string;
  /** Sends the signal (if still running) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<[number | null, NodeJS.Signals | null]>;
}

export type OpsRole = 'worker' | 'metrics' | 'webhooks' | 'smtp';

/**
 * `node bin/herald.js worker` (or another role on an ops port: `metrics`, `webhooks`, `smtp`) as a
 * real child process. With `waitReady` (default) it resolves once the ops port answers
 * /health/ready; without, as soon as it is spawned (the caller watches the sinks instead, so a
 * crash test can kill it at any moment, startup included). `openFiles` raises the process's
 * descriptor limit (a shell's `ulimit -n`, up to the hard limit) before it starts.
 */
export async function startWorkerProcess(
  env: NodeJS.ProcessEnv,
  options: { waitReady?: boolean; readyTimeoutMs?: number; role?: OpsRole; openFiles?: number } = {},
): Promise<WorkerProcess> {
  const opsPort = await freePort();
  const role = options.role ?? 'worker';
  const spawnOptions = { env: { ...env, OPS_PORT: String(opsPort) }, stdio: ['ignore', 'ignore', 'pipe'] as ['ignore', 'ignore', 'pipe'] };
  // `exec` keeps the shell's pid for node, so the caller's pid is the role's own
  const child = options.openFiles
    ? spawn('sh', ['-c', `ulimit -n ${options.openFiles} && exec "$0" "$1" "$2"`, process.execPath, BIN, role], spawnOptions)
    : spawn(process.execPath, [BIN, role], spawnOptions);
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const opsUrl = `http://127.0.0.1:${opsPort}`;
  const worker: WorkerProcess = {
    child,
    pid: child.pid!,
    opsUrl,
    exited,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  if (options.waitReady === false) return worker;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 45_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`herald ${role} exited early: ${stderr}`);
    if (
      await fetch(`${opsUrl}/health/ready`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return worker;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`herald ${role} did not become ready: ${stderr}`);
    }
    await sleep(100);
  }
}

/** Polls `check` until it holds; throws with `what` (and the last detail) after the timeout. */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean | string> | boolean | string,
  timeoutMs = 30_000,
  everyMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await check();
    if (result === true) return;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${typeof result === 'string' ? `: ${result}` : ''}`);
    await sleep(everyMs);
  }
}

export interface SendConsumerState {
  /** Commands handed to a worker and not yet acked (across every process of the durable). */
  ackPending: number;
  maxAckPending: number;
  /** Commands on the stream not yet handed to any worker. */
  pending: number;
  redelivered: number;
  ackWaitMs: number;
}

/** The region's send consumer (the durable every worker shares), as the NATS server sees it. */
export async function sendConsumerState(config: HeraldConfig): Promise<SendConsumerState> {
  const nc = await connect({ servers: config.NATS_URL });
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.consumers.info(sendStreamName(config.NATS_NAMESPACE, config.HERALD_REGION), SENDERS_DURABLE);
    return {
      ackPending: info.num_ack_pending,
      maxAckPending: info.config.max_ack_pending ?? -1,
      pending: info.num_pending,
      redelivered: info.num_redelivered,
      ackWaitMs: (info.config.ack_wait ?? 0) / 1e6,
    };
  } finally {
    await nc.close();
  }
}
