import type { INestApplicationContext } from '@nestjs/common';
import { simpleParser, type ParsedMail } from 'mailparser';
import { createTransport } from 'nodemailer';
import { Webhook } from 'standardwebhooks';
import { ContactsDirectory } from '@herald/contacts';
import type { MxSink, SinkMessage } from '@herald/testing';
import { startWebhooks } from '../../apps/webhooks/src/webhooks.app';
import { TestAudience } from '../broadcasts/audience';
import type { TestTeam } from '../support/api-harness';
import { call } from '../support/api-harness';
import { DeliveryWorld } from '../support/delivery-world';
import { WebhookReceiver } from '../webhooks/webhook-receiver';

jest.setTimeout(180_000);

const CONTACTS = 300;
const UNSUBSCRIBED = (i: number) => i % 15 === 1; // 20
const OPTED_OUT = (i: number) => i % 20 === 2; // 15
const SUPPRESSED = (i: number) => i % 30 === 3; // 10
const address = (i: number) => `c${i}@inbox.test`;
const firstName = (i: number) => (i % 3 === 0 ? null : `Ann${i}`);
const company = (i: number) => (i % 2 === 0 ? `Co${i} & <Sons>` : null);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A broadcast to a segment, end to end: the fan-out writes one email per contact through the
 * send path, the worker delivers them to a local MX sink, each once, with its own merge values
 * and a DKIM-signed one-click List-Unsubscribe; the link unsubscribes the contact (a verified
 * contact.updated webhook), the next broadcast leaves it out, and a tampered token does nothing.
 */
describe('a broadcast, from segment to inbox and back out', () => {
  let world: DeliveryWorld;
  let webhooks: INestApplicationContext;
  let receiver: WebhookReceiver;
  let team: TestTeam;
  let sink: MxSink;
  let audience: TestAudience;
  let segmentId: string;
  let topicId: string;
  const ids = new Map<number, string>();

  beforeAll(async () => {
    world = await DeliveryWorld.start({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8' });
    webhooks = await startWebhooks(world.api.config, {}, { pollIntervalMs: 25, attemptTimeoutMs: 3_000 });
    receiver = await WebhookReceiver.start();
    // A paid plan: the free plan's 100 emails a day would hold the 300-contact broadcast (its emails count against the quota).
    team = await world.team({ plan: 'pro-50k' });
    sink = await world.sink();
    world.route('inbox.test', { host: 'mx.inbox.test', address: sink.host });
    audience = new TestAudience(team.resend);
    segmentId = await audience.segment();
    topicId = await audience.topic('Product news', 'opt_in');
    await audience.property('company', 'your company');
    // Outside the segment: must get nothing.
    await audience.contact({ email: 'outsider@inbox.test', first_name: 'Out' });
    const bodies = Array.from({ length: CONTACTS }, (_, i) => ({
      email: address(i),
      first_name: firstName(i),
      unsubscribed: UNSUBSCRIBED(i),
      properties: company(i) === null ? {} : { company: company(i) },
      segments: [{ id: segmentId }],
      topics: OPTED_OUT(i) ? [{ id: topicId, subscription: 'opt_out' }] : [],
    }));
    const created = await audience.contacts(bodies);
    created.forEach((id, i) => ids.set(i, id));
    const suppressed = Array.from({ length: CONTACTS }, (_, i) => i)
      .filter(SUPPRESSED)
      .map(address);
    expect((await call(world.api.url, team.token, 'POST', '/suppressions/batch/add', { emails: suppressed })).status).toBe(200);
  });

  afterAll(async () => {
    await webhooks?.close();
    await receiver?.close();
    await world?.close();
  });

  const expected = () => Array.from({ length: CONTACTS }, (_, i) => i).filter((i) => !UNSUBSCRIBED(i) && !OPTED_OUT(i) && !SUPPRESSED(i));

  const broadcast = async (subject: string) => {
    const { data, error } = await team.resend.broadcasts.create({
      name: subject,
      segmentId,
      topicId,
      from: `Acme <${team.from('news')}>`,
      subject: `${subject} for {{{contact.first_name|friend}}}`,
      previewText: 'News inside',
      html: '<html><body><p>Hi {{{contact.first_name|there}}} at {{{contact.company}}}</p><a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Unsubscribe</a></body></html>',
      text: 'Hi {{{contact.first_name|there}}} at {{{contact.company}}}. Unsubscribe: {{{HERALD_UNSUBSCRIBE_URL}}}',
      send: true,
    });
    expect(error).toBeNull();
    return data!.id;
  };

  const waitForStatus = async (id: string, status: string) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { data } = await team.resend.broadcasts.get(id);
      if (data?.status === status) return data as unknown as Record<string, any>;
      if (Date.now() > deadline) throw new Error(`broadcast ${id} is ${data?.status}, not ${status}`);
      await sleep(200);
    }
  };

  const parsedBy = async (messages: SinkMessage[]) => {
    const byRecipient = new Map<string, { message: SinkMessage; parsed: ParsedMail }[]>();
    for (const message of messages) {
      const parsed = await simpleParser(message.raw);
      for (const r of message.recipients) byRecipient.set(r, [...(byRecipient.get(r) ?? []), { message, parsed }]);
    }
    return byRecipient;
  };

  let firstMessages: Map<string, { message: SinkMessage; parsed: ParsedMail }[]>;

  it('reaches every contact but the unsubscribed, opted-out and suppressed ones, once each, with their own merge values', async () => {
    const id = await broadcast('June');
    const recipients = expected();
    expect(recipients).toHaveLength(CONTACTS - 20 - 15 - 10);
    await sink.waitForMessages(recipients.length, 90_000);
    const sent = await waitForStatus(id, 'sent');
    expect(sent.counts).toMatchObject({ recipients: recipients.length, skipped_unsubscribed: 20, skipped_topic: 15, skipped_suppressed: 10 });
    await sleep(1_000); // anything sent twice would have arrived by now
    firstMessages = await parsedBy(sink.messages);
    expect([...firstMessages.keys()].sort()).toEqual(recipients.map(address).sort());
    for (const i of recipients) {
      const copies = firstMessages.get(address(i))!;
      expect({ i, copies: copies.length }).toEqual({ i, copies: 1 });
      const { parsed } = copies[0]!;
      const name = firstName(i);
      expect(parsed.subject).toBe(`June for ${name ?? 'friend'}`);
      const shownCompany = company(i) ?? 'your company';
      expect(parsed.text).toContain(`Hi ${name ?? 'there'} at ${shownCompany}.`);
      expect(parsed.html).toContain(`Hi ${name ?? 'there'} at ${shownCompany.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')}</p>`);
      expect(parsed.html).toContain('News inside');
      expect(parsed.headerLines.find((h) => h.key === 'list-unsubscribe-post')?.line).toBe('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
      const [link, mailto] = listUnsubscribe(parsed);
      expect(link).toMatch(new RegExp(`^${world.api.url}/unsubscribe/[A-Za-z0-9_-]{44}$`));
      expect(mailto).toMatch(
        new RegExp(`^mailto:u-[0-9a-f]{32}-[a-z2-7]{16}@[a-z0-9.-]+\\.${team.domain.replace(/\./g, '\\.')}\\?subject=unsubscribe$`),
      );
      expect(parsed.html).toContain(`href="${link}"`);
      expect(parsed.text).toContain(link);
    }
    const counts = await team.resend.broadcasts.get(id);
    expect((counts.data as unknown as { counts: { delivered: number } }).counts.delivered).toBe(recipients.length);
  });

  it('signs List-Unsubscribe and List-Unsubscribe-Post with a DKIM signature that mailauth verifies, aligned with the From domain for DMARC', async () => {
    for (const i of expected().slice(0, 5)) {
      const { message, parsed } = firstMessages.get(address(i))![0]!;
      const auth = await world.authenticateAtSink(message);
      expect(auth.dkim.results[0].status.result).toBe('pass');
      const signed = (auth.dkim.results[0].signingHeaders.keys as string)
        .toLowerCase()
        .split(':')
        .map((k) => k.trim());
      expect(signed).toEqual(expect.arrayContaining(['list-unsubscribe', 'list-unsubscribe-post', 'from', 'subject']));
      // DMARC passes on DKIM alone: d= is the From domain itself (not merely SPF on the Return-Path).
      const fromDomain = parsed.from!.value[0]!.address!.split('@')[1];
      expect(fromDomain).toBe(team.domain);
      expect(auth.dkim.results[0].signingDomain).toBe(fromDomain);
      expect(auth.dkim.results[0].status.aligned).toBe(fromDomain);
      expect(auth.dmarc.status.result).toBe('pass');
      expect(auth.dmarc.alignment.dkim.result).toBe(fromDomain);
    }
  });

  it('one-click POST to the List-Unsubscribe link unsubscribes that contact at once, with a verified contact.updated webhook', async () => {
    const hook = await team.resend.webhooks.create({ endpoint: receiver.url('/contacts'), events: ['contact.updated'] as never });
    expect(hook.error).toBeNull();
    const verifier = new Webhook(hook.data!.signing_secret);
    const [target] = expected();
    const [link] = listUnsubscribe(firstMessages.get(address(target!))![0]!.parsed);

    // A tampered token (one character changed) and a forged one change nothing.
    const tampered = link!.slice(0, -1) + (link!.endsWith('A') ? 'B' : 'A');
    for (const bad of [tampered, `${world.api.url}/unsubscribe/${'A'.repeat(44)}`]) {
      const refused = await fetch(bad, {
        method: 'POST',
        body: 'List-Unsubscribe=One-Click',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(refused.status).toBe(404);
      expect(await refused.text()).toContain('not valid');
    }

    const response = await fetch(link!, {
      method: 'POST',
      body: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      redirect: 'manual',
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('You are unsubscribed');
    const directory = world.api.app.get(ContactsDirectory);
    const topics = await directory.topicsOf(team.teamId, ids.get(target!)!);
    expect(topics.find((t) => t.topic.id === topicId)?.subscription).toBe('opt_out');

    const deadline = Date.now() + 20_000;
    while (!receiver.at('/contacts').some((d) => (d.json.data as { id?: string }).id === ids.get(target!))) {
      if (Date.now() > deadline) throw new Error('no contact.updated webhook');
      await sleep(100);
    }
    const delivery = receiver.at('/contacts').find((d) => (d.json.data as { id?: string }).id === ids.get(target!))!;
    expect(() => verifier.verify(delivery.body, delivery.headers as Record<string, string>)).not.toThrow();
    expect(delivery.json).toMatchObject({ type: 'contact.updated', data: { id: ids.get(target!), email: address(target!) } });
    // Nobody else changed: only the target's topic subscription moved.
    for (const other of expected().slice(1, 20)) {
      const theirs = await directory.topicsOf(team.teamId, ids.get(other)!);
      expect(theirs.find((t) => t.topic.id === topicId)?.subscription).toBe('opt_in');
    }
  });

  it('opens the preference page with GET; the mailto: address unsubscribes through the bounce MX', async () => {
    const [, second] = expected();
    const { parsed } = firstMessages.get(address(second!))![0]!;
    const [link, mailto] = listUnsubscribe(parsed);
    const page = await fetch(link!);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Test team');
    expect(html).toContain(address(second!));
    expect(html).toContain('Product news');
    expect(html).not.toMatch(/(src|href)="https?:/);

    const mailbox = mailto!.replace(/^mailto:/, '').replace(/\?.*$/, '');
    const transport = createTransport({ host: '127.0.0.1', port: world.bounceMxPort(), secure: false, ignoreTLS: true });
    await transport.sendMail({ from: address(second!), to: mailbox, subject: 'unsubscribe', text: 'unsubscribe' });
    transport.close();
    const topics = await world.api.app.get(ContactsDirectory).topicsOf(team.teamId, ids.get(second!)!);
    expect(topics.find((t) => t.topic.id === topicId)?.subscription).toBe('opt_out');
    // A forged mailbox is refused at RCPT TO.
    const forged = createTransport({ host: '127.0.0.1', port: world.bounceMxPort(), secure: false, ignoreTLS: true });
    // The tag's first character changed, always to a different one (a fixed 'z' was a no-op one time in 32).
    const forgedMailbox = mailbox.replace(/-([a-z2-7])([a-z2-7]{15})@/, (_, c: string, rest: string) => `-${c === 'z' ? 'y' : 'z'}${rest}@`);
    expect(forgedMailbox).not.toBe(mailbox);
    await expect(forged.sendMail({ from: 'x@inbox.test', to: forgedMailbox, subject: 'u', text: 'u' })).rejects.toThrow(/550/);
    forged.close();
  });

  it('saves the preference form: a topic dropped and taken again, then everything dropped', async () => {
    const third = expected()[2]!;
    const [link] = listUnsubscribe(firstMessages.get(address(third))![0]!.parsed);
    const directory = world.api.app.get(ContactsDirectory);
    const form = (body: string) => fetch(link!, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    const subscription = async () => (await directory.topicsOf(team.teamId, ids.get(third)!)).find((t) => t.topic.id === topicId)?.subscription;

    const dropped = await form('action=save');
    expect(dropped.status).toBe(200);
    expect(await dropped.text()).toContain('Your preferences are saved.');
    expect(await subscription()).toBe('opt_out');
    await form(`action=save&topic=${topicId}`);
    expect(await subscription()).toBe('opt_in');
    const all = await form('action=all');
    expect(await all.text()).toContain('You are unsubscribed from everything.');
    expect((await directory.findById(team.teamId, ids.get(third)!))?.unsubscribed).toBe(true);
    // Taken back, so that the next broadcast's count below stays about the one-click and mailto contacts.
    await form(`action=save&topic=${topicId}`);
    expect((await directory.findById(team.teamId, ids.get(third)!))?.unsubscribed).toBe(false);
  });

  it('leaves the unsubscribed contacts out of the next broadcast', async () => {
    const [first, second] = expected();
    sink.messages.length = 0;
    sink.received = 0;
    const id = await broadcast('July');
    const recipients = expected().filter((i) => i !== first && i !== second);
    await sink.waitForMessages(recipients.length, 90_000);
    const sent = await waitForStatus(id, 'sent');
    expect(sent.counts).toMatchObject({ recipients: recipients.length, skipped_topic: 15 + 2 });
    await sleep(1_000);
    const byRecipient = await parsedBy(sink.messages);
    expect([...byRecipient.keys()].sort()).toEqual(recipients.map(address).sort());
  });
});

/** The targets of List-Unsubscribe: `[https link, mailto]`. */
function listUnsubscribe(parsed: ParsedMail): string[] {
  const raw = parsed.headerLines
    .find((h) => h.key === 'list-unsubscribe')!
    .line.replace(/^List-Unsubscribe:\s*/i, '')
    .replace(/\r?\n\s+/g, ' ');
  return [...raw.matchAll(/<([^>]+)>/g)].map((m) => m[1]!);
}
