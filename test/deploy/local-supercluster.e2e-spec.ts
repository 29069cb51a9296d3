import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { acceptsConnections } from '@herald/testing';

const run = promisify(execFile);
const SCRIPT = join(__dirname, '..', '..', 'deploy', 'local', 'supercluster.sh');

/**
 * deploy/local/supercluster.sh as a developer runs it: two regions (us-east-1 with three nodes,
 * eu-west-1 with one) from the installed nats-server, in a data folder and on a port block of the
 * test's own, then stopped and purged. A stream placed by region tag from a client of one region
 * lands on the other region's servers.
 */
describe('deploy/local/supercluster.sh', () => {
  let data: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    data = await mkdtemp(join(tmpdir(), 'herald-local-sc-'));
    env = { ...process.env, SUPERCLUSTER_DATA: data, SUPERCLUSTER_BASE_PORT: String(await freeBlock()) };
  });

  afterAll(async () => {
    await run(SCRIPT, ['stop', '--purge'], { env }).catch(() => undefined);
    await rm(data, { recursive: true, force: true });
  });

  it('starts, places streams by region tag, reports its nodes and stops', async () => {
    const started = await run(SCRIPT, ['start', '--regions', 'us-east-1:3,eu-west-1'], { env, timeout: 90_000 });
    expect(started.stdout).toContain('running: 2 regions, 4 servers');
    expect(started.stdout).toContain('export NATS_PLACE_BY_REGION=true');
    expect(started.stdout).toContain('export NATS_REGION_REPLICAS=us-east-1=3');
    const usUrls = /export NATS_URL=(\S+)/.exec(started.stdout)![1].split(',');
    expect(usUrls).toHaveLength(3);
    const byRegion = /export NATS_REGION_URLS='(\S+)'/.exec(started.stdout)![1];
    expect(byRegion).toBe(`us-east-1=${usUrls.join('|')},eu-west-1=nats://127.0.0.1:${Number(new URL(usUrls[0]).port) + 10}`);

    const nc = await connect({ servers: usUrls });
    try {
      const jsm = await jetstreamManager(nc);
      const placed = async (name: string, region: string, replicas: number) => {
        await jsm.streams.add({
          name,
          subjects: [`${name.toLowerCase()}.>`],
          retention: RetentionPolicy.Workqueue,
          storage: StorageType.File,
          num_replicas: replicas,
          placement: { cluster: '', tags: [`region:${region}`] },
        });
        const info = await jsm.streams.info(name);
        return { cluster: info.cluster?.name, replicas: 1 + (info.cluster?.replicas?.length ?? 0) };
      };
      expect(await placed('EU_PROBE', 'eu-west-1', 1)).toEqual({ cluster: 'eu-west-1', replicas: 1 });
      expect(await placed('US_PROBE', 'us-east-1', 3)).toEqual({ cluster: 'us-east-1', replicas: 3 });
    } finally {
      await nc.close();
    }

    const status = await run(SCRIPT, ['status'], { env });
    expect(status.stdout.split('\n').filter((l) => /\sup\s/.test(l))).toHaveLength(4);
    const stopped = await run(SCRIPT, ['stop', '--purge'], { env });
    expect(stopped.stdout.match(/stopped /g)).toHaveLength(4);
    expect(await acceptsConnections(Number(new URL(usUrls[0]).port))).toBe(false);
  }, 120_000);

  it('refuses a layout it cannot run', async () => {
    await expect(run(SCRIPT, ['start', '--regions', 'us-east-1'], { env })).rejects.toMatchObject({
      stderr: 'supercluster: give two to four regions (got 1)\n',
    });
    await expect(run(SCRIPT, ['start', '--regions', 'us-east-1:2,eu-west-1'], { env })).rejects.toMatchObject({
      stderr: 'supercluster: us-east-1: a region has 1 or 3 nodes, not "2"\n',
    });
  });
});

/** A base port whose client, route, gateway and monitor blocks (base + 0/1000/2000/3000, + 0..12) are all free now. */
async function freeBlock(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    // Below Linux's ephemeral range (32768 and up), where the kernel hands out ports to other
    // suites' clients and port-0 servers while the script's nodes start (test/run-lanes.mjs runs
    // two suites at once): a node that loses its port to one never joins.
    const base = 20_000 + Math.floor(Math.random() * 8_000);
    const ports = [0, 1000, 2000, 3000].flatMap((kind) => [0, 1, 2, 10, 11, 12].map((offset) => base + kind + offset));
    const busy = await Promise.all(ports.map((port) => acceptsConnections(port, 200)));
    if (!busy.some(Boolean)) return base;
  }
  throw new Error('no free port block for the supercluster');
}
