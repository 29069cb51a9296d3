import { startPrivateStack, type PrivateStack } from '@herald/testing';
import { expectLedger, printLedger, settleLedger } from '../support/fault-ledger';
import { emailsByKey, keyedLoad, keyMismatches } from '../support/fault-load';
import { FaultWorld } from '../support/fault-world';
import { waitUntil } from '../support/worker-process';

jest.setTimeout(150_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Scenario 15: Postgres killed (SIGKILL to the postmaster and every backend, transactions open)
 * under keyed load, and started again 3 s later on its data (a crash and restart in place, as a
 * failover to a synchronous standby looks to clients). Pass: a send is either committed and
 * delivered once (through the outbox if its publish was lost) or refused with a retryable 503,
 * never answered 200 and lost, never a 500; no key has two emails; every committed email is
 * published (nothing stays unsent).
 */
describe('fault 15: Postgres killed mid-transaction and restarted under load', () => {
  let stack: PrivateStack;
  let world: FaultWorld;

  beforeAll(async () => {
    stack = await startPrivateStack();
  });
  afterAll(async () => {
    await world?.close();
    await stack?.stop();
  });

  it('every 200 is delivered once; the rest are refused 503 and retried; nothing committed stays unsent', async () => {
    world = await FaultWorld.start(stack);
    const sink = await world.sink('inbox.pg.test');
    const { team, api } = await world.startRoles('pg');
    const load = keyedLoad(world, team, (n) => `g${n}@inbox.pg.test`);
    // The load runs a while before the kill (on a busy machine its first answers take seconds).
    await sleep(1_500);
    await waitUntil(
      'the first sends answered',
      () => load.sends.filter((s) => s.id).length >= 5 || `${load.sends.filter((s) => s.id).length} answered`,
      30_000,
    );
    const before = load.sends.filter((s) => s.id).length;
    // What the worker holds at the crash: sent to the MX perhaps, unrecordable now; the most that can go out twice.
    const holding = await world.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM email_recipients WHERE status = 'sending'`);
    const claimedAtKill = holding.rows[0].n;
    await stack.postgres.kill();
    const down = load.sends.length;
    await sleep(3_000);
    const whileDown = load.sends.filter((s) => s.id).length - before;
    await stack.postgres.restart();
    const restartedAt = Date.now();
    await world.reconnectDb();
    await sleep(2_000);
    await load.stop();

    const ledger = await settleLedger(
      { db: world.db, accepted: load.accepted(), sinks: [sink], webhooks: { receiver: world.receiver, teamId: team.id } },
      60_000,
    );
    const recoveredMs = Date.now() - restartedAt;
    printLedger(
      `15 Postgres killed for 3 s under keyed load (${claimedAtKill} recipients claimed by the worker at the kill; ${before} answered before, ${whileDown} while down, sends from #${down}; answers ${JSON.stringify(load.statuses)}, errors ${JSON.stringify(load.errors)}; settled ${recoveredMs} ms after the restart)`,
      ledger,
      claimedAtKill,
    );
    // A service fault must not end a role: a crash would show below only as mail not delivered.
    expect(world.ended()).toEqual([]);
    expect(before).toBeGreaterThan(0);
    // Never a 500: a statement on a transaction whose connection died is a 503 too (it was a 500
    // until QueryRunnerProviderAlreadyReleasedError was recognised as Postgres being unreachable).
    // On a 500, the API's error log lines (which name its cause) are in the failure's message.
    const answered500 = load.statuses[500] ?? 0;
    expect({ answered500, errorLogs: answered500 ? api.errorLogs().slice(0, 3) : [] }).toEqual({ answered500: 0, errorLogs: [] });
    // Every committed email, answered or not (a kill can eat the answer), was published and delivered.
    const stored = await emailsByKey(world, team.id);
    const unsent = await world.db.query(
      `SELECT email_id, address, status FROM email_recipients WHERE email_id = ANY($1::uuid[]) AND status <> 'delivered'`,
      [[...stored.values()].flatMap((v) => v.ids)],
    );
    expect(unsent.rows).toEqual([]);
    expect(await keyMismatches(world, team.id, load)).toEqual([]);
    // SMTP is not exactly-once: a 250 the worker could not record (Postgres died) is sent again once.
    expectLedger(ledger, claimedAtKill);
    expect(recoveredMs).toBeLessThan(65_000);
  });
});
