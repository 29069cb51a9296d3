import { startPrivateStack, type PrivateStack } from '@herald/testing';
import { expectLedger, printLedger, settleLedger } from '../support/fault-ledger';
import { keyedLoad, keyMismatches } from '../support/fault-load';
import { FaultWorld, type FaultService } from '../support/fault-world';

jest.setTimeout(150_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Scenario 5: the API partitioned from Postgres, then from Redis, through the proxy between
 * them, under keyed load; the other roles keep their own links. First a black hole (3 s of
 * silence that then heals, TCP delivering what it held), then the connections reset and new
 * ones refused (1.5 s). The pass: no email answered 200 and then lost, no key with two emails;
 * losing availability during the partition is allowed (what the client sees is counted).
 */
describe('fault 5: API partitions', () => {
  let stack: PrivateStack;
  let world: FaultWorld;

  beforeAll(async () => {
    stack = await startPrivateStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });
  afterEach(async () => {
    await world?.close();
  });

  it.each<[FaultService]>([['postgres'], ['redis']])(
    'API ↔ %s: black hole, then resets; nothing accepted is lost, no key sent twice',
    async (service) => {
      world = await FaultWorld.start(stack);
      const sink = await world.sink(`inbox.${service}.test`);
      const { team } = await world.startRoles(service);
      const proxy = world.proxies[`api.${service}`];
      const load = keyedLoad(world, team, (n) => `p${n}@inbox.${service}.test`);
      const phase = (name: string) => ({ name, at: load.sends.length });
      const phases = [phase('before')];
      await sleep(1_000);
      proxy.set('blackhole');
      phases.push(phase('black hole'));
      await sleep(3_000);
      proxy.heal();
      phases.push(phase('healed'));
      await sleep(1_000);
      proxy.set('refuse').reset();
      phases.push(phase('reset and refused'));
      await sleep(1_500);
      proxy.heal();
      phases.push(phase('healed'));
      await sleep(1_500);
      // A key whose claim reached Redis only after the API gave up on it stays claimed until the
      // marker's deadline, counted from that request's start (2 s here): its retries get 409
      // in-progress meanwhile, then their one email. (With a bare 60 s TTL from the claim's late
      // arrival, these keys were still refused when the load stopped.)
      await load.stop(10_000);
      const unanswered = load.sends.filter((s) => !s.id);

      const ledger = await settleLedger({
        db: world.db,
        accepted: load.accepted(),
        sinks: [sink],
        webhooks: { receiver: world.receiver, teamId: team.id },
      });
      printLedger(
        `5 API ↔ ${service} partitioned (${unanswered.length} key(s) still refused 409 at the end; answers ${JSON.stringify(load.statuses)}, errors ${JSON.stringify(load.errors)}, sends by phase ${JSON.stringify(phases)})`,
        ledger,
        0,
      );
      expect(world.ended()).toEqual([]);
      // A request the partition broke is answered 503 with Retry-After (the client retries), never a 500.
      expect(load.statuses[500] ?? 0).toBe(0);
      expect(await keyMismatches(world, team.id, load)).toEqual([]);
      expect(unanswered).toEqual([]);
      expectLedger(ledger, 0);
    },
  );
});
