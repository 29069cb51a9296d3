import { startPrivateStack, type PrivateStack } from '@herald/testing';
import { expectLedger, printLedger, settleLedger } from '../support/fault-ledger';
import { sendAll } from '../support/fault-load';
import { FaultWorld } from '../support/fault-world';
import { waitUntil } from '../support/worker-process';

jest.setTimeout(150_000);

/** Seconds: the retry schedule and the expiry, compressed from minutes-to-hours and 72 hours. */
const RETRY_SCHEDULE = '1,2';
const EXPIRY_SECONDS = 10;

/**
 * Scenario 8, its expiry (the retry schedule compressed): an MX that answers 451 to every message
 * for good, beside a healthy one, and the worker killed while the deferred emails wait for their
 * next attempt. Pass: the healthy mail is delivered once; each deferred email is retried on the
 * schedule (by the new worker once the dead one's claims run out) until DELIVERY_EXPIRY_SECONDS
 * after it was accepted, then bounces (Transient, the MX's last 451 as its diagnostic). The customer
 * hears it through one `email.delivery_delayed` and one `email.bounced` per email, each delivered to
 * the webhook once, and the MX never took a copy. Herald sends no DSN message: the envelope sender
 * is Herald's own return path, and the webhook is how an API or relay customer hears of a bounce.
 */
describe('fault 8: a destination deferring past the expiry', () => {
  let stack: PrivateStack;
  let world: FaultWorld;

  beforeAll(async () => {
    stack = await startPrivateStack();
  });
  afterAll(async () => {
    await world?.close();
    await stack?.stop();
  });

  it('retries through a worker kill, then bounces each email once with one webhook per event', async () => {
    world = await FaultWorld.start(stack, { DELIVERY_RETRY_SCHEDULE: RETRY_SCHEDULE, DELIVERY_EXPIRY_SECONDS: String(EXPIRY_SECONDS) });
    const deferring = (await world.sink('deferring.expiry.test')).behave({ defer: '451 4.7.1 try again later' });
    const healthy = await world.sink('healthy.expiry.test');
    const { team, worker } = await world.startRoles('expiry');

    const late = Array.from({ length: 10 }, (_, i) => `late${i}@deferring.expiry.test`);
    const fine = Array.from({ length: 5 }, (_, i) => `fine${i}@healthy.expiry.test`);
    const acceptedAt = Date.now();
    const accepted = await sendAll(world, team, [...late, ...fine]);
    await waitUntil('the healthy mail delivered', () => healthy.messages.length >= fine.length, 30_000, 100);
    await waitUntil(
      'every deferred email attempted',
      async () => {
        const { rows } = await world.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM email_recipients WHERE address LIKE 'late%' AND attempts >= 1 AND status = 'deferred'`,
        );
        return rows[0].n === late.length || `${rows[0].n} deferred`;
      },
      30_000,
      100,
    );
    await worker.stop('SIGKILL');
    await world.worker();

    const ledger = await settleLedger(
      { db: world.db, accepted, sinks: [deferring, healthy], webhooks: { receiver: world.receiver, teamId: team.id } },
      60_000,
    );
    printLedger('8 an MX deferring every message past the expiry (10 s here), the worker killed between attempts', ledger, 0);
    expectLedger(ledger, 0);
    expect(ledger.delivered).toBe(fine.length);
    expect(ledger.bounced).toBe(late.length);
    expect(deferring.messages).toEqual([]);
    expect(
      healthy.messages
        .map((m) => m.recipients)
        .flat()
        .sort(),
    ).toEqual([...fine].sort());

    const recipients = await world.db.query<{ address: string; attempts: number; status: string; bounced_at: Date }>(
      `SELECT r.address, r.attempts, r.status, e.created_at AS bounced_at
         FROM email_recipients r JOIN email_events e ON e.email_id = r.email_id AND e.type = 'email.bounced'
        WHERE r.address LIKE 'late%'`,
    );
    expect(recipients.rows).toHaveLength(late.length);
    for (const r of recipients.rows) {
      expect(r.status).toBe('bounced');
      // Retried on the schedule until the expiry: the first attempt, then every 1–2 s for 10 s.
      expect(r.attempts).toBeGreaterThanOrEqual(3);
      expect(r.bounced_at.getTime() - acceptedAt).toBeGreaterThanOrEqual(EXPIRY_SECONDS * 1000 - 1_000);
    }

    const deliveries = world.receiver.at(`/${team.id}`).filter((d) => typeof d.answered === 'number' && d.answered < 300);
    const ofType = (type: string) => deliveries.filter((d) => d.json.type === type);
    const lateIds = [...accepted].filter(([, to]) => to[0].startsWith('late')).map(([id]) => id);
    const perEmail = (type: string) => new Map(lateIds.map((id) => [id, ofType(type).filter((d) => d.json.data.email_id === id).length]));
    expect([...perEmail('email.bounced').values()]).toEqual(lateIds.map(() => 1));
    expect([...perEmail('email.delivery_delayed').values()]).toEqual(lateIds.map(() => 1));
    for (const d of ofType('email.bounced')) {
      const bounce = d.json.data.bounce as { type: string; subType: string; diagnosticCode: string[] };
      expect(bounce).toMatchObject({ type: 'Transient', subType: 'General' });
      expect(bounce.diagnosticCode[0]).toContain('451');
    }
  });
});
