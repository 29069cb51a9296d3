import { startPrivateStack, type PrivateStack } from '@herald/testing';
import { expectLedger, printLedger, settleLedger } from '../support/fault-ledger';
import { keyedLoad, keyMismatches } from '../support/fault-load';
import { FaultWorld } from '../support/fault-world';

jest.setTimeout(150_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Scenario 4: the broker killed (SIGKILL) under keyed load and started again 3 s later on its own
 * store, on a private stack (one node here; a cluster's rolling restart is written up in the
 * README). Pass: nothing accepted is lost and no key sent twice; the API never answers a send it
 * cannot keep (an accepted email is committed in Postgres before the answer, and the outbox
 * publishes it once the broker is back) and answers without waiting on the dead broker; no 500;
 * delivery resumes within 60 s.
 */
describe('fault 4: NATS killed and restarted under load', () => {
  let stack: PrivateStack;
  let world: FaultWorld;

  beforeAll(async () => {
    stack = await startPrivateStack();
  });
  afterAll(async () => {
    await world?.close();
    await stack?.stop();
  });

  it('nothing accepted is lost; delivery resumes after the restart', async () => {
    world = await FaultWorld.start(stack);
    const sink = await world.sink('inbox.nats.test');
    const { team } = await world.startRoles('nats');
    const load = keyedLoad(world, team, (n) => `n${n}@inbox.nats.test`);
    await sleep(1_500);
    const before = load.sends.filter((s) => s.id).length;
    await stack.nats.kill();
    const down = load.sends.length;
    await sleep(3_000);
    const whileDown = load.sends.filter((s) => s.id).length - before;
    await stack.nats.restart();
    const restartedAt = Date.now();
    await sleep(2_000);
    await load.stop();

    const ledger = await settleLedger(
      { db: world.db, accepted: load.accepted(), sinks: [sink], webhooks: { receiver: world.receiver, teamId: team.id } },
      60_000,
    );
    const recoveredMs = Date.now() - restartedAt;
    printLedger(
      `4 NATS killed for 3 s under keyed load (${before} answered before, ${whileDown} while down, sends from #${down}; answers ${JSON.stringify(load.statuses)}, errors ${JSON.stringify(load.errors)}; settled ${recoveredMs} ms after the restart)`,
      ledger,
      0,
    );
    // A service fault must not end a role: a crash would show below only as mail not delivered.
    expect(world.ended()).toEqual([]);
    expect(before).toBeGreaterThan(0);
    // Sends are answered while the broker is down, within DISPATCH_WAIT_MS of their commit: no
    // client timed out (until that wait was bounded, each waited for the publish's 5 s ack timeout).
    expect(whileDown).toBeGreaterThan(0);
    expect(load.statuses[0] ?? 0).toBe(0);
    expect(load.statuses[500] ?? 0).toBe(0);
    expect(await keyMismatches(world, team.id, load)).toEqual([]);
    expectLedger(ledger, 0);
    expect(recoveredMs).toBeLessThan(65_000);
  });
});
