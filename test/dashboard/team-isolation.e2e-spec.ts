import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { DataSource } from 'typeorm';
import { EmailPlanes } from '@herald/database';
import { DomainsRepository } from '@herald/domains';
import { SystemMailer } from '@herald/people';
import { WebhookMessagesRepository } from '@herald/webhooks';
import { call, markVerified, startTestApi, type TestApi } from '../support/api-harness';
import { DashboardClient, type DashboardResponse } from '../support/dashboard-client';
import { verifiedUser } from '../support/dashboard-browser';
import { routerTable } from '../support/router-table';
import { contactsCsv, markersOf, ROWS, TEAM_PREFIX, type TeamResources } from './team-routes';

jest.setTimeout(120_000);

/**
 * Team isolation through the dashboard API (issue 13, security), for every route the router
 * serves under /dashboard/api/teams/{teamId} (team-routes.ts has a row for each, checked against
 * the router's own table), both ways and for both teams: the other team's teamId answers 404
 * `Team not found` whatever is asked of it, and the other team's ids under the caller's own
 * teamId answer 404 (never 403, which would confirm the id exists), while lists and creates
 * touch only the caller's team. At the end both teams' resources are as they were.
 */
describe('dashboard team isolation: every team route, both ways', () => {
  let api: TestApi;
  let a: TeamResources;
  let b: TeamResources;
  let snapshots: Record<string, unknown>;

  const at = (team: TeamResources, path: string) => `/dashboard/api/teams/${team.teamId}${path}`;
  /** A probe's request: a state change without a body sends `{}`, as the SPA does. */
  const ask = (caller: TeamResources, route: string, team: TeamResources, path: string, body?: unknown): Promise<DashboardResponse> => {
    const method = route.split(' ')[0]!.toUpperCase();
    const sent = body ?? (method === 'GET' || method === 'DELETE' ? undefined : {});
    return caller.client.request(method, at(team, path), sent);
  };

  async function teamOf(label: string): Promise<TeamResources> {
    const ownerEmail = `${label}@people.test`;
    const password = `${label} password 1`;
    await verifiedUser(api, ownerEmail, password);
    const client = await new DashboardClient(api.url).start();
    const signIn = await client.auth('/sign-in/email', { email: ownerEmail, password });
    if (signIn.status !== 200) throw new Error(`sign-in of ${ownerEmail}: ${signIn.status} ${JSON.stringify(signIn.body)}`);
    const me = (await client.get('/dashboard/api/me')).body;
    const teamId: string = me.teams[0].id;
    const ok = async (what: string, reply: Promise<{ status: number; body: any }>) => {
      const { status, body } = await reply;
      if (status < 200 || status > 299) throw new Error(`${label}: ${what} answered ${status} ${JSON.stringify(body)}`);
      return body;
    };
    const dash = (method: string, path: string, body?: unknown) =>
      ok(`${method} ${path}`, client.request(method, `/dashboard/api/teams/${teamId}${path}`, body));

    const domainName = `${label}.test`;
    const domainId = (await dash('POST', '/domains', { name: domainName })).id;
    await markVerified(api.app.get(DomainsRepository), domainId);
    const key = await dash('POST', '/api-keys', { name: `${label} key`, permission: 'full_access' });
    const rest = (method: string, path: string, body?: unknown) => ok(`REST ${method} ${path}`, call(api.url, key.token, method, path, body));
    const emailId = (await rest('POST', '/emails', { from: `shop@${domainName}`, to: 'someone@example.com', subject: `${label} hello`, text: 'Hi' }))
      .id;
    const webhookEndpoint = `https://${label}.example/hooks/${randomUUID()}`;
    const webhookId = (await dash('POST', '/webhooks', { endpoint: webhookEndpoint, events: ['email.sent'] })).id;
    // The webhooks role writes the delivery log; one event is fanned out here as it would.
    await new WebhookMessagesRepository(api.app.get(EmailPlanes), api.app.get(DataSource)).fanOut({
      id: randomUUID(),
      teamId,
      type: 'email.sent',
      payload: { type: 'email.sent', created_at: new Date().toISOString(), data: { email_id: emailId } },
    });
    const messageId = (await dash('GET', `/webhooks/${webhookId}/messages`)).data[0].id;
    const suppressedEmail = `${label}-${randomUUID().slice(0, 8)}@customers.example`;
    const suppressionId = (await dash('POST', '/suppressions', { email: suppressedEmail })).id;
    const propertyId = (await rest('POST', '/contact-properties', { key: 'plan', type: 'string', fallback_value: 'free' })).id;
    const segmentId = (await rest('POST', '/segments', { name: `${label} segment` })).id;
    const topicId = (await rest('POST', '/topics', { name: `${label} topic`, default_subscription: 'opt_in' })).id;
    const contactEmail = `${label}-${randomUUID().slice(0, 8)}@people.example`;
    const contact = { email: contactEmail, first_name: label, segments: [{ id: segmentId }], topics: [{ id: topicId, subscription: 'opt_out' }] };
    const contactId = (await rest('POST', '/contacts', contact)).id;
    const importId = (await dash('POST', '/contact-imports', contactsCsv(`${label}-imported@people.example`))).id;
    // Its rows are written in the background: the snapshots compare the finished import.
    for (let tries = 0; (await dash('GET', `/contact-imports/${importId}`)).status !== 'completed'; tries++) {
      if (tries > 300) throw new Error(`${label}: the contact import ${importId} did not complete`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const broadcast = { from: `news@${domainName}`, subject: `${label} news`, segment_id: segmentId, html: '<p>Hi</p>' };
    const broadcastId = (await dash('POST', '/broadcasts', broadcast)).id;
    const invitationId = (await dash('POST', '/invitations', { email: `${label}-invitee@people.test`, role: 'member' })).id;
    return {
      label,
      client,
      teamId,
      userId: me.user.id,
      ownerEmail,
      domainId,
      domainName,
      emailId,
      keyId: key.id,
      webhookId,
      webhookEndpoint,
      messageId,
      suppressionId,
      suppressedEmail,
      contactId,
      contactEmail,
      segmentId,
      topicId,
      propertyId,
      importId,
      broadcastId,
      invitationId,
    };
  }

  /** What a team's owner reads of the team's own resources: compared before and after the other team's attempts. */
  async function snapshot(team: TeamResources): Promise<Record<string, unknown>> {
    const read = async (path: string) => {
      const reply = await team.client.get(at(team, path));
      return { status: reply.status, body: reply.body };
    };
    return {
      domain: await read(`/domains/${team.domainId}`),
      email: await read(`/emails/${team.emailId}`),
      keys: (await read('/api-keys')).body.data.map((k: { id: string; name: string }) => ({ id: k.id, name: k.name })),
      webhook: await read(`/webhooks/${team.webhookId}`),
      secret: await read(`/webhooks/${team.webhookId}/secret`),
      message: await read(`/webhooks/${team.webhookId}/messages/${team.messageId}`),
      suppression: await read(`/suppressions?q=${team.suppressionId}`),
      contact: await read(`/contacts/${team.contactId}`),
      import: await read(`/contact-imports/${team.importId}`),
      broadcast: await read(`/broadcasts/${team.broadcastId}`),
      members: await read('/members'),
      invitation: (await read('/invitations')).body.data.find((i: { id: string }) => i.id === team.invitationId),
    };
  }

  /** The router's own table of team routes, as `method /path` after the team's prefix. */
  const teamRoutes = () =>
    routerTable(api.app.getHttpAdapter().getInstance() as unknown as FastifyInstance)
      .filter((route) => !route.startsWith('head ') && route.includes(` ${TEAM_PREFIX}/`))
      .map((route) => route.replace(` ${TEAM_PREFIX}/`, ' /'));

  beforeAll(async () => {
    api = await startTestApi();
    // The dashboard's own mail (verification links, invitations) is accepted, as on a verified MAIL_DOMAIN.
    await markVerified(api.app.get(DomainsRepository), (await api.app.get(SystemMailer).systemSender()).domainId);
    a = await teamOf('alpha');
    b = await teamOf('beta');
    snapshots = { a: await snapshot(a), b: await snapshot(b) };
  });

  afterAll(async () => {
    await api?.close();
  });

  it('has a row for every team route the router serves, and no row without a route', () => {
    const routes = teamRoutes();
    expect(routes.length).toBeGreaterThan(50);
    expect(routes.filter((route) => !ROWS[route])).toEqual([]);
    expect(Object.keys(ROWS).filter((route) => !routes.includes(route))).toEqual([]);
  });

  it('shows the probes are real: each owner reads every resource the probes name, through every GET route, on the own team', async () => {
    for (const team of [a, b]) {
      for (const route of teamRoutes().filter((r) => r.startsWith('get '))) {
        for (const probe of ROWS[route]!(team, team)) {
          const reply = await ask(team, route, team, probe.path);
          expect({ team: team.label, route, path: probe.path, status: reply.status }).toEqual({
            team: team.label,
            route,
            path: probe.path,
            status: 200,
          });
        }
      }
    }
  });

  it('answers 404 Team not found to a member of the other team for every route of a team, whatever ids it names', async () => {
    for (const [caller, other] of [
      [a, b],
      [b, a],
    ] as const) {
      for (const route of teamRoutes()) {
        for (const probe of ROWS[route]!(other, other)) {
          const reply = await ask(caller, route, other, probe.path, probe.body);
          const seen = { caller: caller.label, route, path: probe.path, status: reply.status, body: reply.body };
          expect(seen).toEqual({ ...seen, status: 404, body: { statusCode: 404, name: 'not_found', message: 'Team not found' } });
        }
      }
    }
  });

  it("answers 404 for the other team's ids on the caller's own team, and lists and creates only the caller's own data", async () => {
    const table: string[] = [];
    for (const [caller, other] of [
      [a, b],
      [b, a],
    ] as const) {
      const probes = teamRoutes().flatMap((route) => ROWS[route]!(other, caller).map((probe) => ({ route, probe })));
      // Reads before writes: the caller's own suppression of the other team's address (allowed) must not be taken for a leak.
      const writes = ({ route, probe }: (typeof probes)[number]) => probe.outcome === 'own' && !route.startsWith('get ');
      for (const { route, probe } of [...probes.filter((p) => !writes(p)), ...probes.filter(writes)]) {
        const reply = await ask(caller, route, caller, probe.path, probe.body);
        const seen = { caller: caller.label, route, path: probe.path, status: reply.status, name: reply.body?.name };
        table.push(`${caller.label} ${route.padEnd(52)} ${probe.path.replace(/[0-9a-f-]{36}|msg_\w+/g, ':id').padEnd(44)} ${reply.status}`);
        if (probe.outcome === 'not_found') {
          expect(seen).toEqual({ ...seen, status: 404, name: 'not_found' });
        } else if (probe.outcome === 'own') {
          expect({ ...seen, ok: reply.status >= 200 && reply.status <= 299 }).toEqual({ ...seen, ok: true });
        } else {
          expect(seen).toEqual({ ...seen, status: probe.outcome.status, name: probe.outcome.name });
        }
        if (route.startsWith('get ') || probe.outcome !== 'own') {
          // What the caller named itself may be echoed (an id in "not found"); nothing else of the other team may appear.
          const asked = decodeURIComponent(probe.path) + JSON.stringify(probe.body ?? '');
          const leaked = markersOf(other).filter((marker) => JSON.stringify(reply.body ?? '').includes(marker) && !asked.includes(marker));
          expect({ route, path: probe.path, leaked }).toEqual({ route, path: probe.path, leaked: [] });
        }
      }
    }
    console.log(`each owner on the own team, asking about the other team:\n${table.join('\n')}`);
  });

  it('leaves every resource of both teams as it was', async () => {
    expect({ a: await snapshot(a), b: await snapshot(b) }).toEqual(snapshots);
  });
});
