import { newId } from '@herald/core';
import type { BroadcastRecipientEventType } from 'resend';
import { EmailStore, emailEvent, ONCE_PER_EMAIL, type EmailEventRecord, type LateStatus } from '@herald/messages';
import { startTestApi, type TestApi, type TestTeam, UUID } from '../support/api-harness';
import { TestAudience } from './audience';

const PRICING = 'https://acme.test/pricing';
const DOCS = 'https://acme.test/docs';

/**
 * A sent broadcast's recipients by event, and its clicked links, through the `resend` SDK's
 * broadcasts.recipients and broadcasts.clickedLinks. The fan-out writes the emails (the api role
 * runs it); what happens to them afterwards is recorded through the email store as the worker,
 * the bounce MX and the tracking host record it; the unsubscribe is a real one-click POST to the
 * email's List-Unsubscribe link.
 */
describe("a broadcast's recipients and clicked links through the resend SDK", () => {
  let api: TestApi;
  let acme: TestTeam;
  let broadcastId: string;
  const contactIds: Record<string, string> = {};
  const emailIds: Record<string, string> = {};
  const address = (name: string) => `${name}@inbox.test`;

  beforeAll(async () => {
    api = await startTestApi();
    acme = await api.team();
    const audience = new TestAudience(acme.resend);
    const segmentId = await audience.segment();
    for (const name of ['ann', 'bob', 'cat', 'dan']) {
      contactIds[name] = await audience.contact({ email: address(name), first_name: name, segments: [{ id: segmentId }] });
    }
    const created = await acme.resend.broadcasts.create({
      name: 'Reports',
      segmentId,
      from: acme.from('news'),
      subject: 'Reports',
      html: `<p>Hi {{{contact.first_name|there}}}</p><a href="${PRICING}">Pricing</a> <a href="${DOCS}">Docs</a>`,
      send: true,
    });
    broadcastId = created.data!.id;
    const deadline = Date.now() + 15_000;
    while ((await acme.resend.broadcasts.get(broadcastId)).data!.status !== 'sent' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const emails = (await acme.resend.emails.list({ limit: 100 })).data!.data.filter((e) => e.subject === 'Reports');
    for (const e of emails) emailIds[e.to[0]!.split('@')[0]!] = e.id;
    expect(Object.keys(emailIds).sort()).toEqual(['ann', 'bob', 'cat', 'dan']);
    await recordHistory();
  });
  afterAll(async () => {
    await api.close();
  });

  /** Sent to all four, delivered to three, dan's bounced, cat complained; ann opened twice and clicked three times, bob once; bob unsubscribed. */
  async function recordHistory(): Promise<void> {
    const store = api.app.get(EmailStore);
    const at = (seconds: number) => new Date(Date.now() + seconds * 1000);
    const events: EmailEventRecord[] = [];
    const statuses: LateStatus[] = [];
    for (const [name, emailId] of Object.entries(emailIds)) {
      const facts = (await store.emailForReport(emailId))!;
      const to = [address(name)];
      events.push(emailEvent('email.sent', facts, to, at(1), ONCE_PER_EMAIL));
      if (name === 'dan') {
        const bounce = { type: 'Permanent' as const, subType: 'NoEmail' as const, message: 'No such user', diagnosticCode: ['smtp; 550 5.1.1'] };
        events.push(emailEvent('email.bounced', facts, to, at(2), 'report-1', { bounce }));
        statuses.push({ emailId, address: to[0]!, status: 'bounced' });
      } else {
        events.push(emailEvent('email.delivered', facts, to, at(2), 'mx', { delivery: { mx: 'mx.inbox.test' } }));
        statuses.push({ emailId, address: to[0]!, status: 'delivered' });
      }
      if (name === 'cat') events.push(emailEvent('email.complained', facts, to, at(3), 'report-2'));
    }
    await store.recordLate(events, statuses);
    const hit = (name: string, kind: 'open' | 'click', url?: string) => ({
      id: newId(),
      kind,
      emailId: emailIds[name]!,
      position: 0,
      link: url ? { index: url === PRICING ? 0 : 1, url } : null,
      ipAddress: '192.0.2.7',
      userAgent: 'Mozilla/5.0',
      at: at(4),
      machine: false,
      reason: null,
    });
    await store.recordEngagement([
      hit('ann', 'open'),
      hit('ann', 'open'),
      hit('ann', 'click', PRICING),
      hit('ann', 'click', PRICING),
      hit('ann', 'click', DOCS),
      hit('bob', 'click', PRICING),
    ]);
    const email = await acme.resend.emails.get(emailIds['bob']!);
    // Stored as the broadcast's template and bob's values: GET /emails/:id shows his copy.
    expect(email.data!.html).toBe(`<p>Hi bob</p><a href="${PRICING}">Pricing</a> <a href="${DOCS}">Docs</a>`);
    const link = /<(http[^>]+)>/.exec((email.data as unknown as { headers: Record<string, string> }).headers['List-Unsubscribe']!)![1]!;
    const oneClick = await fetch(link, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(oneClick.status).toBe(200);
  }

  const recipient = (name: string, extra: Record<string, unknown> = {}) => ({
    id: emailIds[name],
    contact_id: contactIds[name],
    email: address(name),
    ...extra,
  });
  const names = (data: { email: string }[]) => data.map((r) => r.email.split('@')[0]).sort();

  it('lists the recipients of each event, with counts, clicked links and bounce types', async () => {
    type Filter = Partial<{ email: string; bounceType: 'permanent' | 'transient' | 'undetermined' }>;
    const of = async (type: BroadcastRecipientEventType, extra: Filter = {}) => {
      const { data, error } = await acme.resend.broadcasts.recipients(broadcastId, { type, ...extra } as never);
      expect({ type, error }).toEqual({ type, error: null });
      expect(data).toMatchObject({ object: 'list', has_more: false });
      return data!.data;
    };
    expect(names(await of('sent'))).toEqual(['ann', 'bob', 'cat', 'dan']);
    expect(names(await of('delivered'))).toEqual(['ann', 'bob', 'cat']);
    expect(await of('opened')).toEqual([recipient('ann', { count: 2 })]);
    const clicked = await of('clicked');
    expect(clicked.sort((x, y) => x.email.localeCompare(y.email))).toEqual([
      recipient('ann', {
        count: 3,
        clicked_links: [
          { url: PRICING, clicks: 2 },
          { url: DOCS, clicks: 1 },
        ],
      }),
      recipient('bob', { count: 1, clicked_links: [{ url: PRICING, clicks: 1 }] }),
    ]);
    expect(await of('bounced')).toEqual([recipient('dan', { bounce_type: 'permanent' })]);
    expect(await of('bounced', { bounceType: 'permanent' })).toEqual([recipient('dan', { bounce_type: 'permanent' })]);
    expect(await of('bounced', { bounceType: 'transient' })).toEqual([]);
    expect(await of('complained')).toEqual([recipient('cat')]);
    expect(await of('unsubscribed')).toEqual([recipient('bob')]);
    expect(await of('unsubscribed', { email: 'BOB@inbox.test' })).toEqual([recipient('bob')]);
    expect(await of('unsubscribed', { email: address('ann') })).toEqual([]);
    expect(await of('suppressed')).toEqual([]);
    expect(await of('delivered', { email: address('cat') })).toEqual([recipient('cat')]);
  });

  it('pages the recipients newest email first, with after and before', async () => {
    const first = await acme.resend.broadcasts.recipients(broadcastId, { type: 'sent', limit: 3 });
    expect(first.data).toMatchObject({ has_more: true });
    expect(first.data!.data).toHaveLength(3);
    const ids = first.data!.data.map((r) => r.id);
    expect([...ids].sort().reverse()).toEqual(ids);
    const rest = await acme.resend.broadcasts.recipients(broadcastId, { type: 'sent', limit: 3, after: ids[2]! });
    expect(rest.data).toMatchObject({ has_more: false, data: [{ id: expect.stringMatching(UUID) }] });
    const back = await acme.resend.broadcasts.recipients(broadcastId, { type: 'sent', limit: 2, before: rest.data!.data[0]!.id });
    expect(back.data!.data.map((r) => r.id)).toEqual(ids.slice(1));
  });

  it('lists the clicked links by URL, with clicks and unique clicks, paged by their ids', async () => {
    const { data, error } = await acme.resend.broadcasts.clickedLinks(broadcastId);
    expect(error).toBeNull();
    expect(data).toEqual({
      object: 'list',
      has_more: false,
      data: [
        { id: expect.any(String), url: DOCS, clicks: 1, unique_clicks: 1 },
        { id: expect.any(String), url: PRICING, clicks: 3, unique_clicks: 2 },
      ],
    });
    const first = await acme.resend.broadcasts.clickedLinks(broadcastId, { limit: 1 });
    expect(first.data).toMatchObject({ has_more: true, data: [{ url: DOCS }] });
    const next = await acme.resend.broadcasts.clickedLinks(broadcastId, { limit: 1, after: first.data!.data[0]!.id });
    expect(next.data).toMatchObject({ has_more: false, data: [{ url: PRICING }] });
  });

  it('answers 422 naming the parameter, and 404 for another team', async () => {
    const bad = async (options: Record<string, unknown>) => (await acme.resend.broadcasts.recipients(broadcastId, options as never)).error;
    expect(await bad({ type: 'read' })).toMatchObject({ statusCode: 422, name: 'validation_error', message: expect.stringMatching(/`type`/) });
    expect(await bad({ type: 'sent', bounceType: 'permanent' })).toMatchObject({ statusCode: 422, message: expect.stringMatching(/`bounce_type`/) });
    expect(await bad({ type: 'bounced', bounceType: 'soft' })).toMatchObject({ statusCode: 422, message: expect.stringMatching(/`bounce_type`/) });
    expect(await bad({ type: 'sent', email: 'not an address' })).toMatchObject({ statusCode: 422, message: expect.stringMatching(/`email`/) });
    expect(await bad({ type: 'sent', limit: 0 })).toMatchObject({ statusCode: 422 });
    expect((await acme.resend.broadcasts.clickedLinks(broadcastId, { after: '!' })).error).toMatchObject({ statusCode: 422 });
    expect((await acme.resend.broadcasts.recipients('nope', { type: 'sent' })).error).toMatchObject({ statusCode: 422, name: 'invalid_parameter' });

    const other = await api.team();
    expect((await other.resend.broadcasts.recipients(broadcastId, { type: 'sent' })).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await other.resend.broadcasts.clickedLinks(broadcastId)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
  });
});
