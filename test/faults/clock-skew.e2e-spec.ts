import { startPrivateStack, type PrivateStack } from '@herald/testing';
import { expectLedger, printLedger, settleLedger } from '../support/fault-ledger';
import { sendAll } from '../support/fault-load';
import { FaultWorld } from '../support/fault-world';
import { clockOffset } from '../support/herald-process';

jest.setTimeout(150_000);

const FIVE_MINUTES = 5 * 60_000;
/** The retry delay after a deferral in this scenario: long enough that an early or late retry shows. */
const RETRY_SECONDS = 3;
/** How far a time Herald stamps may be from the real one: much less than the 5 minutes of skew. */
const STAMP_TOLERANCE_MS = 30_000;

/** The milliseconds in a UUIDv7's first 48 bits. */
const idTime = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

/**
 * Scenario 16: hosts whose clocks are 5 minutes off. The API, the worker and the webhooks role
 * each run with their wall clock shifted (the clock-offset failpoint: `Date` shifted, timers not),
 * once with the API and webhooks ahead and the worker behind, once the other way round; Postgres,
 * the MX and the webhook receiver keep the real time. Every first delivery attempt is greylisted,
 * so each email is retried once. Pass: every email is delivered once with its events at the
 * receiver once; the retry comes after its delay, not at once (a worker behind) nor 5 minutes
 * late (ahead); a send scheduled 20 s ahead is accepted and delivered after its time; ids, webhook
 * signature timestamps and DKIM `t=` are within seconds of the real time (a receiver checking the
 * Standard Webhooks 5-minute tolerance accepts them). Herald's clock follows Postgres's (ClockSync).
 */
describe('fault 16: clocks 5 minutes off on the API, the worker and the webhooks role', () => {
  let stack: PrivateStack;

  beforeAll(async () => {
    stack = await startPrivateStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it.each([
    ['API and webhooks ahead, worker behind', { api: FIVE_MINUTES, worker: -FIVE_MINUTES, webhooks: FIVE_MINUTES }],
    ['API and webhooks behind, worker ahead', { api: -FIVE_MINUTES, worker: FIVE_MINUTES, webhooks: -FIVE_MINUTES }],
  ])('%s: retries on time, scheduled sends honoured, stamps on real time, nothing lost or doubled', async (name, skew) => {
    const world = await FaultWorld.start(stack);
    try {
      const sink = (await world.sink('inbox.clock.test')).behave('greylist');
      const [team] = await Promise.all([
        world.team('clock'),
        world.api(clockOffset(skew.api)),
        world.worker({ ...clockOffset(skew.worker), DELIVERY_RETRY_SCHEDULE: String(RETRY_SECONDS) }),
        world.webhooks(clockOffset(skew.webhooks)),
      ]);

      const sentAt = Date.now();
      const accepted = await sendAll(
        world,
        team,
        Array.from({ length: 10 }, (_, n) => `c${n}@inbox.clock.test`),
      );
      const scheduledFor = Date.now() + 20_000;
      const scheduled = await world.call(team.token, 'POST', '/emails', {
        from: team.from,
        to: 'later@inbox.clock.test',
        subject: 'scheduled',
        text: 'at its time',
        scheduled_at: new Date(scheduledFor).toISOString(),
      });
      expect({ status: scheduled.status, body: scheduled.body }).toMatchObject({ status: 200 });
      accepted.set(scheduled.body.id, ['later@inbox.clock.test']);

      const ledger = await settleLedger({ db: world.db, accepted, sinks: [sink], webhooks: { receiver: world.receiver, teamId: team.id } }, 90_000);
      const gaps = sink.messages.map((m) => m.receivedAt - (sink.greylistedAt.get(m.recipients[0].toLowerCase()) ?? NaN));
      const scheduledMessage = sink.messages.find((m) => m.recipients[0] === 'later@inbox.clock.test');
      const stampErrors = {
        ids: [...accepted.keys()].filter((id) => id !== scheduled.body.id).map((id) => idTime(id) - sentAt),
        webhookTimestamps: world.receiver.at(`/${team.id}`).map((d) => Number(d.headers['webhook-timestamp']) * 1000 - d.at),
        dkim: sink.messages.map((m) => Number(/\bt=(\d+);/.exec(m.raw.toString('latin1'))?.[1]) * 1000 - m.receivedAt),
      };
      const worst = (values: number[]) => values.reduce((a, b) => (Math.abs(b) > Math.abs(a) ? b : a), 0);
      printLedger(
        `16 ${name} (retry gaps ${Math.round(Math.min(...gaps))}–${Math.round(Math.max(...gaps))} ms for a ${RETRY_SECONDS} s delay; scheduled delivered ${scheduledMessage ? scheduledMessage.receivedAt - scheduledFor : 'never'} ms after its time; worst stamp errors: ids ${worst(stampErrors.ids)} ms, webhook timestamps ${worst(stampErrors.webhookTimestamps)} ms, DKIM t= ${worst(stampErrors.dkim)} ms)`,
        ledger,
        0,
      );

      expectLedger(ledger, 0);
      // Each email was greylisted once and retried after its delay: not at once, not 5 minutes late.
      expect(gaps.length).toBe(11);
      for (const gap of gaps) {
        expect(gap).toBeGreaterThanOrEqual(RETRY_SECONDS * 1000 - 500);
        expect(gap).toBeLessThan(RETRY_SECONDS * 1000 + 20_000);
      }
      expect(scheduledMessage!.receivedAt).toBeGreaterThanOrEqual(scheduledFor - 1_000);
      for (const error of [...stampErrors.ids, ...stampErrors.webhookTimestamps, ...stampErrors.dkim]) {
        expect(Math.abs(error)).toBeLessThan(STAMP_TOLERANCE_MS);
      }
    } finally {
      await world.close();
    }
  });
});
