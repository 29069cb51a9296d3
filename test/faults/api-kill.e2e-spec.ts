import { randomInt, randomUUID } from 'node:crypto';
import { startPrivateStack, type PrivateStack } from '@herald/testing';
import { emailsByKey, keyedLoad, keyMismatches } from '../support/fault-load';
import { expectLedger, printLedger, settleLedger } from '../support/fault-ledger';
import { FaultWorld, request } from '../support/fault-world';
import { CRASH_AFTER_COMMIT } from '../support/herald-process';

jest.setTimeout(150_000);

const KILLS = 5;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Scenario 2: kill -9 of the API between the Postgres commit and the HTTP response, the client
 * retrying with the same Idempotency-Key. The pass: one email per key, and the retry answered
 * with the response the dead process had saved.
 */
describe('fault 2: kill -9 the API between commit and response', () => {
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

  it('at the exact point (the crash-after-commit failpoint): the retry gets the saved response, one email', async () => {
    world = await FaultWorld.start(stack);
    const sink = await world.sink('inbox.commit.test');
    // The API that dies answers on its own address; the retry reaches a surviving one (behind a load balancer, say).
    const [{ team }, doomed] = await Promise.all([world.startRoles('commit'), world.extraApi(CRASH_AFTER_COMMIT)]);
    const key = randomUUID();
    const body = { from: team.from, to: 'jane@inbox.commit.test', subject: 'Once', text: 'exactly once' };
    const first = await request(doomed.url, team.token, 'POST', '/emails', body, { 'idempotency-key': key });
    expect(first.status).toBe(0);
    expect((await doomed.exited)[1]).toBe('SIGKILL');
    const stored = await emailsByKey(world, team.id);
    expect(stored.get(key)?.ids).toHaveLength(1);

    // The dead request's marker still holds the key in Redis, but its request committed: the
    // retry is answered at once from Postgres with the saved response, not run again.
    const retry = await world.call(team.token, 'POST', '/emails', body, { 'idempotency-key': key });
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual({ id: stored.get(key)!.ids[0] });
    const again = await world.call(team.token, 'POST', '/emails', body, { 'idempotency-key': key });
    expect(again.body).toEqual(retry.body);

    const accepted = new Map([[retry.body.id as string, [body.to]]]);
    const ledger = await settleLedger({ db: world.db, accepted, sinks: [sink], webhooks: { receiver: world.receiver, teamId: team.id } });
    printLedger('2a kill -9 between commit and response (failpoint), retried with the key', ledger, 0);
    expectLedger(ledger, 0);
    expect((await emailsByKey(world, team.id)).get(key)?.ids).toHaveLength(1);
  });

  it(`at random points: ${KILLS} kills under keyed load, every key one email, every retry its saved response`, async () => {
    world = await FaultWorld.start(stack);
    const sink = await world.sink('inbox.random.test');
    const started = await world.startRoles('random');
    const team = started.team;
    let api = started.api;
    const load = keyedLoad(world, team, (n) => `r${n}@inbox.random.test`);
    for (let kill = 0; kill < KILLS; kill++) {
      await sleep(randomInt(300, 1_200));
      api.child.kill('SIGKILL');
      await api.exited;
      // The markers of the requests the kill cut off die at their deadline (2 s here), by then
      // usually before the new API answers: their retries proceed, or replay a commit.
      api = await world.api();
    }
    await load.stop();

    // Keys whose email was committed before the attempt that got the 200: that 200 was the saved
    // response of a request a kill cut off between its commit and its answer.
    const stored = await emailsByKey(world, team.id);
    const replayed = load.sends.filter((s) => s.id && stored.get(s.key)!.createdAt.getTime() < s.answeredAttemptAt!).length;
    const wrong = await keyMismatches(world, team.id, load);
    const ledger = await settleLedger({
      db: world.db,
      accepted: load.accepted(),
      sinks: [sink],
      webhooks: { receiver: world.receiver, teamId: team.id },
    });
    printLedger(`2b ${KILLS} random kills of the API under keyed load (answers ${JSON.stringify(load.statuses)}, ${replayed} replayed)`, ledger, 0);
    expect(wrong).toEqual([]);
    // Refused while the API is down, 200 after; a retry that beat a dead request's deadline gets 409 (retryable).
    expect(Object.keys(load.statuses).filter((status) => !['0', '200', '409'].includes(status))).toEqual([]);
    expectLedger(ledger, 0);
  });
});
