import { DomainsRepository } from '@herald/domains';
import { markVerified } from '../support/api-harness';
import { DashboardClient } from '../support/dashboard-client';
import { DashboardWorld, linkIn } from '../support/dashboard-world';

/**
 * The team-scoped dashboard API: each resource through a session, roles enforced with 403
 * insufficient_role, invitations mailed through Herald, and the audit log. Isolation between
 * teams, route by route, is team-isolation.e2e-spec.ts.
 */
describe('dashboard teams and roles', () => {
  let world: DashboardWorld;
  let alice: DashboardClient;
  let teamA: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    world = await DashboardWorld.start({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8' });
    alice = await world.signedIn('alice@people.test', 'alice password 1', { team_name: 'Team A' });
    teamA = (await alice.get('/dashboard/api/me')).body.teams[0].id;
  }, 90_000);

  afterAll(async () => {
    await world?.close();
  });

  const a = (path: string) => `/dashboard/api/teams/${teamA}${path}`;

  it('serves each resource of the caller’s team', async () => {
    const domain = await alice.post(a('/domains'), { name: 'alice.test' });
    expect(domain.status).toBe(201);
    ids.domain = domain.body.id;
    await markVerified(world.delivery.api.app.get(DomainsRepository), ids.domain);
    expect((await alice.get(a('/domains'))).body.data.map((d: any) => d.name)).toEqual(['alice.test']);
    const records = (await alice.get(a(`/domains/${ids.domain}`))).body.records;
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) expect(record).toMatchObject({ status: expect.any(String), observed: expect.any(Array), reason: null });

    // A domain whose records nobody published: Verify checks DNS, and each record says why it failed.
    const unpublished = (await alice.post(a('/domains'), { name: 'unpublished.test' })).body.id;
    expect((await alice.post(a(`/domains/${unpublished}/verify`))).status).toBe(200);
    let checked: any[] = [];
    for (const deadline = Date.now() + 15_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
      checked = (await alice.get(a(`/domains/${unpublished}`))).body.records;
      if (checked.some((r) => r.reason)) break;
    }
    expect(checked.find((r) => r.reason)).toMatchObject({ status: expect.stringMatching(/failed|pending|not_started/), reason: expect.any(String) });
    expect((await alice.delete(a(`/domains/${unpublished}`))).status).toBe(200);

    const key = await alice.post(a('/api-keys'), { name: 'Production', permission: 'full_access' });
    expect(key.status).toBe(201);
    expect(key.body.token).toMatch(/^hr_/);
    ids.key = key.body.id;
    const keys = (await alice.get(a('/api-keys'))).body.data;
    expect(keys).toEqual([expect.objectContaining({ id: ids.key, name: 'Production', permission: 'full_access', domain_id: null })]);
    expect(JSON.stringify(keys)).not.toContain(key.body.token);

    // Emails sent through the REST API with that key appear in the feed, filtered and searched.
    for (const subject of ['Order shipped', 'Invoice ready', 'Order delayed']) {
      const sent = await world.restCall(key.body.token, 'POST', '/emails', {
        from: 'Shop <shop@alice.test>',
        to: 'delivered@herald.test',
        subject,
        html: '<p>hi</p>',
      });
      expect(sent.status).toBe(200);
      ids[subject] = sent.body.id;
    }
    const feed = await alice.get(a('/emails?limit=2'));
    expect(feed.body.data.map((e: any) => e.subject)).toEqual(['Order delayed', 'Invoice ready']);
    expect(feed.body.has_more).toBe(true);
    expect(feed.body.data[0]).toMatchObject({ from: 'Shop <shop@alice.test>', to: ['delivered@herald.test'], domain_id: ids.domain });
    const next = await alice.get(a(`/emails?limit=2&after=${feed.body.data[1].id}`));
    expect(next.body.data.map((e: any) => e.subject)).toEqual(['Order shipped']);
    expect((await alice.get(a('/emails?q=order'))).body.data.map((e: any) => e.subject)).toEqual(['Order delayed', 'Order shipped']);
    expect((await alice.get(a('/emails?q=Delivered@herald.test'))).body.data).toHaveLength(3);
    expect((await alice.get(a('/emails?q=nobody@herald.test'))).body.data).toHaveLength(0);
    expect((await alice.get(a(`/emails?domain_id=${ids.domain}`))).body.data).toHaveLength(3);
    expect((await alice.get(a('/emails?last_event=bounced'))).body.data).toHaveLength(0);
    expect((await alice.get(a('/emails?from=2999-01-01'))).body.data).toHaveLength(0);
    const bad = await alice.get(a('/emails?last_event=lost'));
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ statusCode: 422, name: 'validation_error', message: expect.stringContaining('`last_event`') });

    const detail = await alice.get(a(`/emails/${ids['Order shipped']}`));
    expect(detail.body).toMatchObject({ id: ids['Order shipped'], subject: 'Order shipped', html: '<p>hi</p>' });
    expect(detail.body.recipients).toEqual([expect.objectContaining({ email: 'delivered@herald.test' })]);
    expect(detail.body.headers).toEqual(expect.arrayContaining([{ name: 'Subject', value: 'Order shipped' }]));
    expect(Array.isArray(detail.body.events)).toBe(true);
    // The Insights panel's source: the REST shape (a root-domain sender, an HTML-only body).
    const insights = await alice.get(a(`/emails/${ids['Order shipped']}/insights`));
    expect(insights.status).toBe(200);
    expect(insights.body.object).toBe('list');
    expect(insights.body.data.map((i: any) => i.id)).toEqual(expect.arrayContaining(['plain-text-missing', 'root-domain-sender']));
    const raw = await fetch(`${world.url}${a(`/emails/${ids['Order shipped']}/raw`)}`, { headers: { cookie: cookieHeader(alice) } });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toMatch(/^message\/rfc822/);
    expect(raw.headers.get('content-disposition')).toMatch(/^attachment/);
    expect(await raw.text()).toMatch(/Subject: Order shipped/);

    const webhook = await alice.post(a('/webhooks'), { endpoint: 'http://127.0.0.1:9/hook', events: ['email.delivered'] });
    expect(webhook.status).toBe(201);
    ids.webhook = webhook.body.id;
    expect((await alice.get(a(`/webhooks/${ids.webhook}/secret`))).body.secret).toMatch(/^whsec_/);
    expect((await alice.get(a(`/webhooks/${ids.webhook}/messages`))).status).toBe(200);

    const suppression = await alice.post(a('/suppressions'), { email: 'gone@people.test' });
    expect(suppression.status).toBe(201);
    ids.suppression = suppression.body.id;
    expect((await alice.get(a('/suppressions?q=gone@people.test'))).body.data).toHaveLength(1);
    expect((await alice.get(a('/suppressions?q=other@people.test'))).body.data).toHaveLength(0);

    const usage = await alice.get(a('/usage'));
    expect(usage.body).toMatchObject({ plan: 'free', quota: { monthly: 3000, daily: 100 }, used: { month: 3, today: 3 } });
  }, 60_000);

  it('invites by email through Herald and enforces roles', async () => {
    const invited = await alice.post(a('/invitations'), { email: 'carol@people.test', role: 'member' });
    expect(invited.status).toBe(201);
    const link = linkIn((await world.mailTo('carol@people.test', /Join Team A/)).text);
    const token = link.split('/').pop()!;
    const carol = await world.signedIn('carol@people.test', 'carol password 1');
    const accepted = await carol.post(`/dashboard/api/invitations/${token}/accept`);
    expect(accepted.status).toBe(200);
    expect(accepted.body.team).toMatchObject({ id: teamA, role: 'member' });
    expect((await carol.post(`/dashboard/api/invitations/${token}/accept`)).status).toBe(404);

    const forbidden = { statusCode: 403, name: 'insufficient_role', message: expect.stringContaining('member') };
    expect((await carol.get(a('/domains'))).status).toBe(200);
    expect((await carol.get(a('/emails'))).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/domains', { name: 'carol.test' }],
      ['POST', '/api-keys', { name: 'mine' }],
      ['DELETE', `/api-keys/${ids.key}`],
      ['GET', `/webhooks/${ids.webhook}/secret`],
      ['POST', '/suppressions', { email: 'y@people.test' }],
      ['POST', '/contact-imports', {}],
      ['DELETE', '/contacts/x@people.test'],
      ['POST', '/invitations', { email: 'dave@people.test' }],
      ['POST', `/domains/${ids.domain}/resume`],
    ] as [string, string, unknown][]) {
      const response = await carol.request(method, a(path), body);
      expect({ route: `${method} ${path}`, status: response.status, body: response.body }).toEqual({
        route: `${method} ${path}`,
        status: 403,
        body: forbidden,
      });
    }

    const carolId = (await carol.get('/dashboard/api/me')).body.user.id;
    const aliceId = (await alice.get('/dashboard/api/me')).body.user.id;
    const promoted = await alice.patch(a(`/members/${carolId}`), { role: 'admin' });
    expect(promoted.body).toMatchObject({ user_id: carolId, role: 'admin' });
    expect((await carol.post(a('/api-keys'), { name: 'admin key' })).status).toBe(201);
    // Lifting the reputation guardrail's pause is the owner's alone; reading metrics is everyone's.
    expect((await carol.post(a(`/domains/${ids.domain}/resume`))).body).toEqual({
      statusCode: 403,
      name: 'insufficient_role',
      message: 'Your role (admin) may not do this; ask an owner of the team.',
    });
    expect((await carol.get(a('/stats?granularity=day'))).body).toMatchObject({ object: 'stats', granularity: 'day', totals: { sent: 0 } });
    expect((await alice.post(a(`/domains/${ids.domain}/resume`))).body).toMatchObject({ object: 'domain', id: ids.domain, paused: null });
    const demoteOwner = await carol.patch(a(`/members/${aliceId}`), { role: 'member' });
    expect(demoteOwner.status).toBe(403);
    expect(demoteOwner.body.name).toBe('insufficient_role');
    const lastOwner = await alice.patch(a(`/members/${aliceId}`), { role: 'admin' });
    expect(lastOwner.status).toBe(422);

    const members = (await alice.get(a('/members'))).body.data;
    expect(members.map((m: any) => [m.email, m.role])).toEqual([
      ['alice@people.test', 'owner'],
      ['carol@people.test', 'admin'],
    ]);

    const revoked = await alice.delete(a(`/api-keys/${ids.key}`));
    expect(revoked.status).toBe(200);
    const log = (await alice.get(a('/audit-log?limit=100'))).body.data;
    const actions = log.map((e: any) => e.action);
    for (const action of ['user.signed_in', 'api_key.created', 'api_key.revoked', 'invitation.created', 'member.joined', 'member.role_changed']) {
      expect(actions).toContain(action);
    }
    expect(log.find((e: any) => e.action === 'api_key.revoked')).toMatchObject({ actor_email: 'alice@people.test', detail: { api_key_id: ids.key } });
  }, 60_000);
});

function cookieHeader(client: DashboardClient): string {
  return [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
}
