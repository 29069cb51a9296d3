import { randomBytes } from 'node:crypto';
import { createTransport } from 'nodemailer';
import type { CreateEmailOptions } from 'resend';
import { DomainVerifier } from '@herald/domains';
import type { MxSink, SinkMessage } from '@herald/testing';
import { call, type TestTeam } from '../support/api-harness';
import { DeliveryWorld } from '../support/delivery-world';
import { freePort } from '../support/herald-process';
import { complaintAbout } from '../support/report-fixtures';

jest.setTimeout(90_000);

const TEXT = 'Hello Jane, here is what happened on your Acme account this week: three new projects and two comments.';
const CLEAN_HTML = `<p>${TEXT}</p><p><a href="https://acme.test/account">Open your account</a></p><img src="https://acme.test/logo.png" alt="Acme">`;
/** The Gmail clipping size the insight rules use (102 KB). */
const GMAIL_CLIP_BYTES = 102 * 1024;
const READER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';

/**
 * The insights that read tracking and engagement, end to end: emails sent with the `resend` SDK
 * from domains with open and click tracking on their verified tracking subdomain, delivered to a
 * local MX sink, then opened by machines, clicked by a link scanner, or complained about through
 * the bounce MX. A crafted email per rule gets exactly that rule's insight (the companion of
 * email-insights.e2e-spec.ts, which covers the rules that need no tracking).
 */
describe('email insights from tracking and engagement (resend SDK → worker → sink → pixel, link, complaint)', () => {
  let world: DeliveryWorld;
  let sink: MxSink;
  let plain: TestTeam;
  let tracked: TestTeam;
  let apiPort: number;

  beforeAll(async () => {
    apiPort = await freePort();
    world = await DeliveryWorld.start({
      API_PORT: String(apiPort),
      TRACKING_PROTOCOL: 'http',
      TRACKING_PORT: String(apiPort),
      TRACKING_KEYS: randomBytes(32).toString('base64'),
      // A click this soon after delivery is a link scanner's (a gateway following links on arrival).
      TRACKING_SCANNER_WINDOW_SECONDS: '60',
    });
    sink = await world.sink();
    world.route('inbox.test', { host: 'mx.inbox.test', address: sink.host });
    plain = await world.team();
    tracked = await world.team();
    const updated = await tracked.resend.domains.update({
      id: tracked.domainId,
      openTracking: true,
      clickTracking: true,
      trackingSubdomain: 'links',
    });
    expect(updated.error).toBeNull();
    const { body } = await call(world.api.url, tracked.token, 'GET', `/domains/${tracked.domainId}`);
    const cname = body.records.find((r: { record: string }) => r.record === 'Tracking');
    world.dns.set(`links.${tracked.domain}`, 'CNAME', [cname.value]);
    await world.api.app.get(DomainVerifier).verify(tracked.domainId);
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  const email = (team: TestTeam, patch: Partial<CreateEmailOptions> = {}): CreateEmailOptions =>
    ({
      from: `Acme <hello@${team.domain}>`,
      to: 'jane@inbox.test',
      subject: 'Your week at Acme',
      html: CLEAN_HTML,
      text: TEXT,
      ...patch,
    }) as CreateEmailOptions;

  async function send(team: TestTeam, patch: Partial<CreateEmailOptions> = {}): Promise<string> {
    const { data, error } = await team.resend.emails.send(email(team, patch));
    expect(error).toBeNull();
    return data!.id;
  }

  async function insightIds(team: TestTeam, id: string): Promise<string[]> {
    const response = await call(world.api.url, team.token, 'GET', `/emails/${id}/insights`);
    expect(response.status).toBe(200);
    return response.body.data.map((i: { id: string }) => i.id);
  }

  /** The message the sink received for the email (its VERP return path names the email). */
  async function delivered(id: string): Promise<SinkMessage> {
    await world.waitForEvent(id, 'email.delivered');
    const message = sink.messages.find((m) => m.raw.toString('latin1').includes(id));
    if (!message) throw new Error(`no message of ${id} at the sink`);
    return message;
  }

  /** The tracking URL of the delivered html (quoted-printable undone), pointed at the api's port. */
  function trackingUrl(message: SinkMessage, kind: 'o' | 'c'): string {
    const raw = message.raw.toString('latin1').replace(/=\r\n/g, '').replace(/=3D/g, '=');
    const match = new RegExp(`http://links\\.[^/"]+(/t/${kind}/[A-Za-z0-9_-]+)`).exec(raw);
    if (!match) throw new Error(`no /t/${kind}/ link in the delivered message`);
    return `http://127.0.0.1:${apiPort}${match[1]}`;
  }

  const eventsOf = async (id: string, type: string, count: number) => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const events = (await world.events(id)).filter((e) => e.type === type);
      if (events.length >= count) return events;
      if (Date.now() > deadline) throw new Error(`${type}: ${events.length} of ${count}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('finds nothing in a clean email from a tracked domain', async () => {
    const id = await send(tracked);
    await delivered(id);
    expect(await insightIds(tracked, id)).toEqual([]);
  });

  const links = (n: number) => Array.from({ length: n }, (_, i) => `<p><a href="https://acme.test/p/${i}">Project ${i}</a></p>`).join('');
  const crafted: [string, 'plain' | 'tracked', Partial<CreateEmailOptions>][] = [
    ['link-text-url-mismatch', 'plain', { html: `<p>${TEXT}</p><a href="https://acme.test/account">www.elsewhere.test/account</a>` }],
    ['too-many-links', 'plain', { html: `<p>${TEXT}</p>${links(31)}` }],
    ['click-tracking-url-text', 'tracked', { html: `<p>${TEXT}</p><a href="https://acme.test/account">acme.test/account</a>` }],
    ['click-tracking-one-time-link', 'tracked', { html: `<p>${TEXT}</p><a href="https://acme.test/invite/4f9a2c">Join the project</a>` }],
    ['open-tracking-without-html', 'tracked', { html: undefined }],
  ];

  it.each(crafted)('%s: a crafted email gets exactly that insight', async (rule, which, patch) => {
    const team = which === 'plain' ? plain : tracked;
    expect(await insightIds(team, await send(team, patch))).toEqual([rule]);
  });

  it('tracking-gmail-clipping: under 102 KB as written, over it once 25 links are rewritten and the pixel added', async () => {
    const body = `<p>${TEXT}</p>${links(25)}`;
    const padding = `<p>${'Acme news. '.repeat(Math.ceil((GMAIL_CLIP_BYTES - 600 - body.length) / 11))}</p>`.slice(
      0,
      GMAIL_CLIP_BYTES - 600 - body.length,
    );
    const html = `${body}${padding}`;
    expect(Buffer.byteLength(html)).toBeLessThan(GMAIL_CLIP_BYTES);
    expect(await insightIds(tracked, await send(tracked, { html }))).toEqual(['tracking-gmail-clipping']);
    // The same html from the domain without tracking is not clipped.
    expect(await insightIds(plain, await send(plain, { html }))).toEqual([]);
  });

  it('machine-opens-only: the pixel fetched only by machines', async () => {
    const id = await send(tracked);
    const pixel = trackingUrl(await delivered(id), 'o');
    expect((await fetch(pixel, { headers: { 'user-agent': 'curl/8.5.0' } })).status).toBe(200);
    await eventsOf(id, 'email.opened', 1);
    expect(await insightIds(tracked, id)).toEqual(['machine-opens-only']);
    // A person's open as well: the opens are no longer machines' only.
    expect((await fetch(pixel, { headers: { 'user-agent': READER_AGENT } })).status).toBe(200);
    await eventsOf(id, 'email.opened', 2);
    expect(await insightIds(tracked, id)).toEqual([]);
  });

  it('link-scanner-clicks: a link followed within seconds of delivery', async () => {
    const id = await send(tracked);
    const link = trackingUrl(await delivered(id), 'c');
    const answer = await fetch(link, { headers: { 'user-agent': READER_AGENT }, redirect: 'manual' });
    expect([answer.status, answer.headers.get('location')]).toEqual([302, 'https://acme.test/account']);
    const [click] = await eventsOf(id, 'email.clicked', 1);
    expect(click.data.tracking).toMatchObject({ machine: true, reason: 'link_scanner' });
    expect(await insightIds(tracked, id)).toEqual(['link-scanner-clicks']);
  });

  it('complained: the recipient reported it through a feedback loop', async () => {
    const id = await send(plain);
    const message = await delivered(id);
    const mx = createTransport({ host: '127.0.0.1', port: world.bounceMxPort(), ignoreTLS: true });
    await mx.sendMail({
      envelope: { from: 'fbl@isp.test', to: [message.envelopeFrom] },
      raw: complaintAbout(message.envelopeFrom, 'jane@inbox.test'),
    });
    await world.waitForEvent(id, 'email.complained');
    expect(await insightIds(plain, id)).toEqual(['complained']);
  });
});
