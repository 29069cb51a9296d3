import { randomInt, randomUUID } from 'node:crypto';
import { startPrivateStack, type PrivateStack } from '@herald/testing';
import { expectLedger, printLedger, settleLedger } from '../support/fault-ledger';
import { FaultWorld, request } from '../support/fault-world';
import { startApiProcess } from '../support/herald-process';

jest.setTimeout(90_000);

const KILLS = 5;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The emails stored under each idempotency key: exactly one each is the promise. */
async function emailsByKey(world: FaultWorld, teamId: string): Promise<Map<string, string[]>> {
  const { rows } = await world.db.query<{ idempotency_key: string; ids: string[] }>(
    `SELECT idempotency_key, array_agg(id::text) AS ids FROM emails WHERE team_id = $1 AND idempotency_key IS NOT NULL GROUP BY idempotency_key`,
    [teamId],
  );
  return new Map(rows.map((r) => [r.idempotency_key, r.ids]));
}

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
    const [{ team }, doomed] = await Promise.all([world.startRoles('commit'), startApiProcess(world.env('api', { HERALD_FAILPOINT: 'crash-after-commit' }))]);
    const key = randomUUID();
    const body = { from: team.from, to: 'jane@inbox.commit.test', subject: 'Once', text: 'exactly once' };
    const first = await request(doomed.url, team.token, 'POST', '/emails', body, { 'idempotency-key': key });
    expect(first.status).toBe(0);
    expect((await doomed.exited)[1]).toBe('SIGKILL');
    const stored = await emailsByKey(world, team.id);
    expect(stored.get(key)).toHaveLength(1);

    // The dead request's marker still holds the key: the retry is told to wait, not run again.
    const early = await world.call(team.token, 'POST', '/emails', body, { 'idempotency-key': key });
    expect({ status: early.status, name: early.body?.name }).toEqual({ status: 409, name: 'concurrent_idempotent_requests' });
    // Compressed time: the marker's 60 s run out now; the retry is answered from Postgres.
    expect(await world.expireInFlightMarkers()).toBe(1);
    await sleep(5);
    const retry = await world.call(team.token, 'POST', '/emails', body, { 'idempotency-key': key });
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual({ id: stored.get(key)![0] });
    const again = await world.call(team.token, 'POST', '/emails', body, { 'idempotency-key': key });
    expect(again.body).toEqual(retry.body);

    const accepted = new Map([[retry.body.id as string, [body.to]]]);
    const ledger = await settleLedger({ db: world.db, accepted, sinks: [sink], webhooks: { receiver: world.receiver, teamId: team.id } });
    printLedger('2a kill -9 between commit and response (failpoint), retried with the key', ledger, 0);
    expectLedger(ledger, 0);
    expect((await emailsByKey(world, team.id)).get(key)).toHaveLength(1);
  });

  it(`at random points: ${KILLS} kills under keyed load, every key one email, every retry its saved response`, async () => {
    world = await FaultWorld.start(stack);
    const sink = await world.sink('inbox.random.test');
    const started = await world.startRoles('random');
    const team = started.team;
    let api = started.api;
    const lastAttemptAt = new Map<string, number>();
    const answered = new Map<string, string>(); // key -> id answered 200
    const seen = { requests: 0, dropped: 0, conflicts: 0, unavailable: 0, retried: 0 };
    const addressOf = new Map<string, string>();
    let loading = true;
    let sequence = 0;
    const client = async () => {
      while (loading) {
        const key = randomUUID();
        const to = `r${sequence++}@inbox.random.test`;
        addressOf.set(key, to);
        const body = { from: team.from, to, subject: key, text: 'once' };
        for (let attempt = 0; ; attempt++) {
          if (attempt > 0) seen.retried++;
          seen.requests++;
          lastAttemptAt.set(key, Date.now());
          const { status, body: reply } = await world.call(team.token, 'POST', '/emails', body, { 'idempotency-key': key }, 5_000);
          if (status === 200) {
            answered.set(key, reply.id);
            break;
          }
          if (status === 0) seen.dropped++;
          else if (status === 409 && reply?.name === 'concurrent_idempotent_requests') seen.conflicts++;
          else if (status === 503) seen.unavailable++;
          else throw new Error(`unexpected ${status} ${JSON.stringify(reply)}`);
          await sleep(status === 0 ? 200 : 50);
        }
      }
    };
    const clients = Array.from({ length: 4 }, () => client());
    for (let kill = 0; kill < KILLS; kill++) {
      await sleep(randomInt(300, 1_200));
      api.child.kill('SIGKILL');
      await api.exited;
      await world.expireInFlightMarkers();
      api = await world.api();
    }
    loading = false;
    await Promise.all(clients);

    const stored = await emailsByKey(world, team.id);
    // Keys whose email was committed before the attempt that got the 200: that 200 was the saved response of a request a kill cut off.
    const { rows: created } = await world.db.query<{ idempotency_key: string; at: Date }>(
      `SELECT idempotency_key, created_at AS at FROM emails WHERE team_id = $1 AND idempotency_key IS NOT NULL`,
      [team.id],
    );
    const replayed = created.filter((r) => r.at.getTime() < lastAttemptAt.get(r.idempotency_key)!).length;
    const wrong = [...answered].filter(([key, id]) => stored.get(key)?.length !== 1 || stored.get(key)![0] !== id);
    const unanswered = [...stored.keys()].filter((key) => !answered.has(key));
    const accepted = new Map([...answered].map(([key, id]) => [id, [addressOf.get(key)!]]));
    const ledger = await settleLedger({ db: world.db, accepted, sinks: [sink], webhooks: { receiver: world.receiver, teamId: team.id } });
    printLedger(`2b ${KILLS} random kills of the API under keyed load (${JSON.stringify({ ...seen, replayed })})`, ledger, 0);
    expect(wrong.map(([key, id]) => ({ key, answered: id, stored: stored.get(key) }))).toEqual([]);
    expect(unanswered).toEqual([]);
    expect(seen.dropped).toBeGreaterThan(0);
    expectLedger(ledger, 0);
  });
});
