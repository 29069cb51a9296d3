import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from './free-port';
import { killServer, spawnServer } from './server-process';
import { TcpProxy } from './tcp-proxy';

/** The node template deploy/local/supercluster.sh renders too, so tests run the same configuration. */
const TEMPLATE = join(__dirname, '..', '..', '..', 'deploy', 'local', 'nats', 'supercluster-node.conf.tmpl');

export interface SuperclusterRegion {
  /** The region's name (`eu-west-1`): its cluster's and gateway's name, and its server tag `region:<name>`. */
  name: string;
  /** Nodes of its cluster; 3 for a region whose streams are R3. Default 1. */
  nodes?: number;
}

export interface SuperclusterOptions {
  regions: SuperclusterRegion[];
  /** Delay (ms, each way) on every gateway connection: the distance between regions. Default 0. */
  gatewayLatencyMs?: number;
  /** How long the whole supercluster may take to form. Default 30 s. */
  timeoutMs?: number;
}

export interface SuperclusterNode {
  readonly name: string;
  readonly region: string;
  readonly url: string;
  readonly monitorUrl: string;
}

/**
 * A private NATS supercluster for a test: one cluster per region, joined by gateways, on free
 * loopback ports with its own data folders, from the installed nats-server (2.9). Each node is
 * tagged `region:<region>`, so streams placed by that tag live on their region's nodes. With
 * `gatewayLatencyMs`, every gateway connection goes through a delay proxy (TcpProxy): each node
 * advertises its proxy's port as its gateway address, so the other regions dial through it.
 */
export interface Supercluster {
  readonly nodes: SuperclusterNode[];
  /** The client URLs of a region's nodes (a NATS_URL list for Herald's roles in that region). */
  urls(region: string): string[];
  /** Sets the delay on every gateway link (ms each way); 0 removes it. */
  setGatewayLatency(ms: number): void;
  /** Kills a region's nodes (SIGKILL: a region lost, not shut down); their data stays. */
  stopRegion(region: string): Promise<void>;
  /** Starts a stopped region's nodes again on their ports and data; waits (up to 60 s) until every region's gateways are back and every node follows one meta leader. */
  startRegion(region: string): Promise<void>;
  /** Kills one node (SIGKILL); its data stays. */
  stopNode(name: string): Promise<void>;
  /** Starts a stopped node again on its ports and data; waits (up to 60 s) as startRegion does. */
  startNode(name: string): Promise<void>;
  stop(): Promise<void>;
}

interface NodePlan extends SuperclusterNode {
  clientPort: number;
  clusterPort: number;
  gatewayPort: number;
  monitorPort: number;
  proxy: TcpProxy | null;
  dir: string;
}

/** Starts made when a node's port was taken: each node's four ports are picked free, then bound later. */
const PORT_TAKEN_ATTEMPTS = 3;

/**
 * Starts the supercluster. Its ports are found free and bound only when the nodes start, so
 * another process on the machine can take one in between ("address already in use"); the whole
 * start is then made again on new ports, up to PORT_TAKEN_ATTEMPTS times.
 */
export async function startSupercluster(options: SuperclusterOptions): Promise<Supercluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startSuperclusterOnce(options);
    } catch (error) {
      if (attempt >= PORT_TAKEN_ATTEMPTS || !String((error as Error).message).includes('address already in use')) throw error;
    }
  }
}

async function startSuperclusterOnce(options: SuperclusterOptions): Promise<Supercluster> {
  if (options.regions.length < 1) throw new Error('a supercluster needs at least one region');
  const root = await mkdtemp(join(tmpdir(), 'herald-supercluster-'));
  const plans: NodePlan[] = [];
  const children = new Map<string, ChildProcess>();
  const proxies: TcpProxy[] = [];
  const timeoutMs = options.timeoutMs ?? 30_000;
  /** Starts a node from its rendered configuration, on its ports and data. */
  const spawnNode = async (plan: NodePlan) => {
    children.set(plan.name, await spawnServer('nats-server', ['-c', join(plan.dir, 'nats.conf')], () => monitorAnswers(plan), timeoutMs));
  };
  /** After a restart: every region's gateways back and every node following one meta leader. */
  const rejoined = () => waitFormed(plans, options.regions.length, Math.max(timeoutMs, 60_000), { rejoin: true });
  const stop = async () => {
    await Promise.all([...children.values()].map((child) => killServer(child)));
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await rm(root, { recursive: true, force: true });
  };
  try {
    for (const region of options.regions) {
      for (let i = 1; i <= (region.nodes ?? 1); i++) {
        const [clientPort, clusterPort, gatewayPort, monitorPort] = [await port(), await port(), await port(), await port()];
        const proxy = options.gatewayLatencyMs !== undefined ? await TcpProxy.start({ port: gatewayPort }) : null;
        if (proxy) proxies.push(proxy.latency(options.gatewayLatencyMs!));
        const name = `${region.name}-${i}`;
        const dir = join(root, name);
        plans.push({
          name,
          region: region.name,
          url: `nats://127.0.0.1:${clientPort}`,
          monitorUrl: `http://127.0.0.1:${monitorPort}`,
          clientPort,
          clusterPort,
          gatewayPort,
          monitorPort,
          proxy,
          dir,
        });
      }
    }
    const template = readFileSync(TEMPLATE, 'utf8');
    // Every node starts before any is waited for: a cluster's nodes only answer once they found each other.
    const starting = plans.map(async (plan) => {
      await mkdir(plan.dir, { recursive: true });
      await writeFile(join(plan.dir, 'nats.conf'), renderNode(template, plan, plans));
      await spawnNode(plan);
    });
    // All settled before a failure is thrown: stop() then kills every node that did start.
    const started = await Promise.allSettled(starting);
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    await waitFormed(plans, options.regions.length, timeoutMs);
  } catch (error) {
    await stop();
    throw error;
  }
  const nodeNamed = (name: string) => {
    const found = plans.find((p) => p.name === name);
    if (!found) throw new Error(`no node ${name} in this supercluster`);
    return found;
  };
  const inRegion = (region: string) => {
    const found = plans.filter((p) => p.region === region);
    if (!found.length) throw new Error(`no region ${region} in this supercluster`);
    return found;
  };
  return {
    nodes: plans.map(({ name, region, url, monitorUrl }) => ({ name, region, url, monitorUrl })),
    urls: (region) => inRegion(region).map((p) => p.url),
    setGatewayLatency: (ms) => {
      if (!proxies.length) throw new Error('start the supercluster with gatewayLatencyMs (0 is fine) to change it later');
      for (const proxy of proxies) proxy.latency(ms);
    },
    stopRegion: async (region) => {
      await Promise.all(inRegion(region).map((plan) => killServer(children.get(plan.name) ?? null)));
    },
    startRegion: async (region) => {
      await Promise.all(inRegion(region).map(spawnNode));
      await rejoined();
    },
    stopNode: async (name) => {
      await killServer(children.get(nodeNamed(name).name) ?? null);
    },
    startNode: async (name) => {
      await spawnNode(nodeNamed(name));
      await rejoined();
    },
    stop,
  };
}

/** The template with one node's values: routes to its cluster's other nodes, gateways to every region. */
function renderNode(template: string, node: NodePlan, all: NodePlan[]): string {
  // A one-node region routes to itself: nats-server 2.9 refuses a JetStream cluster without any
  // configured route, and drops a route to itself.
  const peers = all.filter((p) => p.region === node.region && p !== node);
  const routes = (peers.length ? peers : [node]).map((p) => `"nats-route://127.0.0.1:${p.clusterPort}"`);
  const regions = [...new Set(all.map((p) => p.region))];
  const gateways = regions.map((region) => {
    const urls = all.filter((p) => p.region === region).map((p) => `"nats://127.0.0.1:${p.proxy?.port ?? p.gatewayPort}"`);
    return `{ name: "${region}", urls: [${urls.join(', ')}] }`;
  });
  const values: Record<string, string | number> = {
    SERVER_NAME: node.name,
    REGION: node.region,
    CLIENT_PORT: node.clientPort,
    MONITOR_PORT: node.monitorPort,
    CLUSTER_PORT: node.clusterPort,
    GATEWAY_PORT: node.gatewayPort,
    GATEWAY_ADVERTISE_PORT: node.proxy?.port ?? node.gatewayPort,
    STORE_DIR: node.dir,
    ROUTES: routes.join(', '),
    GATEWAYS: gateways.join(', '),
  };
  return template.replace(/\{\{([A-Z_]+)\}\}/g, (_, key: string) => {
    if (!(key in values)) throw new Error(`supercluster template: no value for {{${key}}}`);
    return String(values[key]);
  });
}

const port = () => freeLoopbackPort();

async function monitorAnswers(plan: NodePlan): Promise<boolean> {
  return fetch(`${plan.monitorUrl}/healthz`).then(
    () => true,
    () => false,
  );
}

/**
 * Formed: every node has an outbound gateway to every other region, and JetStream's meta group
 * (one for the whole supercluster) has a leader every node knows and all the nodes as peers.
 *
 * With `rejoin` (a region started again), the peer count is not waited for. A restarted node
 * that was the meta leader has been seen (once, in CI, on a loaded host) to come back leading a
 * group of size 1 that the other region follows, still so after 30 s: nats-server's own state
 * to converge, not Herald's; the region-down scenario then asserts what matters (what was
 * accepted is delivered, new sends are accepted). A timeout names every state seen, with when.
 */
async function waitFormed(plans: NodePlan[], regions: number, timeoutMs: number, { rejoin = false } = {}): Promise<void> {
  const startedAt = Date.now();
  const seen: string[] = [];
  for (;;) {
    const states = await Promise.all(plans.map((plan) => nodeState(plan)));
    const formed = states.every(
      (s) => s.outbound === regions - 1 && s.leader !== '' && (rejoin || s.peers === plans.length) && s.leader === states[0].leader,
    );
    if (formed) return;
    const state = JSON.stringify(states);
    if (!seen.at(-1)?.endsWith(state)) seen.push(`+${Date.now() - startedAt} ms ${state}`);
    if (Date.now() - startedAt > timeoutMs) throw new Error(`the supercluster did not form within ${timeoutMs} ms; states seen:\n${seen.join('\n')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function nodeState(plan: NodePlan): Promise<{ name: string; outbound: number; leader: string; peers: number }> {
  try {
    const gatewayz = (await (await fetch(`${plan.monitorUrl}/gatewayz`)).json()) as { outbound_gateways?: Record<string, unknown> };
    const jsz = (await (await fetch(`${plan.monitorUrl}/jsz`)).json()) as { meta_cluster?: { leader?: string; cluster_size?: number } };
    return {
      name: plan.name,
      outbound: Object.keys(gatewayz.outbound_gateways ?? {}).length,
      leader: jsz.meta_cluster?.leader ?? '',
      peers: jsz.meta_cluster?.cluster_size ?? 0,
    };
  } catch {
    return { name: plan.name, outbound: 0, leader: '', peers: 0 };
  }
}
