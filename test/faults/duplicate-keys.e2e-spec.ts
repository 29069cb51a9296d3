import { randomUUID } from 'node:crypto';
import { startPrivateStack, type PrivateStack } from '@herald/testing';
import { expectLedger, printLedger, settleLedger } from '../support/fault-ledger';
import { emailsByKey } from '../support/fault-load';
import { FaultWorld, type FaultTeam, type Reply } from '../support/fault-world';

jest.setTimeout(120_000);

const N = 50;

/**
 * Scenario 6: one Idempotency-Key sent by 50 clients at once (same payload, then two payloads
 * racing), and the keys again after Redis lost everything. Pass: exactly one email per key; every
 * 200 is that email's response; the rest are 409 (in progress, retryable; or a different payload);
 * after the loss, Postgres answers: the same response, or 409 for a different payload.
 */
describe('fault 6: duplicate idempotency keys, concurrently and after Redis lost them', () => {
  let stack: PrivateStack;
  let world: FaultWorld;

  beforeAll(async () => {
    stack = await startPrivateStack();
  });
  afterAll(async () => {
    await world?.close();
    await stack?.stop();
  });

  const send = (team: FaultTeam, key: string, to: string, subject = 'once') =>
    world.call(team.token, 'POST', '/emails', { from: team.from, to, subject, text: 'once' }, { 'idempotency-key': key }, 30_000);
  const tally = (replies: Reply[]) => {
    const counts: Record<string, number> = {};
    for (const r of replies) {
      const name = r.status === 200 ? '200' : `${r.status} ${r.body?.name ?? ''}`;
      counts[name] = (counts[name] ?? 0) + 1;
    }
    return counts;
  };

  it('one email per key; the others replay it or get 409; Postgres answers after Redis is lost', async () => {
    world = await FaultWorld.start(stack);
    const sink = await world.sink('inbox.dup.test');
    const { team } = await world.startRoles('dup');

    // Same payload, 50 at once.
    const same = randomUUID();
    const sameReplies = await Promise.all(Array.from({ length: N }, () => send(team, same, 'same@inbox.dup.test')));
    // Two payloads racing for one key.
    const raced = randomUUID();
    const racedReplies = await Promise.all(
      Array.from({ length: N }, (_, i) => send(team, raced, i % 2 ? 'odd@inbox.dup.test' : 'even@inbox.dup.test', `payload ${i % 2}`)),
    );

    const stored = await emailsByKey(world, team.id);
    expect(stored.get(same)?.ids).toHaveLength(1);
    expect(stored.get(raced)?.ids).toHaveLength(1);
    const sameId = stored.get(same)!.ids[0];
    const racedId = stored.get(raced)!.ids[0];
    for (const r of sameReplies.filter((r) => r.status === 200)) expect(r.body).toEqual({ id: sameId });
    for (const r of racedReplies.filter((r) => r.status === 200)) expect(r.body).toEqual({ id: racedId });
    const allowed = ['200', '409 concurrent_idempotent_requests', '409 invalid_idempotent_request'];
    expect(Object.keys(tally([...sameReplies, ...racedReplies])).filter((k) => !allowed.includes(k))).toEqual([]);
    expect(sameReplies.some((r) => r.status === 200)).toBe(true);
    expect(Object.keys(tally(sameReplies))).not.toContain('409 invalid_idempotent_request');
    // Which payload won the race: its twin payload is refused once the key is settled.
    const { rows } = await world.db.query<{ address: string }>(`SELECT address FROM email_recipients WHERE email_id = $1`, [racedId]);
    const winner = rows[0].address;
    const loser = winner === 'odd@inbox.dup.test' ? 'even@inbox.dup.test' : 'odd@inbox.dup.test';

    // Redis restarted empty: every key's answer now comes from Postgres.
    await stack.redis.restart();
    const afterLoss = async () => ({
      same: await send(team, same, 'same@inbox.dup.test'),
      raced: await send(team, raced, winner, `payload ${winner === 'odd@inbox.dup.test' ? 1 : 0}`),
      loser: await send(team, raced, loser, `payload ${loser === 'odd@inbox.dup.test' ? 1 : 0}`),
    });
    let after = await afterLoss();
    // The API notices the restart at its first command: a 503 (Retry-After) may come first.
    for (let i = 0; i < 20 && Object.values(after).some((r) => r.status === 503); i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      after = await afterLoss();
    }
    expect(after.same).toMatchObject({ status: 200, body: { id: sameId } });
    expect(after.raced).toMatchObject({ status: 200, body: { id: racedId } });
    expect(after.loser).toMatchObject({ status: 409, body: { name: 'invalid_idempotent_request' } });
    const storedAfter = await emailsByKey(world, team.id);
    expect([...storedAfter.values()].map((v) => v.ids.length)).toEqual([1, 1]);

    const accepted = new Map([
      [sameId, ['same@inbox.dup.test']],
      [racedId, [winner]],
    ]);
    const ledger = await settleLedger({ db: world.db, accepted, sinks: [sink], webhooks: { receiver: world.receiver, teamId: team.id } });
    printLedger(
      `6 ${N} concurrent requests per key (same payload ${JSON.stringify(tally(sameReplies))}; two payloads ${JSON.stringify(tally(racedReplies))})`,
      ledger,
      0,
    );
    expectLedger(ledger, 0);
    expect(sink.messages.flatMap((m) => m.recipients).sort()).toEqual([winner, 'same@inbox.dup.test'].sort());
  });
});
