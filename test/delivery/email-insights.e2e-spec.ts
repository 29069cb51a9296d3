import { randomUUID } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { CreateEmailOptions } from 'resend';
import { DomainsRepository } from '@herald/domains';
import type { MxSink } from '@herald/testing';
import { call, markVerified, type TestTeam } from '../support/api-harness';
import { DeliveryWorld } from '../support/delivery-world';
import { smtpSubmissionsOf } from '../support/smtp-submissions';

const TEXT = 'Hello Jane, here is what happened on your Acme account this week: three new projects and two comments.';
/** Links to the sending domain's organization (teamN.acme.test sends, acme.test is linked). */
const CLEAN_HTML = `<p>${TEXT}</p><p><a href="https://acme.test/account">Open your account</a></p><img src="https://acme.test/logo.png" alt="Acme">`;

/**
 * Per-email deliverability insights end to end: emails sent with the `resend` SDK, delivered by the
 * worker to local MX sinks (one with STARTTLS, one without, rules that refuse or defer), DMARC
 * published in the local DNS server, and GET /emails/:id/insights over plain HTTP. A crafted email
 * per rule gets exactly that rule's insight; a clean one gets none; an email keeps its findings.
 */
describe('email insights (resend SDK → api → worker → MX sinks, GET /emails/:id/insights)', () => {
  let world: DeliveryWorld;
  let secure: MxSink;
  let plain: MxSink;
  let acme: TestTeam;

  beforeAll(async () => {
    world = await DeliveryWorld.start();
    secure = await world.sink();
    plain = await world.sink({ starttls: false });
    for (const domain of ['inbox.test', 'gmial.com']) world.route(domain, { host: `mx.${domain}`, address: secure.host });
    world.route('plain.test', { host: 'mx.plain.test', address: plain.host });
    secure.recipientRule('nobody@inbox.test', { reject: '550 5.1.1 no such user' });
    secure.recipientRule('later@inbox.test', { defer: '451 4.7.1 try again later' });
    acme = await world.team();
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  const clean = (team: TestTeam, patch: Partial<CreateEmailOptions> = {}): CreateEmailOptions =>
    ({
      from: `Acme <hello@${team.domain}>`,
      to: 'jane@inbox.test',
      subject: 'Your week at Acme',
      html: CLEAN_HTML,
      text: TEXT,
      ...patch,
    }) as CreateEmailOptions;

  async function send(team: TestTeam, email: CreateEmailOptions): Promise<string> {
    const { data, error } = await team.resend.emails.send(email);
    expect(error).toBeNull();
    return data!.id;
  }

  async function insightsOf(
    team: TestTeam,
    id: string,
  ): Promise<{ object: string; data: { id: string; severity: string; found: string; fix: string }[] }> {
    const response = await call(world.api.url, team.token, 'GET', `/emails/${id}/insights`);
    expect(response.status).toBe(200);
    return response.body;
  }
  const idsOf = async (team: TestTeam, id: string) => (await insightsOf(team, id)).data.map((i) => i.id);

  it('finds nothing in a clean email delivered over TLS, and answers the same every time', async () => {
    const id = await send(acme, clean(acme));
    const events = await world.waitForEvent(id, 'email.delivered');
    expect(events.find((e) => e.type === 'email.delivered')!.data.delivery).toEqual({ mx: 'mx.inbox.test', tls: true });
    expect(await insightsOf(acme, id)).toEqual({ object: 'list', data: [] });
    expect(await insightsOf(acme, id)).toEqual({ object: 'list', data: [] });
  });

  const crafted: [string, (team: TestTeam) => Partial<CreateEmailOptions>][] = [
    ['no-reply-sender', (t) => ({ from: `Acme <no-reply@${t.domain}>` })],
    ['link-domain-mismatch', () => ({ html: `<p>${TEXT}</p><a href="https://shop.example.net/deal">Deal</a>` })],
    ['youtu-be-link', () => ({ html: `<p>${TEXT}</p><a href="https://youtu.be/dQw4w9WgXcQ">Watch</a>` })],
    ['ip-address-link', () => ({ html: `<p>${TEXT}</p><a href="http://192.0.2.10/login">Log in</a>` })],
    ['url-shortener-link', () => ({ html: `<p>${TEXT}</p><a href="https://bit.ly/3xYz">Read more</a>` })],
    ['plain-text-missing', () => ({ text: undefined })],
    ['gmail-clipping', () => ({ html: `<p>${TEXT}</p><div>${'<span style="color:#333">x</span>'.repeat(3_500)}</div>` })],
    ['image-missing-alt', () => ({ html: `${CLEAN_HTML}<img src="https://acme.test/chart.png">` })],
    ['image-only', () => ({ html: '<a href="https://acme.test/sale"><img src="https://acme.test/sale.png" alt="Sale: 50% off"></a>' })],
    ['list-unsubscribe-missing', () => ({ html: `${CLEAN_HTML}<a href="https://acme.test/unsubscribe">Unsubscribe</a>` })],
    ['role-recipient', () => ({ to: 'postmaster@inbox.test' })],
    ['recipient-domain-typo', () => ({ to: 'jane@gmial.com' })],
  ];

  it.each(crafted)('%s: a crafted email gets exactly that insight', async (rule, patch) => {
    const id = await send(acme, clean(acme, patch(acme)));
    const insights = await insightsOf(acme, id);
    expect(insights.data.map((i) => i.id)).toEqual([rule]);
    expect(insights.data[0]).toEqual({
      id: rule,
      severity: expect.stringMatching(/^(attention|improvement)$/),
      found: expect.any(String),
      fix: expect.any(String),
    });
  });

  it('recipient-history: a recipient suppressed before the email was sent', async () => {
    const added = await call(world.api.url, acme.token, 'POST', '/suppressions', { email: 'gone@inbox.test' });
    expect(added.status).toBe(200);
    const id = await send(acme, clean(acme, { to: 'gone@inbox.test' }));
    const [insight] = (await insightsOf(acme, id)).data;
    expect((await insightsOf(acme, id)).data.map((i) => i.id)).toEqual(['recipient-history']);
    expect(insight.found).toMatch(/^A recipient has earlier trouble: gone@inbox\.test was suppressed by hand on \d{4}-\d\d-\d\d\.$/);
  });

  it('reads DMARC from DNS: none published, p=none, and the organization record for a subdomain', async () => {
    const missing = await world.api.team();
    expect(await idsOf(missing, await send(missing, clean(missing)))).toEqual(['dmarc-missing']);
    const monitoring = await world.api.team();
    world.dns.set(`_dmarc.${monitoring.domain}`, 'TXT', ['v=DMARC1; p=none; rua=mailto:dmarc@acme.test']);
    const insights = await insightsOf(monitoring, await send(monitoring, clean(monitoring)));
    expect(insights.data).toEqual([
      {
        id: 'dmarc-policy-none',
        severity: 'improvement',
        found: `The DMARC policy for ${monitoring.domain} is p=none: "v=DMARC1; p=none; rua=mailto:dmarc@acme.test".`,
        fix: expect.stringContaining('p=quarantine'),
      },
    ]);
    const organization = `org-${randomUUID().slice(0, 8)}.test`;
    const sub = await world.api.team({ domain: `mail.${organization}` });
    world.dns.set(`_dmarc.${organization}`, 'TXT', ['v=DMARC1; p=quarantine; sp=reject']);
    const html = `<p>${TEXT}</p><a href="https://${organization}/account">Account</a>`;
    expect(await idsOf(sub, await send(sub, clean(sub, { html })))).toEqual([]);
  });

  it('root-domain-sender: an email from the root domain', async () => {
    const organization = `root-${randomUUID().slice(0, 8)}.test`;
    const root = await world.api.team({ domain: organization });
    world.dns.set(`_dmarc.${organization}`, 'TXT', ['v=DMARC1; p=reject']);
    const html = `<p>${TEXT}</p><a href="https://${organization}/account">Account</a>`;
    expect(await idsOf(root, await send(root, clean(root, { html })))).toEqual(['root-domain-sender']);
  });

  it('tracking: on without a verified subdomain, on for a transactional email, and an email keeps its findings', async () => {
    const team = await world.team();
    const before = await send(team, clean(team));
    expect(await idsOf(team, before)).toEqual([]);
    expect((await team.resend.domains.update({ id: team.domainId, clickTracking: true, trackingSubdomain: 'links' })).error).toBeNull();
    expect(await idsOf(team, await send(team, clean(team)))).toEqual(['click-tracking-subdomain']);
    // The email sent before the change keeps what was found when it was first checked.
    expect(await idsOf(team, before)).toEqual([]);
    await markVerified(world.api.app.get(DomainsRepository), team.domainId);
    expect(await idsOf(team, await send(team, clean(team, { subject: 'Reset your password' })))).toEqual(['tracking-on-transactional']);
    expect((await team.resend.domains.update({ id: team.domainId, clickTracking: false, openTracking: true })).error).toBeNull();
    const domain = await world.api.app.get(DomainsRepository).get(team.teamId, team.domainId);
    await world.api.app.get(DomainsRepository).update(team.teamId, team.domainId, {
      records: domain!.records.map((r) => (r.record === 'Tracking' ? { ...r, status: 'pending' as const } : r)),
    });
    expect(await idsOf(team, await send(team, clean(team)))).toEqual(['open-tracking-subdomain']);
  });

  it('reads the headers of a message relayed over SMTP: one-click List-Unsubscribe on bulk mail', async () => {
    const smtp = smtpSubmissionsOf(world.api.app);
    const auth = await smtp.authenticate('herald', acme.token);
    if (!auth.ok) throw new Error('authentication failed');
    const relay = async (headers: Record<string, string>) => {
      const raw = await new MailComposer({
        from: `Acme <${acme.from()}>`,
        to: 'jane@inbox.test',
        subject: 'Acme news',
        text: `${TEXT} Unsubscribe: https://acme.test/unsubscribe`,
        html: `${CLEAN_HTML}<a href="https://acme.test/unsubscribe">Unsubscribe</a>`,
        headers,
      })
        .compile()
        .build();
      const result = await smtp.submit(auth.principal, { mailFrom: acme.from(), rcptTo: ['jane@inbox.test'] }, raw);
      if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.reply)}`);
      return result.id;
    };
    expect(await idsOf(acme, await relay({}))).toEqual(['list-unsubscribe-missing']);
    const oneClick = { 'List-Unsubscribe': '<https://acme.test/u/1>, <mailto:u@acme.test>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
    expect(await idsOf(acme, await relay(oneClick))).toEqual([]);
  });

  it('bounced: the recipient server refused the address', async () => {
    const id = await send(acme, clean(acme, { to: 'nobody@inbox.test' }));
    await world.waitForEvent(id, 'email.bounced');
    const insights = await insightsOf(acme, id);
    expect(insights.data.map((i) => i.id)).toEqual(['bounced']);
    expect(insights.data[0].found).toBe('The email bounced: nobody@inbox.test: Permanent NoEmail bounce (smtp; 550 5.1.1 no such user).');
  });

  it('deferred-by-provider: the recipient server deferred it, with its reply', async () => {
    const id = await send(acme, clean(acme, { to: 'later@inbox.test' }));
    await world.waitForEvent(id, 'email.delivery_delayed');
    const insights = await insightsOf(acme, id);
    expect(insights.data.map((i) => i.id)).toEqual(['deferred-by-provider']);
    expect(insights.data[0].found).toBe('Delivery to later@inbox.test was deferred by mx.inbox.test: "451 4.7.1 try again later".');
    expect(insights.data[0].fix).toMatch(/greylisting/);
  });

  it('delivered-without-tls: the receiving server offered no STARTTLS', async () => {
    const id = await send(acme, clean(acme, { to: 'jane@plain.test' }));
    const events = await world.waitForEvent(id, 'email.delivered');
    expect(events.find((e) => e.type === 'email.delivered')!.data.delivery).toEqual({ mx: 'mx.plain.test', tls: false });
    expect(await idsOf(acme, id)).toEqual(['delivered-without-tls']);
  });

  it('answers precise errors: a bad id, an unknown email, another team’s email, no key', async () => {
    const id = await send(acme, clean(acme));
    const other = await world.api.team();
    expect(await call(world.api.url, acme.token, 'GET', '/emails/not-an-id/insights')).toMatchObject({
      status: 422,
      body: { statusCode: 422, name: 'invalid_parameter', message: 'The `id` must be a valid UUID.' },
    });
    for (const [token, emailId] of [
      [acme.token, randomUUID()],
      [other.token, id],
    ])
      expect(await call(world.api.url, token, 'GET', `/emails/${emailId}/insights`)).toMatchObject({
        status: 404,
        body: { statusCode: 404, name: 'not_found', message: 'Email not found' },
      });
    expect((await call(world.api.url, null, 'GET', `/emails/${id}/insights`)).status).toBe(401);
  });
});
