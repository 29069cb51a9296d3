import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplicationContext } from '@nestjs/common';
import { simpleParser } from 'mailparser';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { Browser } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { DomainVerifier } from '@herald/domains';
import { TrackingKeys } from '@herald/tracking';
import type { MxSink, SinkMessage } from '@herald/testing';
import { startWebhooks } from '../../apps/webhooks/src/webhooks.app';
import { call, type TestTeam } from '../support/api-harness';
import { ensureDashboardBuilt, launchBrowser, newContext, screenshot, seriousViolations, VIEWPORTS, type ViewportName } from '../support/browser';
import { signInThroughForm, verifiedUser } from '../support/dashboard-browser';
import { DeliveryWorld, type StoredEvent } from '../support/delivery-world';
import { freePort } from '../support/herald-process';
import { smtpSubmissionsOf } from '../support/smtp-submissions';
import { WebhookReceiver } from '../webhooks/webhook-receiver';

jest.setTimeout(90_000);

/** A desktop browser's user agent: the person reading the message (headless Chromium's own names itself a bot). */
const READER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';
const TRACKING_KEY = randomBytes(32);

/**
 * Open and click tracking end to end: a domain turns it on and verifies its tracking CNAME, a
 * message is delivered to an MX sink with its links rewritten per recipient (DKIM still passing),
 * a real Chromium opens the html as a webmail would and follows a link to the original site, and
 * the opens and clicks come back as email events and verified webhooks.
 */
describe('open and click tracking', () => {
  let world: DeliveryWorld;
  let webhooks: INestApplicationContext;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let site: Server;
  let siteUrl: string;
  const siteHits: string[] = [];
  let inbox = '';
  let team: TestTeam;
  let sink: MxSink;
  let apiPort: number;
  /** The tracking host's own listener (TRACKING_LISTEN_PORT), where the links point, as an ingress would send them. */
  let trackingPort: number;
  /** The email of the first test, with its opens and clicks, for the dashboard's view of them. */
  let trackedId = '';
  let trackedLink = '';

  beforeAll(async () => {
    apiPort = await freePort();
    trackingPort = await freePort();
    world = await DeliveryWorld.start({
      API_PORT: String(apiPort),
      TRACKING_LISTEN_PORT: String(trackingPort),
      TRACKING_PROTOCOL: 'http',
      TRACKING_PORT: String(trackingPort),
      TRACKING_KEYS: TRACKING_KEY.toString('base64'),
      TRACKING_SCANNER_WINDOW_SECONDS: '1',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8',
    });
    webhooks = await startWebhooks(world.api.config, {}, { pollIntervalMs: 25, attemptTimeoutMs: 3_000 });
    receiver = await WebhookReceiver.start();
    // The customer's site (where links lead) and a stand-in webmail page showing the received html.
    site = createServer((req, res) => {
      siteHits.push(req.url ?? '');
      if (req.url === '/inbox') return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(inbox);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<title>Landed</title><h1>Welcome to the shop</h1>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    browser = await launchBrowser(['--host-resolver-rules=MAP *.acme.test 127.0.0.1']);

    team = await world.team();
    sink = await world.sink();
    world.route('inbox.test', { host: 'mx.inbox.test', address: sink.host });
    await enableTracking(team);
  });

  afterAll(async () => {
    await browser?.close();
    await webhooks?.close();
    await receiver?.close();
    site?.closeAllConnections();
    await new Promise((resolve) => site?.close(resolve));
    await world?.close();
  });

  /** PATCH the domain as a customer would, publish the CNAME Herald asks for, and let verification find it. */
  async function enableTracking(t: TestTeam): Promise<void> {
    const updated = await t.resend.domains.update({ id: t.domainId, openTracking: true, clickTracking: true, trackingSubdomain: 'links' });
    expect(updated.error).toBeNull();
    const { body } = await call(world.api.url, t.token, 'GET', `/domains/${t.domainId}`);
    const cname = body.records.find((r: { record: string }) => r.record === 'Tracking');
    expect(cname).toMatchObject({ name: 'links', type: 'CNAME', status: 'not_started' });
    world.dns.set(`links.${t.domain}`, 'CNAME', [cname.value]);
    await world.api.app.get(DomainVerifier).verify(t.domainId);
    const after = await call(world.api.url, t.token, 'GET', `/domains/${t.domainId}`);
    expect(after.body).toMatchObject({ status: 'verified', open_tracking: true, click_tracking: true });
    expect(after.body.records.find((r: { record: string }) => r.record === 'Tracking').status).toBe('verified');
  }

  const waitFor = async <T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const engagement = async (id: string): Promise<StoredEvent[]> =>
    (await world.events(id)).filter((e) => e.type === 'email.opened' || e.type === 'email.clicked');
  const eventsCount = (id: string, n: number) =>
    waitFor(`${n} open/click events`, async () => ((await engagement(id)).length >= n ? engagement(id) : undefined));

  it('rewrites each recipient’s links before signing, records the open and the click, and redirects to the original link', async () => {
    const hook = await team.resend.webhooks.create({ endpoint: receiver.url('/hooks'), events: ['email.opened', 'email.clicked'] as never });
    expect(hook.error).toBeNull();
    const verifier = new Webhook(hook.data!.signing_secret);
    const target = `${siteUrl}/landing?from=email&n=1`;
    const html = [
      '<html><body><p>Your order shipped.</p>',
      `<a id="go" href="${target.replace('&', '&amp;')}">Track it</a>`,
      '<a id="mail" href="mailto:help@acme.test">Write to us</a>',
      `<a id="raw" data-herald-no-track href="${siteUrl}/raw">raw</a>`,
      '</body></html>',
    ].join('');
    const sent = await team.resend.emails.send({
      from: `Acme <${team.from()}>`,
      to: ['reader@inbox.test', 'other@inbox.test'],
      subject: 'Shipped',
      html,
      text: `Your order shipped: ${target}`,
    });
    expect(sent.error).toBeNull();
    const id = sent.data!.id;
    [trackedId, trackedLink] = [id, target];
    await sink.waitForMessages(2, 20_000);
    const byRecipient = new Map(sink.messages.map((m) => [m.recipients[0], m]));
    expect(sink.messages.every((m) => m.recipients.length === 1)).toBe(true);

    // Each recipient's copy: its own pixel and link tokens, the text part untouched, DKIM passing.
    const parsed = await Promise.all(['reader@inbox.test', 'other@inbox.test'].map(async (to) => simpleParser(byRecipient.get(to)!.raw)));
    for (const p of parsed) {
      expect(p.text).toContain(target);
      expect(p.text).not.toContain('/t/c/');
      expect(p.html).toContain('href="mailto:help@acme.test"');
      expect(p.html).toContain(`data-herald-no-track href="${siteUrl}/raw"`);
      expect(p.html).not.toContain(target.replace('&', '&amp;'));
      expect(p.html).toMatch(new RegExp(`href="http://links\\.${team.domain.replace(/\./g, '\\.')}:${trackingPort}/t/c/[A-Za-z0-9_-]+"`));
      expect(p.html).toMatch(/<img src="http:\/\/links\.[^"]+\/t\/o\/[A-Za-z0-9_-]+" width="1" height="1" alt=""/);
    }
    const pixels = parsed.map((p) => /\/t\/o\/([A-Za-z0-9_-]+)/.exec(p.html as string)![1]);
    expect(pixels[0]).not.toBe(pixels[1]);
    for (const message of byRecipient.values()) {
      const auth = await world.authenticateAtSink(message as SinkMessage);
      expect(auth.dkim.results[0]).toMatchObject({ signingDomain: team.domain, status: { result: 'pass' } });
    }

    // Past the link-scanner window, the person opens the message in a webmail and clicks.
    const reader = parsed[0];
    await waitFor('the scanner window to pass', () => (Date.now() > byRecipient.get('reader@inbox.test')!.receivedAt + 1_500 ? true : undefined));
    inbox = reader.html as string;
    const context = await browser.newContext({ userAgent: READER_AGENT });
    const page = await context.newPage();
    await page.goto(`${siteUrl}/inbox`, { waitUntil: 'load' });
    const [opened] = await eventsCount(id, 1);
    expect(opened).toMatchObject({
      type: 'email.opened',
      recipients: ['reader@inbox.test'],
      data: {
        email_id: id,
        to: ['reader@inbox.test'],
        subject: 'Shipped',
        open: { ipAddress: '127.0.0.1', userAgent: READER_AGENT, timestamp: expect.stringMatching(/Z$/) },
        tracking: { machine: false, reason: null, unique: true },
      },
    });
    await page.click('#go');
    await page.waitForURL(target);
    expect(await page.title()).toBe('Landed');
    expect(siteHits).toContain('/landing?from=email&n=1');
    await context.close();

    const clicked = await waitFor('a verified email.clicked webhook', () =>
      receiver.at('/hooks').find((d) => d.json.type === 'email.clicked' && d.json.data.email_id === id),
    );
    expect(() => verifier.verify(clicked.body, clicked.headers as Record<string, string>)).not.toThrow();
    expect(clicked.json.data).toMatchObject({
      email_id: id,
      to: ['reader@inbox.test'],
      click: { link: target, ipAddress: '127.0.0.1', userAgent: READER_AGENT, timestamp: expect.stringMatching(/Z$/) },
      tracking: { machine: false, reason: null, unique: true },
    });
    const openedHook = await waitFor('an email.opened webhook', () =>
      receiver.at('/hooks').find((d) => d.json.type === 'email.opened' && d.json.data.email_id === id),
    );
    expect(() => verifier.verify(openedHook.body, openedHook.headers as Record<string, string>)).not.toThrow();
    expect((await team.resend.emails.get(id)).data).toMatchObject({ last_event: 'clicked' });

    // Machines: Apple's privacy proxy and a scanner's user agent are flagged, the first of them unique among machines;
    // a second human open and click are not unique.
    const pixel = `http://127.0.0.1:${trackingPort}/t/o/${pixels[0]}`;
    const link = /href="(http:\/\/links\.[^"]+\/t\/c\/[A-Za-z0-9_-]+)"/
      .exec(reader.html as string)![1]!
      .replace(/^http:\/\/[^/]+/, `http://127.0.0.1:${trackingPort}`);
    const get = (url: string, userAgent: string) => fetch(url, { headers: { 'user-agent': userAgent }, redirect: 'manual' });
    expect((await get(pixel, 'Mozilla/5.0')).headers.get('content-type')).toBe('image/gif');
    expect((await get(pixel, 'curl/8.5.0')).status).toBe(200);
    expect((await get(pixel, READER_AGENT)).headers.get('cache-control')).toContain('no-store');
    const again = await get(link, READER_AGENT);
    expect(again.status).toBe(302);
    expect(again.headers.get('location')).toBe(target);
    const events = await eventsCount(id, 6);
    const flags = (type: string) =>
      events.filter((e) => e.type === type).map((e) => [e.data[type === 'email.opened' ? 'open' : 'click'].userAgent, e.data.tracking]);
    // One machine open is the unique one: the first recorded. Hits are answered at once and
    // committed in groups (two may commit at the same time), so of two opens a few milliseconds
    // apart either can be recorded first; the count of unique opens is exact either way.
    const opens = flags('email.opened');
    expect(opens).toHaveLength(4);
    expect(opens).toEqual(
      expect.arrayContaining([
        [READER_AGENT, { machine: false, reason: null, unique: true }],
        ['Mozilla/5.0', { machine: true, reason: 'apple_privacy', unique: expect.any(Boolean) }],
        ['curl/8.5.0', { machine: true, reason: 'user_agent', unique: expect.any(Boolean) }],
        [READER_AGENT, { machine: false, reason: null, unique: false }],
      ]),
    );
    expect(events.filter((e) => e.type === 'email.opened' && e.data.tracking.machine && e.data.tracking.unique)).toHaveLength(1);
    expect(flags('email.clicked')).toEqual([
      [READER_AGENT, { machine: false, reason: null, unique: true }],
      [READER_AGENT, { machine: false, reason: null, unique: false }],
    ]);
  });

  it('answers a forged, truncated, modified or re-signed URL with 404 and records nothing; a link scanner’s click is flagged', async () => {
    const sent = await team.resend.emails.send({
      from: team.from(),
      to: 'reader@inbox.test',
      subject: 'Links',
      html: `<a href="${siteUrl}/a">a</a>`,
    });
    expect(sent.error).toBeNull();
    const id = sent.data!.id;
    const message = await waitFor('the message at the sink', async () => {
      for (const m of sink.messages) {
        const parsed = await simpleParser(m.raw);
        if (parsed.subject === 'Links') return parsed;
      }
      return undefined;
    });
    const token = /\/t\/c\/([A-Za-z0-9_-]+)/.exec(message.html as string)![1]!;
    // The tracking host's own listener, and API_PORT, which serves the same routes.
    const bases = [`http://127.0.0.1:${trackingPort}`, `http://127.0.0.1:${apiPort}`];
    const base = bases[0]!;
    const get = (path: string, at = base) => fetch(`${at}${path}`, { headers: { 'user-agent': READER_AGENT }, redirect: 'manual' });
    const claims = TrackingKeys.of([TRACKING_KEY]).verify('click', token);
    expect(claims).toMatchObject({ kind: 'click', emailId: id, position: 0, link: 0, url: `${siteUrl}/a` });

    const flipped = Buffer.from(token, 'base64url');
    flipped[30] ^= 1;
    const elsewhere = TrackingKeys.of([randomBytes(32)]).sign({ ...claims!, kind: 'click', url: 'https://evil.example/' } as never);
    for (const path of [
      `/t/c/${token.slice(0, -4)}`,
      `/t/c/${token.slice(0, 20)}`,
      `/t/c/${flipped.toString('base64url')}`,
      `/t/c/${elsewhere}`,
      `/t/o/${token}`,
      '/t/c/',
      '/t/c/not-a-token',
    ]) {
      for (const at of bases) {
        const answer = await get(path, at);
        expect([at, path, answer.status, answer.headers.get('location')]).toEqual([at, path, 404, null]);
      }
    }
    // A HEAD (a scanner probing the link) is answered like the GET and records nothing either.
    for (const at of bases) {
      const head = await fetch(`${at}/t/c/${token}`, { method: 'HEAD', headers: { 'user-agent': READER_AGENT }, redirect: 'manual' });
      expect([at, head.status, head.headers.get('location')]).toEqual([at, 302, `${siteUrl}/a`]);
    }
    expect(await engagement(id)).toEqual([]);
    // The tracking listener serves the tracking routes and nothing else: no API, no probes, no dashboard.
    for (const path of ['/emails', '/health/ready', '/dashboard/', '/openapi.json']) {
      const answer = await get(path);
      expect([path, answer.status, answer.headers.get('content-type'), await answer.text()]).toEqual([
        path,
        404,
        'text/plain; charset=utf-8',
        'Not found',
      ]);
    }

    // A click signed just now (a scanner following links as the message arrives) is flagged machine.
    const scanner = TrackingKeys.of([TRACKING_KEY]).sign({ ...claims!, kind: 'click', signedAt: new Date(Date.now() + 60_000) } as never);
    expect((await get(`/t/c/${scanner}`)).status).toBe(302);
    const [event] = await eventsCount(id, 1);
    expect(event.data.tracking).toEqual({ machine: true, reason: 'link_scanner', unique: true });

    // An email Herald does not know (deleted, expired) still redirects when the signature holds, recording nothing.
    const unknown = TrackingKeys.of([TRACKING_KEY]).sign({
      kind: 'click',
      emailId: '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
      position: 0,
      signedAt: new Date(0),
      link: 0,
      url: `${siteUrl}/old`,
    });
    const old = await get(`/t/c/${unknown}`);
    expect([old.status, old.headers.get('location')]).toEqual([302, `${siteUrl}/old`]);
    const { rows } = await world.db.query(`SELECT count(*)::int AS n FROM email_events WHERE email_id = '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'`);
    expect(rows[0].n).toBe(0);
  });

  it('tracks a message relayed over SMTP too: its html part rewritten, every other part as submitted, DKIM passing', async () => {
    const raw = await new MailComposer({
      from: team.from(),
      to: 'relay@inbox.test',
      subject: 'Relayed',
      text: `Plain ${siteUrl}/r`,
      html: `<p>Relayed <a href="${siteUrl}/r">link</a></p>`,
      attachments: [{ filename: 'note.txt', content: 'a note', contentType: 'text/plain' }],
    })
      .compile()
      .build();
    const smtp = smtpSubmissionsOf(world.api.app);
    const auth = await smtp.authenticate('herald', team.token);
    if (!auth.ok) throw new Error('authentication failed');
    const result = await smtp.submit(auth.principal, { mailFrom: team.from(), rcptTo: ['relay@inbox.test'] }, raw);
    if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.reply)}`);
    const message = await waitFor('the relayed message at the sink', () => sink.messages.find((m) => m.recipients[0] === 'relay@inbox.test'));
    const parsed = await simpleParser(message.raw);
    expect(parsed.text).toBe(`Plain ${siteUrl}/r`);
    expect(parsed.attachments.map((a) => [a.filename, a.content.toString()])).toEqual([['note.txt', 'a note']]);
    const link = /href="http:\/\/links\.[^"]+\/t\/c\/([A-Za-z0-9_-]+)"/.exec(parsed.html as string)![1]!;
    expect(TrackingKeys.of([TRACKING_KEY]).verify('click', link)).toMatchObject({ emailId: result.id, position: 0, url: `${siteUrl}/r` });
    expect(parsed.html).toMatch(/\/t\/o\/[A-Za-z0-9_-]+"/);
    const authenticated = await world.authenticateAtSink(message);
    expect(authenticated.dkim.results[0]).toMatchObject({ signingDomain: team.domain, status: { result: 'pass' } });
  });

  it('shows each open and click in the Emails detail with its link, user agent and a Machine badge', async () => {
    expect(trackedId).not.toBe('');
    ensureDashboardBuilt();
    const userId = await verifiedUser(world.api, 'ada@people.test', 'ada password 1', 'Ada');
    await world.db.query(`INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, 'member')`, [team.teamId, userId]);
    // One sign-in, both widths: the page is read at 1280 px, then at 390 px.
    const context = await newContext(browser, 'desktop', world.api.url);
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(30_000);
      await signInThroughForm(page, 'ada@people.test', 'ada password 1');
      // The sign-in may still follow its callback (`/dashboard/?verified=1`, then the first team's
      // domains) after the form's own redirect: open the email once that has settled.
      const detail = `/dashboard/t/${team.teamId}/emails/${trackedId}`;
      await page.waitForLoadState('networkidle');
      await page.goto(detail, { waitUntil: 'domcontentloaded' }).catch(() => page.goto(detail, { waitUntil: 'domcontentloaded' }));
      await page.getByText('Machine: Apple Mail Privacy Protection').first().waitFor();
      expect(await page.getByText('Machine: a bot or scanner user agent').count()).toBeGreaterThan(0);
      expect(await page.getByText(trackedLink, { exact: true }).count()).toBe(2);
      expect(await page.getByText(READER_AGENT, { exact: false }).count()).toBeGreaterThan(0);
      for (const viewport of Object.keys(VIEWPORTS) as ViewportName[]) {
        await page.setViewportSize(VIEWPORTS[viewport]);
        await page.getByRole('tab', { name: 'HTML' }).click();
        await page.mouse.wheel(0, -100_000);
        await screenshot(page, 'email-detail-tracking', viewport);
        // axe cannot run inside the preview's sandbox (no scripts) and would wait for it; the preview is the sender's HTML.
        await page.getByRole('tab', { name: 'Text' }).click();
        expect({ viewport, violations: await seriousViolations(page) }).toEqual({ viewport, violations: [] });
      }
    } finally {
      await context.close();
    }
  });
});
