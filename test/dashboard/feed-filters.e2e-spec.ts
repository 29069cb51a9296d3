import { createTransport } from 'nodemailer';
import { DomainsRepository } from '@herald/domains';
import { RelayHost } from '@herald/smtp';
import { markVerified } from '../support/api-harness';
import { DashboardClient } from '../support/dashboard-client';
import { DashboardWorld, linkIn } from '../support/dashboard-world';

/**
 * The dashboard's narrowing of long lists: the Emails feed by the API key that sent each email
 * (REST single and batch, the SMTP relay), the suppression list searched by part of an address,
 * and the audit log: the team's for owners and admins, a person's own on the Account page.
 */
describe('dashboard feed filters, suppression search and audit logs', () => {
  let world: DashboardWorld;
  let owner: DashboardClient;
  let other: DashboardClient;
  let team: string;
  let otherTeam: string;
  const keys: Record<'rest' | 'relay', { id: string; token: string }> = {} as never;

  beforeAll(async () => {
    world = await DashboardWorld.start();
    owner = await world.signedIn('olga@people.test', 'olga password 1', { team_name: 'Filters' });
    other = await world.signedIn('oscar@people.test', 'oscar password 1', { team_name: 'Others' });
    team = (await owner.get('/dashboard/api/me')).body.teams[0].id;
    otherTeam = (await other.get('/dashboard/api/me')).body.teams[0].id;
    const domain = await owner.post(t('/domains'), { name: 'filters.test' });
    await markVerified(world.delivery.api.app.get(DomainsRepository), domain.body.id);
    for (const [name, permission] of [
      ['rest', 'full_access'],
      ['relay', 'sending_access'],
    ] as const) {
      const created = await owner.post(t('/api-keys'), { name, permission });
      expect(created.status).toBe(201);
      keys[name] = { id: created.body.id, token: created.body.token };
    }
  }, 90_000);

  afterAll(async () => {
    await world?.close();
  });

  const t = (path: string, teamId = team) => `/dashboard/api/teams/${teamId}${path}`;
  const subjectsOf = async (query: string) => ((await owner.get(t(`/emails?${query}`))).body.data as any[]).map((e) => e.subject).sort();

  it('records the API key of every email (REST single and batch, SMTP relay) and filters the feed by it', async () => {
    const email = (subject: string) => ({ from: 'Shop <shop@filters.test>', to: 'someone@herald.test', subject, text: 'hi' });
    const single = await world.restCall(keys.rest.token, 'POST', '/emails', email('rest single'));
    expect(single.status).toBe(200);
    const batch = await world.restCall(keys.relay.token, 'POST', '/emails/batch', [email('batch one'), email('batch two')]);
    expect(batch.status).toBe(200);
    const relay = world.delivery.smtp.get(RelayHost);
    const transport = createTransport({
      host: '127.0.0.1',
      port: relay.port('starttls'),
      requireTLS: true,
      auth: { user: 'herald', pass: keys.relay.token },
      tls: { rejectUnauthorized: false },
    });
    const relayed = await transport.sendMail({ from: 'shop@filters.test', to: 'someone@herald.test', subject: 'over smtp', text: 'hi' });
    expect(relayed.response).toMatch(/^250 /);

    expect(await subjectsOf(`api_key_id=${keys.rest.id}`)).toEqual(['rest single']);
    expect(await subjectsOf(`api_key_id=${keys.relay.id.toUpperCase()}`)).toEqual(['batch one', 'batch two', 'over smtp']);
    expect(await subjectsOf(`api_key_id=${keys.relay.id}&q=batch`)).toEqual(['batch one', 'batch two']);
    expect(await subjectsOf('api_key_id=0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b')).toEqual([]);
    const feed = (await owner.get(t('/emails'))).body.data as any[];
    expect(feed.find((e) => e.subject === 'rest single').api_key_id).toBe(keys.rest.id);
    expect(feed.find((e) => e.subject === 'over smtp').api_key_id).toBe(keys.relay.id);
    // Keyset pages within the filter.
    const first = await owner.get(t(`/emails?api_key_id=${keys.relay.id}&limit=2`));
    expect(first.body).toMatchObject({ has_more: true, data: [{ subject: 'over smtp' }, { subject: 'batch two' }] });
    const next = await owner.get(t(`/emails?api_key_id=${keys.relay.id}&limit=2&after=${first.body.data[1].id}`));
    expect(next.body).toMatchObject({ has_more: false, data: [{ subject: 'batch one' }] });

    const bad = await owner.get(t('/emails?api_key_id=key_1'));
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ statusCode: 422, name: 'invalid_parameter', message: expect.stringContaining('`api_key_id`') });
    // Another team's filter finds none of these emails.
    expect((await other.get(t(`/emails?api_key_id=${keys.rest.id}`, otherTeam))).body.data).toEqual([]);
    // Resend's email object does not show the key.
    const rest = await world.restCall(keys.rest.token, 'GET', `/emails/${single.body.id}`);
    expect(rest.body).not.toHaveProperty('api_key_id');
  }, 60_000);

  it('searches the suppression list by any part of an address, any case, page by page', async () => {
    for (const email of ['Jane.Doe@Example.com', 'john@example.com', 'ann_x@other.org', 'annax@other.org', 'zed@else.net']) {
      expect((await owner.post(t('/suppressions'), { email })).status).toBe(201);
    }
    await other.post(t('/suppressions', otherTeam), { email: 'jane.doe@example.com' });
    const search = async (q: string, teamId = team, client = owner) =>
      ((await client.get(t(`/suppressions?q=${encodeURIComponent(q)}`, teamId))).body.data as any[]).map((s) => s.email).sort();

    expect(await search('DOE')).toEqual(['jane.doe@example.com']);
    expect(await search('@EXAMPLE.com')).toEqual(['jane.doe@example.com', 'john@example.com']);
    expect(await search('jo')).toEqual(['john@example.com']); // two characters: the start of the address
    expect(await search('oe')).toEqual([]);
    expect(await search('n_x')).toEqual(['ann_x@other.org']); // `_` is a character here, not a wildcard
    expect(await search('%')).toEqual([]);
    expect(await search('nobody')).toEqual([]);
    expect(await search('example', otherTeam, other)).toEqual(['jane.doe@example.com']);

    const first = await owner.get(t('/suppressions?q=other.org&limit=1'));
    expect(first.body).toMatchObject({ has_more: true, data: [{ email: 'annax@other.org' }] });
    const next = await owner.get(t(`/suppressions?q=other.org&limit=1&after=${first.body.data[0].id}`));
    expect(next.body).toMatchObject({ has_more: false, data: [{ email: 'ann_x@other.org' }] });
    // An id still finds its entry.
    expect(await search(first.body.data[0].id)).toEqual(['annax@other.org']);
    const long = await owner.get(t(`/suppressions?q=${'a'.repeat(321)}`));
    expect(long.body).toMatchObject({ statusCode: 422, name: 'validation_error', message: expect.stringContaining('`q`') });
  }, 60_000);

  it('shows the team log to owners and admins, a person their own account log, and nothing to another team', async () => {
    const invited = await owner.post(t('/invitations'), { email: 'mia@people.test', role: 'member' });
    expect(invited.status).toBe(201);
    const token = linkIn((await world.mailTo('mia@people.test', /Join Filters/)).text)
      .split('/')
      .pop()!;
    const mia = await world.signedIn('mia@people.test', 'mia password 12');
    expect((await mia.post(`/dashboard/api/invitations/${token}/accept`)).status).toBe(200);

    const log = await owner.get(t('/audit-log?limit=100'));
    expect(log.status).toBe(200);
    const actions = (log.body.data as any[]).map((e) => `${e.action} ${e.actor_email}`);
    for (const entry of ['api_key.created olga@people.test', 'user.signed_in olga@people.test', 'member.joined mia@people.test']) {
      expect(actions).toContain(entry);
    }
    expect(actions.some((a) => a.includes('oscar@'))).toBe(false);
    const created = (log.body.data as any[]).find((e) => e.action === 'api_key.created');
    expect(created).toMatchObject({ ip: expect.any(String), user_agent: expect.any(String), created_at: expect.stringMatching(/Z$/) });
    const times = (log.body.data as any[]).map((e) => e.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    const page = await owner.get(t('/audit-log?limit=2'));
    expect(page.body.has_more).toBe(true);
    const after = await owner.get(t(`/audit-log?limit=100&after=${page.body.data[1].id}`));
    expect(after.body.data.map((e: any) => e.id)).toEqual(log.body.data.slice(2).map((e: any) => e.id));

    // A member reads the team's resources but not its log; their own account log is theirs.
    const refused = await mia.get(t('/audit-log'));
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ statusCode: 403, name: 'insufficient_role' });
    const own = await mia.get('/dashboard/api/me/audit-log');
    expect(own.status).toBe(200);
    expect((own.body.data as any[]).map((e) => `${e.action} ${e.actor_email}`)).toEqual(['user.signed_in mia@people.test']);
    const owners = (await owner.get('/dashboard/api/me/audit-log?limit=1')).body;
    expect(owners).toMatchObject({ has_more: false, data: [{ action: 'user.signed_in', actor_email: 'olga@people.test' }] });
    // Another team's log is not found, whatever the caller's role in their own team.
    const foreign = await other.get(t('/audit-log'));
    expect({ status: foreign.status, body: foreign.body }).toEqual({
      status: 404,
      body: { statusCode: 404, name: 'not_found', message: 'Team not found' },
    });
    expect((await new DashboardClient(world.url).get('/dashboard/api/me/audit-log')).status).toBe(401);
  }, 60_000);
});
