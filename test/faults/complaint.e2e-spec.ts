import { createTransport } from 'nodemailer';
import { freeLoopbackPort, startPrivateStack, type PrivateStack } from '@herald/testing';
import { arfComplaint } from '../support/report-fixtures';
import { expectLedger, printLedger, settleLedger } from '../support/fault-ledger';
import { FaultWorld, type FaultTeam } from '../support/fault-world';
import { waitUntil } from '../support/worker-process';

jest.setTimeout(150_000);

const EMAILS = 20;
const PER_EMAIL = 50;
const DOMAIN = 'inbox.fbl.test';
const address = (i: number) => `r${i}@${DOMAIN}`;

/**
 * Scenario 9 (its complaint half): 1,000 recipients delivered, then feedback-loop complaints
 * (RFC 5965 ARF reports) reach the bounce MX of the child `herald smtp` role, each sent twice as
 * feedback loops do. Pass: the complainer is suppressed before the next send (`suppressed`, never
 * at the MX); one `email.complained` per event id at the webhook receiver; the child `herald
 * metrics` role counts them (GET /stats: 0.1% after one, the rate Gmail and Yahoo ask senders to
 * stay under); the reputation guardrail leaves the domain alone at 0.3% (its limit) and pauses it
 * past it (0.4%: four complaints), after which a send from the domain is refused.
 */
describe('fault 9: feedback-loop complaints suppress the recipient and count toward the complaint-rate guardrail', () => {
  let stack: PrivateStack;
  let world: FaultWorld;

  beforeAll(async () => {
    stack = await startPrivateStack();
  });
  afterAll(async () => {
    await world?.close();
    await stack?.stop();
  });

  it('suppressed before the next send, counted once, the domain paused past 0.3%', async () => {
    const t0 = Date.now();
    const step = (what: string) => console.log(`${((Date.now() - t0) / 1000).toFixed(1)} s: ${what}`);
    world = await FaultWorld.start(stack);
    const sink = await world.sink(DOMAIN);
    const bounceMxPort = await freeLoopbackPort();
    const started = await Promise.allSettled([
      world.startRoles('complaint'),
      world.role('smtp', { BOUNCE_MX_HOST: '127.0.0.1', BOUNCE_MX_PORT: String(bounceMxPort), SMTP_HOST: '127.0.0.1', SMTP_PORTS: '0:starttls' }),
      world.role('metrics'),
    ] as const);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    const { team } = (started[0] as PromiseFulfilledResult<{ team: FaultTeam }>).value;

    const domain = () => world.call(team.token, 'GET', `/domains/${team.domainId}`);
    step('roles started');
    const accepted = await sendBatch(world, team);
    const delivered = await settleLedger({ db: world.db, accepted, sinks: [sink] });
    step('delivered');
    expect(delivered.delivered).toBe(EMAILS * PER_EMAIL);
    await waitForStats(world, team, (t) => t.delivered === EMAILS * PER_EMAIL || `${t.delivered} delivered counted`);

    step('counted');
    // The Return-Path (VERP) each recipient's copy carried: where its feedback loop reports to.
    const verpOf = new Map(sink.messages.flatMap((m) => m.recipients.map((to) => [to.toLowerCase(), m.envelopeFrom] as const)));
    const bounceMx = createTransport({ host: '127.0.0.1', port: bounceMxPort, ignoreTLS: true });
    const complain = async (i: number) => {
      const verp = verpOf.get(address(i))!;
      // Feedback loops resend a report they are not sure arrived: the second must change nothing.
      for (let copy = 0; copy < 2; copy++)
        await bounceMx.sendMail({ envelope: { from: 'fbl@isp.test', to: [verp] }, raw: arfComplaint(verp, address(i)) });
    };

    await complain(0);
    step('complaint 1');
    const suppression = await world.call(team.token, 'GET', `/suppressions/${address(0)}`);
    expect(suppression.body).toMatchObject({ email: address(0), origin: 'complaint' });
    const again = await sendTo(world, team, address(0));
    const afterOne = await waitForStats(world, team, (t) => t.complained === 1 || `${t.complained} complained counted`);
    expect(afterOne.complaint_rate).toBe(0.001);

    step('counted 1');
    await complain(1);
    await complain(2);
    await waitForStats(world, team, (t) => t.complained === 3 || `${t.complained} complained counted`);
    step('counted 3');
    // The guardrail judges a domain within a second of counting its complaints; give it two.
    await new Promise((r) => setTimeout(r, 2_000));
    expect((await domain()).body.paused).toBeNull();

    await complain(3);
    await waitUntil('the domain paused', async () => (await domain()).body.paused !== null, 30_000, 200);
    step('paused');
    const { paused } = (await domain()).body;
    console.log(`complaints: 4 of ${EMAILS * PER_EMAIL} delivered; the guardrail: ${JSON.stringify(paused)}`);
    // Sent: the 1,000 delivered and the one send to the suppressed address (sent, then suppressed).
    expect(paused).toMatchObject({ reason: 'complaint_rate', threshold: 0.003, rate: 0.004, sent: EMAILS * PER_EMAIL + 1 });
    const refused = await world.call(team.token, 'POST', '/emails', { from: team.from, to: address(10), subject: 'paused', text: 'no' });
    expect(refused.status).toBe(403);
    expect(refused.body.name).toBe('domain_paused');

    const ledger = await settleLedger({
      db: world.db,
      accepted: new Map([...accepted, ...again]),
      sinks: [sink],
      webhooks: { receiver: world.receiver, teamId: team.id },
    });
    printLedger('9 complaints (ARF at the bounce MX, each twice), then the complainer again', ledger, 0);
    expectLedger(ledger, 0);
    expect(ledger.suppressed).toBe(1);
    expect(sink.messages.flatMap((m) => m.recipients).filter((to) => to === address(0))).toHaveLength(1);
    const complained = world.receiver.at(`/${team.id}`).filter((d) => d.json.type === 'email.complained');
    expect(complained.map((d) => (d.json.data as { to: string[] }).to[0]).sort()).toEqual([0, 1, 2, 3].map(address));
    const { rows } = await world.db.query<{ address: string }>(`SELECT email AS address FROM suppressions WHERE team_id = $1 ORDER BY email`, [
      team.id,
    ]);
    expect(rows.map((r) => r.address)).toEqual([0, 1, 2, 3].map(address));
  });
});

/** One batch of EMAILS emails of PER_EMAIL recipients each: id → recipients. */
async function sendBatch(world: FaultWorld, team: FaultTeam): Promise<Map<string, string[]>> {
  const emails = Array.from({ length: EMAILS }, (_, e) => Array.from({ length: PER_EMAIL }, (_, r) => address(e * PER_EMAIL + r)));
  const { status, body } = await world.call(
    team.token,
    'POST',
    '/emails/batch',
    emails.map((to) => ({ from: team.from, to, subject: 'News', text: 'hi' })),
  );
  if (status !== 200) throw new Error(`POST /emails/batch: ${status} ${JSON.stringify(body)}`);
  return new Map((body.data as { id: string }[]).map(({ id }, e) => [id, emails[e]]));
}

async function sendTo(world: FaultWorld, team: FaultTeam, to: string): Promise<Map<string, string[]>> {
  const { status, body } = await world.call(team.token, 'POST', '/emails', { from: team.from, to, subject: 'Again', text: 'hi' });
  if (status !== 200) throw new Error(`POST /emails: ${status} ${JSON.stringify(body)}`);
  return new Map([[body.id as string, [to]]]);
}

type Totals = { delivered: number; complained: number; complaint_rate: number | null };

/** GET /stats (today, by day) until its totals pass `check`; returns them. */
async function waitForStats(world: FaultWorld, team: FaultTeam, check: (totals: Totals) => boolean | string): Promise<Totals> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { status, body } = await world.call(team.token, 'GET', '/stats?granularity=day');
    const totals = status === 200 ? (body.totals as Totals) : null;
    const verdict = totals ? check(totals) : `GET /stats: ${status}`;
    if (totals && verdict === true) return totals;
    if (Date.now() > deadline) throw new Error(`timed out waiting for the metrics role to count: ${String(verdict)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
