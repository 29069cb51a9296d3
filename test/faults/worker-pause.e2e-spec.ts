import { startPrivateStack, type PrivateStack } from '@herald/testing';
import { expectLedger, printLedger, settleLedger } from '../support/fault-ledger';
import { sendAll } from '../support/fault-load';
import { FaultWorld } from '../support/fault-world';
import { waitUntil } from '../support/worker-process';

jest.setTimeout(150_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Scenario 11: a worker frozen (SIGSTOP) with transactions open, past its claims' lifetime
 * (DELIVERY_CLAIM_SECONDS, 4 s here), while a second worker runs; then woken. Pass: the second
 * worker takes the expired claims over and delivers them; the woken worker cannot record under
 * its stale claims (each claim carries a token that recording checks), so every recipient has one
 * final state and one set of webhook events. The woken worker's queued jobs find their claims
 * taken over before their transactions and are not sent: copies at the MX stay within the
 * transactions it had open at the pause (at most one per connection it had made).
 */
describe('fault 11: a worker paused past its claims, then woken', () => {
  let stack: PrivateStack;
  let world: FaultWorld;

  beforeAll(async () => {
    stack = await startPrivateStack();
  });
  afterAll(async () => {
    await world?.close();
    await stack?.stop();
  });

  it('the claims move to the live worker; the woken one records nothing twice', async () => {
    world = await FaultWorld.start(stack);
    // Two connections to the MX: most of the frozen worker's jobs wait in its queue, their claims held.
    const { team, worker } = await world.startRoles('pause', { DELIVERY_CONNECTIONS_PER_DESTINATION: '2' });
    const slow = (await world.sink('slow.pause.test')).behave({ delayMs: 1_500 });
    const addresses = Array.from({ length: 16 }, (_, i) => `p${i}@slow.pause.test`);
    const accepted = await sendAll(world, team, addresses);
    const claimed = async () => {
      const { rows } = await world.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM email_recipients WHERE email_id = ANY($1::uuid[]) AND status = 'sending'`,
        [[...accepted.keys()]],
      );
      return rows[0].n;
    };
    // Pause only once jobs wait behind the open transactions: on a loaded machine the worker can
    // open both connections before it has claimed the rest.
    await waitUntil(
      'transactions open at the slow MX and claimed jobs queued behind them',
      async () => {
        const n = await claimed();
        return (slow.connections >= 2 && n > slow.connections) || `${slow.connections} connections, ${n} claimed`;
      },
      30_000,
    );
    worker.child.kill('SIGSTOP');
    const pausedAt = Date.now();
    const connectionsAtPause = slow.connections;
    // What the frozen worker holds: the most that can go out twice.
    const claimedAtPause = await claimed();
    // The MX answers the frozen worker's open transactions (it delivers what it took): those 250s
    // wait unread in the frozen worker's sockets.
    slow.behave('accept');
    const second = await world.worker();
    await sleep(Math.max(0, 8_000 - (Date.now() - pausedAt)));
    const takenOver = slow.messages.length;
    worker.child.kill('SIGCONT');

    const ledger = await settleLedger({ db: world.db, accepted, sinks: [slow], webhooks: { receiver: world.receiver, teamId: team.id } });
    printLedger(
      `11 worker SIGSTOPped 8 s (claims 4 s) holding ${claimedAtPause} claimed recipients over ${connectionsAtPause} connections; ${takenOver} at the MX before it woke`,
      ledger,
      connectionsAtPause,
    );
    expect(second.child.exitCode).toBeNull();
    expect(worker.child.exitCode).toBeNull();
    expect(ledger.delivered).toBe(addresses.length);
    expect(claimedAtPause).toBeGreaterThan(connectionsAtPause);
    // Copies only of the transactions the frozen worker had open (SMTP is not exactly-once); its queued jobs were not sent.
    expectLedger(ledger, connectionsAtPause);
  });
});
