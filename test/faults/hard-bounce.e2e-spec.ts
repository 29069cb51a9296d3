import { startPrivateStack, type PrivateStack } from '@herald/testing';
import { expectLedger, printLedger, settleLedger } from '../support/fault-ledger';
import { sendAll } from '../support/fault-load';
import { FaultWorld } from '../support/fault-world';
import { waitUntil } from '../support/worker-process';

jest.setTimeout(150_000);

/**
 * Scenario 9 (its hard-bounce half): an MX refuses some recipients with 550 at RCPT. Pass: each
 * bounces once, with one `email.bounced` at the webhook receiver; the address is suppressed before
 * the next send, which never reaches the MX (`suppressed`, with its `email.suppressed`); the
 * other recipients are delivered.
 */
describe('fault 9: hard bounces suppress the address before the next send', () => {
  let stack: PrivateStack;
  let world: FaultWorld;

  beforeAll(async () => {
    stack = await startPrivateStack();
  });
  afterAll(async () => {
    await world?.close();
    await stack?.stop();
  });

  it('bounced once, suppressed next time, the rest delivered', async () => {
    world = await FaultWorld.start(stack);
    const sink = await world.sink('inbox.bounce.test');
    const gone = Array.from({ length: 4 }, (_, i) => `gone${i}@inbox.bounce.test`);
    for (const address of gone) sink.recipientRule(address, { reject: '550 5.1.1 no such user' });
    const { team } = await world.startRoles('bounce');
    const live = Array.from({ length: 6 }, (_, i) => `live${i}@inbox.bounce.test`);

    const first = await sendAll(world, team, [...gone, ...live]);
    await settleLedger({ db: world.db, accepted: first, sinks: [sink] });
    await waitUntil(
      'the bounced addresses suppressed',
      async () => {
        const { rows } = await world.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM suppressions WHERE team_id = $1`, [team.id]);
        return rows[0].n === gone.length || `${rows[0].n} suppressed`;
      },
      30_000,
      250,
    );
    const second = await sendAll(world, team, gone);
    const accepted = new Map([...first, ...second]);
    const ledger = await settleLedger({ db: world.db, accepted, sinks: [sink], webhooks: { receiver: world.receiver, teamId: team.id } });
    printLedger('9 hard bounces (550 at RCPT), then the same addresses again', ledger, 0);
    expectLedger(ledger, 0);
    expect(ledger.bounced).toBe(gone.length);
    expect(ledger.suppressed).toBe(gone.length);
    expect(ledger.delivered).toBe(live.length);
    expect(sink.messages.flatMap((m) => m.recipients).filter((to) => to.startsWith('gone'))).toEqual([]);
    const events = world.receiver.at(`/${team.id}`).map((d) => d.json.type);
    expect(events.filter((t) => t === 'email.bounced')).toHaveLength(gone.length);
    expect(events.filter((t) => t === 'email.suppressed')).toHaveLength(gone.length);
  });
});
