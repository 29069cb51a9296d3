import { startPrivateStack, type PrivateStack } from '@herald/testing';
import { expectLedger, printLedger, settleLedger } from '../support/fault-ledger';
import { keyedLoad, keyMismatches } from '../support/fault-load';
import { FaultWorld } from '../support/fault-world';

jest.setTimeout(150_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const SUPPRESSED = Array.from({ length: 5 }, (_, i) => `gone${i}@inbox.redis.test`);

/**
 * Scenario 14: Redis restarted without persistence (every key gone) under keyed load, on a
 * private stack. Redis is a cache and a lock for Herald: Postgres is the backstop, so each
 * idempotency key still means one email (a retry after the loss replays the first answer),
 * suppressed addresses are still suppressed, and nothing accepted is lost.
 */
describe('fault 14: Redis restarted empty under load', () => {
  let stack: PrivateStack;
  let world: FaultWorld;

  beforeAll(async () => {
    stack = await startPrivateStack();
  });
  afterAll(async () => {
    await world?.close();
    await stack?.stop();
  });

  it('idempotency and suppressions stay right; nothing accepted is lost', async () => {
    world = await FaultWorld.start(stack);
    const sink = await world.sink('inbox.redis.test');
    const { team } = await world.startRoles('redis');
    for (const email of SUPPRESSED) expect((await world.call(team.token, 'POST', '/suppressions', { email })).status).toBe(200);

    // One send in five goes to a suppressed address.
    const load = keyedLoad(world, team, (n) => (n % 5 === 4 ? SUPPRESSED[Math.floor(n / 5) % SUPPRESSED.length] : `r${n}@inbox.redis.test`));
    await sleep(1_500);
    const before = load.sends.filter((s) => s.id).length;
    await stack.redis.restart();
    await sleep(2_000);
    await load.stop();

    // Every key answered so far, again, now that Redis has none of them: the same email, from Postgres.
    const answered = load.sends.filter((s) => s.id);
    const replays = await Promise.all(
      answered.map((s) =>
        world.call(team.token, 'POST', '/emails', { from: team.from, to: s.to, subject: s.key, text: 'once' }, { 'idempotency-key': s.key }),
      ),
    );
    const notReplayed = replays
      .map((r, i) => ({ key: answered[i].key, status: r.status, id: r.body?.id, first: answered[i].id }))
      .filter((r) => r.status !== 200 || r.id !== r.first);

    const ledger = await settleLedger({
      db: world.db,
      accepted: load.accepted(),
      sinks: [sink],
      webhooks: { receiver: world.receiver, teamId: team.id },
    });
    printLedger(
      `14 Redis restarted empty after ${before} sends (answers ${JSON.stringify(load.statuses)}, errors ${JSON.stringify(load.errors)})`,
      ledger,
      0,
    );
    // A service fault must not end a role: a crash would show below only as mail not delivered.
    expect(world.ended()).toEqual([]);
    expect(before).toBeGreaterThan(0);
    expect(notReplayed).toEqual([]);
    expect(await keyMismatches(world, team.id, load)).toEqual([]);
    // No 500: the outage is answered 503 (with Retry-After) or not at all, never as a server error.
    expect(load.statuses[500] ?? 0).toBe(0);
    expectLedger(ledger, 0);
    const toSuppressed = [...load.accepted().values()].flat().filter((to) => to.startsWith('gone')).length;
    expect(ledger.suppressed).toBe(toSuppressed);
    expect(ledger.delivered).toBe(ledger.accepted - toSuppressed);
    expect(sink.messages.flatMap((m) => m.recipients).filter((to) => to.startsWith('gone'))).toEqual([]);
  });
});
