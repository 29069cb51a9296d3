import { ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePortOn } from '@herald/testing';
import { NATS_LIVENESS, natsProblems } from './k8s-nats-checks';
import { find, generated, K8sObject, podEnv, render } from './k8s-render';

const run = promisify(execFile);
const K8S = join(__dirname, '..', '..', 'k8s');
const BROKEN = join(__dirname, 'fixtures', 'k8s-broken-nats');
const REGIONS = ['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1'];
// What `nats server passwd` prints (the Secret nats-sys holds one).
const SYS_HASH = '$2a$11$abcdefghijklmnopqrstuuCZJMNd4nWXmqoHxJNGq2yRt0x2FwKKq';
const GiB = 1024 ** 3;

interface Varz {
  server_name: string;
  tags?: string[];
  cluster: { name: string };
  gateway: { name: string; advertise: string; gateways: { name: string; urls: string[] }[] };
  jetstream: { config: { max_storage: number } };
}

/**
 * Each region's NATS cluster as `kubectl kustomize` renders its overlay: the StatefulSet and its
 * Services, budget and probes checked (k8s-nats-checks.ts), a broken overlay caught, and the
 * rendered nats.conf booted by the installed nats-server (2.9) as pod nats-0 would run it, with
 * the pod's environment resolved from the rendered objects (only the listening ports and the
 * mount paths moved to the test's own).
 */
describe('k8s: the NATS JetStream cluster of each region', () => {
  const rendered = new Map<string, K8sObject[]>();
  const servers: ChildProcess[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    for (const region of REGIONS) rendered.set(region, await render(join(K8S, 'overlays', region)));
  }, 60_000);

  afterEach(async () => {
    for (const server of servers.splice(0)) {
      if (server.exitCode !== null || server.signalCode !== null) continue;
      const exited = once(server, 'exit');
      server.kill('SIGKILL');
      await exited;
    }
  });

  afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  it.each(REGIONS)('%s: three servers, one per zone, a budget, JetStream on the volume, probes on the monitoring port', (region) => {
    expect(natsProblems(rendered.get(region)!)).toEqual([]);
  });

  it('catches an overlay that breaks the cluster', async () => {
    expect(natsProblems(await render(BROKEN))).toEqual([
      "replicas 1: a region's cluster has three servers (R3 streams)",
      `liveness probe on /healthz, not ${NATS_LIVENESS}`,
    ]);
  });

  it.each(REGIONS)("%s: nats-server runs the rendered config as the region's tagged server in the supercluster", async (region) => {
    const objects = rendered.get(region)!;
    const { monitor } = await boot(objects, 'nats-0');
    const varz = (await (await fetch(`${monitor}/varz`)).json()) as Varz;
    const served = generated(objects, 'herald-config')!.data!.HERALD_REGIONS.split(',');
    const pvc = find(objects, 'StatefulSet', 'nats')!.spec.volumeClaimTemplates[0].spec.resources.requests.storage as string;
    expect({
      server: varz.server_name,
      tags: varz.tags,
      cluster: varz.cluster.name,
      gateway: varz.gateway.name,
      gateways: varz.gateway.gateways.map((g) => g.name).sort(),
      advertisedInOwnEntry: varz.gateway.gateways.find((g) => g.name === region)?.urls.includes(varz.gateway.advertise),
      storeBelowVolume: varz.jetstream.config.max_storage < Number(pvc.replace(/Gi$/, '')) * GiB,
    }).toEqual({
      server: `${region}-nats-0`,
      tags: [`region:${region}`],
      cluster: region,
      gateway: region,
      // Every served region's cluster is a gateway of this one.
      gateways: [...served].sort(),
      advertisedInOwnEntry: true,
      storeBelowVolume: true,
    });
    expect(await (await fetch(`${monitor}${NATS_LIVENESS}`)).json()).toEqual({ status: 'ok' });
  });

  /** Starts the rendered StatefulSet's container as pod `podName`, on free ports and in a folder of the test's. */
  async function boot(objects: K8sObject[], podName: string): Promise<{ monitor: string }> {
    const sts = find(objects, 'StatefulSet', 'nats')!;
    const container = sts.spec.template.spec.containers[0];
    const env = podEnv(objects, container, podName, { 'nats-sys': { password: SYS_HASH } });
    const dir = await mkdtemp(join(tmpdir(), 'herald-k8s-nats-'));
    dirs.push(dir);
    // Each mount of the pod becomes a folder of the test's: the config, the TLS Secret, the pid and the volume.
    const mounts: { mountPath: string; name: string }[] = container.volumeMounts;
    const local = (path: string) =>
      mounts.reduce((p, m) => (p === m.mountPath || p.startsWith(`${m.mountPath}/`) ? join(dir, m.name) + p.slice(m.mountPath.length) : p), path);
    for (const m of mounts) await mkdir(join(dir, m.name), { recursive: true });
    const tls = join(dir, 'tls');
    const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(tls, 'tls.key')];
    await run('openssl', ['req', '-x509', ...key, '-subj', '/CN=nats', '-days', '1', '-out', join(tls, 'tls.crt')]);
    await copyFile(join(tls, 'tls.crt'), join(tls, 'ca.crt'));

    const template = generated(objects, 'nats-config')!.data!['nats.conf'];
    const args = (container.args as string[]).map((a) => (a.startsWith('/') ? local(a) : a));
    // The ports are free when drawn, but a suite running alongside may bind one first: then again with others.
    for (let attempt = 1; ; attempt++) {
      const [client, cluster, gateway, monitor] = [await freePort(), await freePort(), await freePort(), await freePort()];
      let conf = template;
      for (const [pattern, line] of [
        [/^port: 4222$/m, `port: ${client}`],
        [/^http_port: 8222$/m, `http_port: ${monitor}`],
        [/^(\s+)port: 6222$/m, `$1port: ${cluster}`],
        [/^(\s+)port: 7222$/m, `$1port: ${gateway}`],
      ] as const) {
        if (!pattern.test(conf)) throw new Error(`nats.conf has no line ${pattern}`);
        conf = conf.replace(pattern, line);
      }
      for (const m of [...mounts].sort((a, b) => b.mountPath.length - a.mountPath.length)) conf = conf.split(m.mountPath).join(join(dir, m.name));
      await writeFile(join(dir, 'config', 'nats.conf'), conf);
      const started = await startServer(args, env, `http://127.0.0.1:${monitor}`);
      if (started) return { monitor: started };
      if (attempt === 3) throw new Error('nats-server found one of its ports taken three times');
    }
  }

  /** Resolves with the monitoring URL once the server says JetStream is on, or null if it could not bind a port. */
  async function startServer(args: string[], env: Record<string, string>, monitor: string): Promise<string | null> {
    const server = spawn('nats-server', args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    servers.push(server);
    let stderr = '';
    server.stderr!.on('data', (d) => (stderr += d));
    const deadline = Date.now() + 15_000;
    while (
      !(await fetch(`${monitor}${NATS_LIVENESS}`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (server.exitCode !== null) {
        if (/address already in use/.test(stderr)) return null;
        throw new Error(`nats-server exited: ${stderr}`);
      }
      if (Date.now() > deadline) throw new Error(`nats-server did not answer in 15 s: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return monitor;
  }
});

const freePort = () => freePortOn(['0.0.0.0']);
