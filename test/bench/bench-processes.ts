import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { DIST } from './aliases';

/** bin/herald.js of the checkout this dist/ was built from. */
export const HERALD_BIN = join(DIST, '..', 'bin', 'herald.js');

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** Runs a one-shot CLI command (`migrate`, `team create`, ...) and parses the JSON it prints. */
export async function heraldCli<T = Record<string, unknown>>(env: NodeJS.ProcessEnv, ...args: string[]): Promise<T> {
  const child = spawn(process.execPath, [HERALD_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`herald ${args.join(' ')} exited ${code}: ${err}`);
  return JSON.parse(out) as T;
}

/** A server the bench started as a child process; `stop` sends SIGTERM and waits for the exit. */
export interface ServerProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * A bench's entry point: `run` starts its servers into the list it is given; they are stopped and
 * the world cleaned up (schema, keys, streams) afterwards, on Ctrl-C too. A failure sets exit code 1.
 */
export function benchMain(name: string, world: { cleanup(): Promise<void> }, run: (servers: ServerProcess[]) => Promise<void>): void {
  const servers: ServerProcess[] = [];
  const teardown = async () => {
    for (const server of servers) await server.stop();
    await world.cleanup();
  };
  process.once('SIGINT', () => void teardown().finally(() => process.exit(130)));
  run(servers)
    .finally(teardown)
    .catch((error: unknown) => {
      process.stderr.write(`${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    });
}

function childProcess(child: ChildProcess, url: string): ServerProcess & { exited: Promise<unknown>; stderr: () => string } {
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += d;
    // Warnings and errors of the role are worth seeing while the bench runs.
    process.stderr.write(d);
  });
  const exited = once(child, 'exit');
  return {
    url,
    pid: child.pid!,
    exited,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

async function waitReady(server: ReturnType<typeof childProcess>, child: ChildProcess, probe: string): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${probe}: the server exited early: ${server.stderr()}`);
    if (
      await fetch(probe).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    if (Date.now() > deadline) throw new Error(`${probe} did not answer within 180 s: ${server.stderr()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The Herald API. With `workers` 1 it is exactly `node bin/herald.js api`; with more, the
 * cluster launcher of this folder forks that many `herald api` processes sharing one port.
 */
export async function startHeraldApi(env: NodeJS.ProcessEnv, workers: number, nodeArgs: string[] = []): Promise<ServerProcess> {
  const port = await freePort();
  const childEnv = { ...env, API_PORT: String(port), API_HOST: '127.0.0.1', OPS_PORT: '0' };
  const child =
    workers === 1
      ? spawn(process.execPath, [...nodeArgs, HERALD_BIN, 'api'], { env: childEnv, stdio: ['ignore', 'ignore', 'pipe'] })
      : spawn(process.execPath, [...nodeArgs, join(__dirname, 'api-cluster.js')], {
          env: { ...childEnv, BENCH_API_WORKERS: String(workers) },
          stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        });
  const server = childProcess(child, `http://127.0.0.1:${port}`);
  if (workers > 1) await workersListening(child, server);
  await waitReady(server, child, `${server.url}/health/ready`);
  return server;
}

/**
 * A Herald role without an API port (`worker`, `webhooks`, ...) as a child process,
 * `node bin/herald.js <role>`, ready once its ops port answers /health/ready; `url` is the ops port.
 */
export async function startHeraldRole(env: NodeJS.ProcessEnv, role: string, nodeArgs: string[] = []): Promise<ServerProcess> {
  const opsPort = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, HERALD_BIN, role], {
    env: { ...env, OPS_PORT: String(opsPort) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const server = childProcess(child, `http://127.0.0.1:${opsPort}`);
  await waitReady(server, child, `${server.url}/health/ready`);
  return server;
}

/** A bare Fastify server with one trivial JSON POST route, in a child process (same worker count). */
export async function startBareFastify(workers: number): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(__dirname, 'bare-fastify.js')], {
    env: { ...process.env, PORT: String(port), WORKERS: String(workers) },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  const server = childProcess(child, `http://127.0.0.1:${port}`);
  await workersListening(child, server);
  return server;
}

async function workersListening(child: ChildProcess, server: ReturnType<typeof childProcess>): Promise<void> {
  const ready = once(child, 'message');
  const failed = server.exited.then(() => {
    throw new Error(`the server exited before it listened: ${server.stderr()}`);
  });
  await Promise.race([ready, failed]);
}
