// The distance between the two regions of regions-bench.ts, in a child process of its own: a NATS
// supercluster (us-east-1 and eu-west-1, one node each, gateways through delay proxies), a TCP
// delay proxy in front of eu-west-1's email-plane database, and two more for eu-west-1's API (the
// control database and Redis, both in us-east-1, as eu-west-1 reaches them). The proxies hold every chunk for the
// delay on a timer: in the bench's own process, autocannon's load would make those timers late,
// and eu-west-1 farther than the delay asked for. Driven over IPC (RegionsCommand); stops
// everything it started when told to, or when the bench goes away (IPC disconnect).
import './aliases';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startSupercluster, Supercluster, TcpProxy } from '@herald/testing';
import { DIST } from './aliases';

export const A = 'us-east-1';
export const B = 'eu-west-1';

export type RegionsCommand =
  /** The delay, each way, on the gateways and on eu-west-1's database link (0: none). */
  | { id: number; type: 'latency'; ms: number }
  /** eu-west-1 lost: its database link silent (blackhole), its NATS node killed. */
  | { id: number; type: 'b-down' }
  /** eu-west-1 back: its database link passing again (at the delay), its NATS node restarted and rejoined. */
  | { id: number; type: 'b-up' }
  /** eu-west-1's database link reset and refused from now on (so the API's pool lets go at its stop). */
  | { id: number; type: 'b-refuse' }
  | { id: number; type: 'stop' };

export type RegionsReply =
  | {
      type: 'ready';
      natsA: string[];
      natsB: string[];
      monitorA: string;
      proxyPort: number;
      /** us-east-1's Postgres server (the control database's) and its Redis, as eu-west-1 reaches them. */
      controlProxyPort: number;
      redisProxyPort: number;
    }
  | { type: 'done'; id: number }
  | { type: 'failed'; id?: number; message: string };

/**
 * supercluster.ts reads its node template beside the sources (`deploy/local/nats`, three folders
 * up from its own); compiled into dist/libs/testing/src, three folders up is dist/. A copy there.
 */
function templateBesideDist(): void {
  const folder = join(DIST, 'deploy', 'local', 'nats');
  mkdirSync(folder, { recursive: true });
  copyFileSync(join(DIST, '..', 'deploy', 'local', 'nats', 'supercluster-node.conf.tmpl'), join(folder, 'supercluster-node.conf.tmpl'));
}

async function main(): Promise<void> {
  const send = (reply: RegionsReply) => process.send!(reply);
  let cluster: Supercluster | null = null;
  let proxy: TcpProxy | null = null;
  let fromB: TcpProxy[] = [];
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      await proxy?.close();
      await Promise.allSettled(fromB.map((each) => each.close()));
      await cluster?.stop();
    })());
  // Ctrl-C reaches the whole process group: the bench tells this process when to stop.
  process.on('SIGINT', () => undefined);
  process.once('disconnect', () => void stop().finally(() => process.exit(0)));
  try {
    templateBesideDist();
    proxy = await TcpProxy.start({ port: Number(process.env.BENCH_B_PG_PORT) });
    fromB = [
      await TcpProxy.start({ port: Number(process.env.BENCH_B_PG_PORT) }),
      await TcpProxy.start({ port: Number(process.env.BENCH_REDIS_PORT) }),
    ];
    cluster = await startSupercluster({ regions: [{ name: A }, { name: B }], gatewayLatencyMs: 0, timeoutMs: 60_000 });
  } catch (error) {
    send({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    await stop();
    process.exit(1);
  }
  const [c, p, [control, redis]] = [cluster, proxy, fromB];
  process.on('message', (command: RegionsCommand) => {
    const act = async () => {
      if (command.type === 'latency') {
        for (const each of [p, control, redis]) each.latency(command.ms);
        c.setGatewayLatency(command.ms);
      } else if (command.type === 'b-down') {
        p.set('blackhole');
        await c.stopRegion(B);
      } else if (command.type === 'b-up') {
        p.set('pass');
        await c.startRegion(B);
      } else if (command.type === 'b-refuse') {
        p.set('refuse');
        p.reset();
      } else {
        await stop();
      }
    };
    act().then(
      () => {
        send({ type: 'done', id: command.id });
        if (command.type === 'stop') process.disconnect();
      },
      (error: unknown) => send({ type: 'failed', id: command.id, message: error instanceof Error ? error.message : String(error) }),
    );
  });
  send({
    type: 'ready',
    natsA: c.urls(A),
    natsB: c.urls(B),
    monitorA: c.nodes.find((node) => node.region === A)!.monitorUrl,
    proxyPort: p.port,
    controlProxyPort: control.port,
    redisProxyPort: redis.port,
  });
}

// Imported by the bench for its types and names only: it runs as the forked child.
if (require.main === module) void main();
