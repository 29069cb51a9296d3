import { startPrivateStack, startSupercluster, type PrivateStack, type Supercluster } from '@herald/testing';
import { expectLedger, printLedger, settleLedger } from '../support/fault-ledger';
import { keyedLoad, keyMismatches } from '../support/fault-load';
import { FaultWorld } from '../support/fault-world';

jest.setTimeout(240_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const REGION = 'us-east-1';

/**
 * Scenario 4 across a cluster: Herald's roles on a 3-node JetStream cluster (the region's streams
 * R3, NATS_URL listing the three nodes), under keyed load. Each node is killed (SIGKILL) and
 * started again on its store in turn, then the whole cluster at once. Pass: nothing accepted is
 * lost and no key sent twice; no send is answered 500 (an accepted email is committed in Postgres
 * before the answer, the outbox publishes it once a stream leader answers); no role ends; the mail
 * settles within 60 s of the cluster's restart.
 */
describe('fault 4: a 3-node NATS cluster restarted node by node, then whole, under load', () => {
  let stack: PrivateStack;
  let cluster: Supercluster;
  let world: FaultWorld;

  beforeAll(async () => {
    stack = await startPrivateStack();
    cluster = await startSupercluster({ regions: [{ name: REGION, nodes: 3 }] });
  });
  afterAll(async () => {
    await world?.close();
    await cluster?.stop();
    await stack?.stop();
  });

  it('nothing accepted is lost or doubled through a rolling restart and a full one', async () => {
    world = await FaultWorld.start(stack);
    const sink = await world.sink('inbox.cluster.test');
    const { team } = await world.startRoles('cluster', { NATS_URL: cluster.urls(REGION).join(','), NATS_REPLICAS: '3' });
    const load = keyedLoad(world, team, (n) => `c${n}@inbox.cluster.test`);
    await sleep(1_500);
    const steps: string[] = [];
    const answered = () => load.sends.filter((s) => s.id).length;
    for (const node of cluster.nodes) {
      const before = answered();
      await cluster.stopNode(node.name);
      await sleep(3_000);
      await cluster.startNode(node.name);
      steps.push(`${node.name} restarted (${answered() - before} answered meanwhile)`);
      await sleep(1_000);
    }
    const before = answered();
    await cluster.stopRegion(REGION);
    await sleep(3_000);
    const whileDown = answered() - before;
    await cluster.startRegion(REGION);
    const restartedAt = Date.now();
    steps.push(`the whole cluster restarted (${whileDown} answered while it was down)`);
    await sleep(2_000);
    await load.stop();

    const ledger = await settleLedger(
      { db: world.db, accepted: load.accepted(), sinks: [sink], webhooks: { receiver: world.receiver, teamId: team.id } },
      60_000,
    );
    const recoveredMs = Date.now() - restartedAt;
    printLedger(
      `4 a 3-node NATS cluster, R3 streams: ${steps.join('; ')}; answers ${JSON.stringify(load.statuses)}, errors ${JSON.stringify(load.errors)}; settled ${recoveredMs} ms after the restart`,
      ledger,
      0,
    );
    expect(world.ended()).toEqual([]);
    expect(whileDown).toBeGreaterThan(0);
    expect(load.statuses[0] ?? 0).toBe(0);
    expect(load.statuses[500] ?? 0).toBe(0);
    expect(await keyMismatches(world, team.id, load)).toEqual([]);
    expectLedger(ledger, 0);
    expect(recoveredMs).toBeLessThan(65_000);
  });
});
