import { startPrivateStack, type PrivateStack } from '@herald/testing';
import { expectLedger, printLedger, settleLedger } from '../support/fault-ledger';
import { sendAll } from '../support/fault-load';
import { FaultWorld } from '../support/fault-world';
import { waitUntil } from '../support/worker-process';

jest.setTimeout(150_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Recipients claimed by a worker and not yet recorded. */
const sending = async (world: FaultWorld, ids: string[]) =>
  new Set(
    (
      await world.db.query<{ address: string }>(`SELECT address FROM email_recipients WHERE email_id = ANY($1::uuid[]) AND status = 'sending'`, [ids])
    ).rows.map((r) => r.address),
  );

type Sink = { messages: { recipients: string[] }[] };

/** In flight at a kill: claimed and unrecorded by the dead worker, and already at an MX. */
const atTheMx = (claimed: Set<string>, sinks: Sink[]) =>
  sinks.flatMap((sink) => sink.messages.flatMap((m) => m.recipients)).filter((a) => claimed.has(a)).length;

/**
 * What the dead worker's open transactions left at the MXes once their replies are all out: at
 * least `minMs` (the MX's own delay), then until the count holds still for a second (a busy
 * machine answers late, and a transaction answered after the count would be a duplicate outside
 * the bound).
 */
async function settledAtTheMx(claimed: Set<string>, sinks: Sink[], minMs: number): Promise<number> {
  await sleep(minMs);
  let count = atTheMx(claimed, sinks);
  for (let still = 0; still < 1_000; still += 250) {
    await sleep(250);
    const now = atTheMx(claimed, sinks);
    if (now !== count) [count, still] = [now, -250];
  }
  return count;
}

/**
 * Scenario 1: kill -9 of an outbound worker mid-delivery, on a private Postgres, Redis and NATS.
 * SMTP cannot be exactly-once: a message whose data the MX has taken, and whose 250 Herald has
 * not recorded, is sent again after the dead worker's claim runs out. The bound: duplicates ≤
 * the messages in that state at the kill; nothing lost; one webhook per event.
 */
describe('fault 1: kill -9 a worker mid-delivery', () => {
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

  it('during DATA: the MX holds the final reply, the worker dies', async () => {
    world = await FaultWorld.start(stack);
    const { team, worker } = await world.startRoles('data');
    const slow = (await world.sink('slow.data.test')).behave({ delayMs: 2_500 });
    const fast = await world.sink('fast.data.test');
    const addresses = [
      ...Array.from({ length: 20 }, (_, i) => `s${i}@slow.data.test`),
      ...Array.from({ length: 20 }, (_, i) => `f${i}@fast.data.test`),
    ];
    const accepted = await sendAll(world, team, addresses);
    const ids = [...accepted.keys()];
    // Ten transactions to the slow MX have sent their data and wait for its reply.
    await waitUntil('ten transactions open at the slow MX', () => slow.connections >= 10 || `${slow.connections} connections`, 30_000);
    await sleep(500);
    worker.child.kill('SIGKILL');
    await worker.exited;
    const claimed = await sending(world, ids);
    // The slow MX still answers the open transactions: it delivers what it took (the pessimistic
    // MX). The fast MX may hold some too: taken, answered, and not yet recorded at the kill.
    const inFlight = await settledAtTheMx(claimed, [slow, fast], 2_500);
    slow.behave('accept');
    await world.worker();

    const ledger = await settleLedger({ db: world.db, accepted, sinks: [slow, fast], webhooks: { receiver: world.receiver, teamId: team.id } });
    printLedger(`1a kill -9 during DATA (${inFlight} in flight)`, ledger, inFlight);
    expect(inFlight).toBeGreaterThan(0);
    expectLedger(ledger, inFlight);
    expect(ledger.delivered).toBe(addresses.length);
  });

  it('after the remote 250, before Herald records it: the worker is cut from Postgres, then killed', async () => {
    world = await FaultWorld.start(stack);
    const { team, worker } = await world.startRoles('acked');
    const sink = (await world.sink('mx.acked.test')).behave({ delayMs: 1_500 });
    const addresses = Array.from({ length: 30 }, (_, i) => `a${i}@mx.acked.test`);
    const accepted = await sendAll(world, team, addresses);
    const ids = [...accepted.keys()];
    await waitUntil('ten transactions open at the MX', () => sink.connections >= 10 || `${sink.connections} connections`, 30_000);
    // While the MX holds its replies, the worker loses Postgres: the 250s arrive and cannot be recorded.
    world.proxies['worker.postgres'].set('blackhole');
    const before = sink.received;
    await waitUntil('the open transactions answered 250', () => sink.received >= before + 10 || `${sink.received - before} answered`, 10_000);
    await sleep(300);
    worker.child.kill('SIGKILL');
    await worker.exited;
    // The host is gone with its connections: what the cut held (its records) never reaches Postgres.
    world.proxies['worker.postgres'].reset();
    const claimed = await sending(world, ids);
    // The MX answers what it has taken, the dead worker or not (the pessimistic MX).
    const inFlight = await settledAtTheMx(claimed, [sink], 1_600);
    world.proxies['worker.postgres'].heal();
    sink.behave('accept');
    await world.worker();

    const ledger = await settleLedger({ db: world.db, accepted, sinks: [sink], webhooks: { receiver: world.receiver, teamId: team.id } });
    printLedger(`1b kill -9 after the remote 250, before the record (${inFlight} at the MX, unrecorded)`, ledger, inFlight);
    expect(inFlight).toBeGreaterThanOrEqual(10);
    expectLedger(ledger, inFlight);
    expect(ledger.delivered).toBe(addresses.length);
  });
});
