import { once } from 'node:events';
import { createConnection, createServer } from 'node:net';

/**
 * A TCP port free right now on every one of `hosts`, for a server the test starts a moment later
 * (a child process, MX sinks sharing one port on several addresses). Drawn at random below Linux's
 * ephemeral range (32768 and up; the local supercluster's block is 20000-31012): a port the kernel
 * picked would be handed out again meanwhile to another suite's client or port-0 server
 * (test/run-lanes.mjs runs two suites at once), and the server would find it taken.
 */
export async function freePortOn(hosts: string[]): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * 10_000);
    const free = await Promise.all(hosts.map((host) => listenAndRelease(host, port)));
    if (free.every(Boolean)) return port;
  }
  throw new Error(`no port free on all of ${hosts.join(', ')}`);
}

/** A TCP port free on 127.0.0.1 right now (see freePortOn). */
export const freeLoopbackPort = (): Promise<number> => freePortOn(['127.0.0.1']);

async function listenAndRelease(host: string, port: number): Promise<boolean> {
  const server = createServer();
  try {
    server.listen(port, host);
    await once(server, 'listening');
    return true;
  } catch {
    return false;
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function acceptsConnections(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => done(true));
  });
}
