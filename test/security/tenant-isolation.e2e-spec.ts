import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { DataSource } from 'typeorm';
import { EmailPlanes } from '@herald/database';
import { DomainsRepository } from '@herald/domains';
import { WebhookMessagesRepository } from '@herald/webhooks';
import { call, markVerified, startTestApi, TestApi, TestTeam } from '../support/api-harness';
import { OpenApiDocument } from '../support/openapi-document';
import { finishedImport } from '../support/contact-imports';
import { routerTable } from '../support/router-table';
import { email, Probe, PUBLIC_DASHBOARD_ROUTES, PUBLIC_ROUTES, Resources, ROWS, SEND_ROUTES } from './tenant-routes';

jest.setTimeout(120_000);

/**
 * Tenant isolation (issue 17, security): for every REST route, team B's keys of every kind
 * against team A's resources. A full-access key gets 404 for A's ids (never 403: that would
 * confirm the id exists), lists and creates that touch only its own team, and 403 for A's
 * sending domain; `sending_access` keys get 401 `restricted_api_key` everywhere but the two send
 * endpoints, where A's domain is refused, and a key restricted to one of B's domains cannot send
 * from B's other domain. A key never opens the dashboard's team routes. At the end team A's
 * resources are all as they were.
 */
describe('tenant isolation: every route, every key kind', () => {
  let api: TestApi;
  let document: OpenApiDocument;
  let a: Resources;
  let b: Resources;
  let keys: { kind: 'full' | 'sending' | 'domain-restricted' | 'none'; token: string | null }[];
  let otherDomainOfB: string;
  let snapshot: Record<string, unknown>;

  /** What A's full key reads of A's resources: compared before and after B's attempts. */
  async function readA(): Promise<Record<string, unknown>> {
    const read = async (path: string) => {
      const reply = await call(api.url, a.team.token, 'GET', path);
      return { status: reply.status, body: reply.body };
    };
    const keyList = (await read('/api-keys')).body.data.map((k: { id: string; name: string }) => ({ id: k.id, name: k.name }));
    const webhook = await read(`/webhooks/${a.webhookId}`);
    return {
      email: await read(`/emails/${a.emailId}`),
      domain: await read(`/domains/${a.team.domainId}`),
      keys: keyList,
      webhook,
      events: await read(`/webhooks/${a.webhookId}/events`),
      suppression: await read(`/suppressions/${a.suppressionId}`),
      suppressions: await read('/suppressions'),
      contact: await read(`/contacts/${a.contactId}`),
      contactSegments: await read(`/contacts/${a.contactId}/segments`),
      contactTopics: await read(`/contacts/${a.contactId}/topics`),
      segment: await read(`/segments/${a.segmentId}`),
      topic: await read(`/topics/${a.topicId}`),
      property: await read(`/contact-properties/${a.propertyId}`),
    };
  }

  async function resourcesOf(team: TestTeam, label: string): Promise<Resources> {
    const ok = async (method: string, path: string, body?: unknown) => {
      const reply = await call(api.url, team.token, method, path, body);
      if (reply.status !== 200 && reply.status !== 201) throw new Error(`${method} ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
      return reply.body;
    };
    const emailId = (await ok('POST', '/emails', email(team.from()))).id;
    const keyId = (await ok('POST', '/api-keys', { name: `${label} key` })).id;
    const webhookEndpoint = `https://${label}.example/hooks/${randomUUID()}`;
    const webhookId = (await ok('POST', '/webhooks', { endpoint: webhookEndpoint, events: ['email.sent'] })).id;
    // The webhooks role writes the event log; one event is fanned out here as it would.
    const messages = new WebhookMessagesRepository(api.app.get(EmailPlanes), api.app.get(DataSource));
    await messages.fanOut({
      id: randomUUID(),
      teamId: team.teamId,
      type: 'email.sent',
      payload: { type: 'email.sent', created_at: new Date().toISOString(), data: { email_id: emailId } },
    });
    const eventId = (await ok('GET', `/webhooks/${webhookId}/events`)).data[0].id;
    const suppressedEmail = `${label}-${randomUUID().slice(0, 8)}@customers.example`;
    const suppressionId = (await ok('POST', '/suppressions', { email: suppressedEmail })).id;
    const propertyId = (await ok('POST', '/contact-properties', { key: 'plan', type: 'string', fallback_value: 'free' })).id;
    const segmentId = (await ok('POST', '/segments', { name: `${label} segment` })).id;
    const topicId = (await ok('POST', '/topics', { name: `${label} topic`, default_subscription: 'opt_in' })).id;
    const contactEmail = `${label}-${randomUUID().slice(0, 8)}@people.example`;
    const contactId = (
      await ok('POST', '/contacts', {
        email: contactEmail,
        first_name: label,
        properties: { plan: 'pro' },
        segments: [{ id: segmentId }],
        topics: [{ id: topicId, subscription: 'opt_out' }],
      })
    ).id;
    const form = new FormData();
    form.append('file', new Blob([`email,first_name\n${label}-imported@people.example,${label}\n`], { type: 'text/csv' }), 'contacts.csv');
    const imported = await fetch(`${api.url}/contacts/imports`, { method: 'POST', headers: { authorization: `Bearer ${team.token}` }, body: form });
    if (imported.status !== 202) throw new Error(`POST /contacts/imports: ${imported.status} ${await imported.text()}`);
    const importId = ((await imported.json()) as { id: string }).id;
    // Written in the background: the snapshot compares the finished import.
    await finishedImport(team.resend, importId);
    const broadcastId = (await ok('POST', '/broadcasts', { from: team.from(), subject: `${label} news`, segment_id: segmentId, html: '<p>Hi</p>' }))
      .id;
    return {
      broadcastId,
      importId,
      team,
      emailId,
      keyId,
      webhookId,
      webhookEndpoint,
      eventId,
      suppressionId,
      suppressedEmail,
      contactId,
      contactEmail,
      segmentId,
      topicId,
      propertyId,
    };
  }

  /** Strings that would betray team A in a reply to team B. */
  const markersOfA = () => [
    a.emailId,
    a.keyId,
    a.webhookId,
    a.eventId,
    a.suppressionId,
    a.team.domainId,
    a.team.domain,
    a.webhookEndpoint,
    a.team.teamId,
    a.contactId,
    a.contactEmail,
    a.segmentId,
    a.topicId,
    a.propertyId,
    a.importId,
    a.broadcastId,
  ];

  beforeAll(async () => {
    api = await startTestApi();
    document = new OpenApiDocument((await call(api.url, null, 'GET', '/openapi.json')).body);
    a = await resourcesOf(await api.team(), 'alpha');
    b = await resourcesOf(await api.team(), 'beta');
    const second = await call(api.url, b.team.token, 'POST', '/domains', { name: `second-${randomUUID().slice(0, 8)}.beta.test` });
    await markVerified(api.app.get(DomainsRepository), second.body.id);
    otherDomainOfB = second.body.name;
    const restricted = await call(api.url, b.team.token, 'POST', '/api-keys', {
      name: 'B, first domain only',
      permission: 'sending_access',
      domain_id: b.team.domainId,
    });
    keys = [
      { kind: 'full', token: b.team.token },
      { kind: 'sending', token: await api.key(b.team.teamId, 'sending_access') },
      { kind: 'domain-restricted', token: restricted.body.token },
      { kind: 'none', token: null },
    ];
    snapshot = await readA();
  });
  afterAll(async () => {
    await api?.close();
  });

  const apiRoutes = () =>
    document
      .operations()
      .filter(([, op]) => op.security === undefined || op.security.length > 0)
      .map(([route]) => route);

  /** A probe as sent: its JSON body, or its multipart form. */
  const ask = async (token: string | null, method: string, probe: Probe) => {
    if (!probe.form) return call(api.url, token, method, probe.path, probe.body);
    const form = new FormData();
    for (const [name, value] of Object.entries(probe.form)) form.append(name, value);
    const reply = await fetch(`${api.url}${probe.path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {}, body: form });
    const text = await reply.text();
    return { status: reply.status, body: text ? JSON.parse(text) : null };
  };

  it('has a row for every route that needs a key, and the router serves no route outside the document', () => {
    const routes = apiRoutes();
    expect(routes.length).toBeGreaterThan(30);
    expect(routes.filter((route) => !ROWS[route])).toEqual([]);
    expect(Object.keys(ROWS).filter((route) => !routes.includes(route))).toEqual([]);
    const documented = document.operations().map(([route]) => route);
    const undocumented = routerTable(api.app.getHttpAdapter().getInstance() as unknown as FastifyInstance)
      .filter((route) => !route.startsWith('head ') && !route.includes(' /dashboard') && !route.endsWith('*') && route !== 'get /')
      .filter((route) => !documented.includes(route) && !PUBLIC_ROUTES.includes(route));
    expect(undocumented).toEqual([]);
    const publicInDocument = document
      .operations()
      .filter(([, op]) => op.security?.length === 0 && !op.tags.includes('operations'))
      .map(([route]) => route);
    expect(publicInDocument.sort()).toEqual(PUBLIC_ROUTES.filter((route) => documented.includes(route)).sort());
  });

  it("shows the probes are real: team A's own key reads each of A's resources", async () => {
    for (const route of apiRoutes().filter((r) => r.startsWith('get ') && r.includes('{'))) {
      for (const probe of ROWS[route]!(a, a)) {
        const reply = await call(api.url, a.team.token, 'GET', probe.path);
        expect({ route, path: probe.path, status: reply.status }).toEqual({ route, path: probe.path, status: 200 });
      }
    }
  });

  it("gives team B's full-access key 404 for A's ids, only its own data in lists, and 403 for A's domain", async () => {
    const probes = apiRoutes().flatMap((route) => ROWS[route]!(a, b).map((probe) => ({ route, probe })));
    // Reads before writes: B's own suppression of A's address (allowed) must not be taken for a leak.
    const ordered = [
      ...probes.filter(({ probe }) => probe.full !== 'own' || !probe.body),
      ...probes.filter(({ probe }) => probe.full === 'own' && probe.body),
    ];
    const table: string[] = [];
    for (const { route, probe } of ordered) {
      const method = route.split(' ')[0]!.toUpperCase();
      const reply = await ask(b.team.token, method, probe);
      const seen = { route, path: probe.path, status: reply.status, name: reply.body?.name };
      table.push(`${route.padEnd(46)} ${probe.path.replace(/[0-9a-f-]{36}|msg_\w+/g, ':id').padEnd(50)} ${reply.status}`);
      if (probe.full === 'not_found') {
        expect(seen).toEqual({ ...seen, status: 404, name: 'not_found' });
      } else if (probe.full === 'own') {
        expect({ ...seen, ok: reply.status === 200 || reply.status === 201 }).toEqual({ ...seen, ok: true });
        if (method === 'GET') {
          const leaked = markersOfA().filter((marker) => JSON.stringify(reply.body).includes(marker));
          expect({ route, leaked }).toEqual({ route, leaked: [] });
        }
      } else {
        expect(seen).toEqual({ ...seen, status: probe.full.status, name: probe.full.name });
        expect(JSON.stringify(reply.body)).not.toContain(a.team.teamId);
      }
    }
    console.log(`team B's full-access key against team A:\n${table.join('\n')}`);
  });

  it('refuses every route but the two send endpoints to sending_access keys (restricted or not), and every route to no key', async () => {
    for (const { kind, token } of keys.filter((k) => k.kind !== 'full')) {
      for (const route of apiRoutes()) {
        if (kind !== 'none' && SEND_ROUTES.includes(route)) continue;
        for (const probe of ROWS[route]!(a, b)) {
          const reply = await ask(token, route.split(' ')[0]!.toUpperCase(), probe);
          const expected = kind === 'none' ? 'missing_api_key' : 'restricted_api_key';
          expect({ kind, route, status: reply.status, name: reply.body?.name }).toEqual({ kind, route, status: 401, name: expected });
        }
      }
    }
  });

  it("lets no key kind of B send from A's domain, nor a domain-restricted key from B's other domain", async () => {
    const send = (token: string, from: string, batch: boolean) =>
      batch
        ? call(api.url, token, 'POST', '/emails/batch', [email(b.team.from()), email(from)])
        : call(api.url, token, 'POST', '/emails', email(from));
    for (const { kind, token } of keys.filter((k) => k.token !== null)) {
      for (const batch of [false, true]) {
        const theirs = await send(token!, a.team.from('ceo'), batch);
        expect({ kind, batch, status: theirs.status, name: theirs.body.name }).toEqual({ kind, batch, status: 403, name: 'validation_error' });
        expect(theirs.body.message).toContain(a.team.domain);
        const other = await send(token!, `hello@${otherDomainOfB}`, batch);
        const allowed = kind !== 'domain-restricted';
        expect({ kind, batch, status: other.status }).toEqual({ kind, batch, status: allowed ? 200 : 403 });
        // And each of them does send from B's first domain (the refusals are not a broken key).
        const own = await send(token!, b.team.from(), false);
        expect({ kind, status: own.status }).toEqual({ kind, status: 200 });
      }
    }
  });

  it("keeps Idempotency-Keys per team: B reusing A's key never gets A's saved answer", async () => {
    const key = `order-${randomUUID()}`;
    const body = email(a.team.from('orders'));
    const first = await call(api.url, a.team.token, 'POST', '/emails', body, { 'idempotency-key': key });
    expect(first.status).toBe(200);
    // The same key and the very same body from team B: judged as B's own request (A's domain: 403), not replayed.
    const same = await call(api.url, b.team.token, 'POST', '/emails', body, { 'idempotency-key': key });
    expect({ status: same.status, name: same.body.name }).toEqual({ status: 403, name: 'validation_error' });
    expect(JSON.stringify(same.body)).not.toContain(first.body.id);
    for (const [kind, token] of keys.filter((k) => k.kind !== 'full' && k.token).map((k) => [k.kind, k.token!])) {
      const replay = await call(api.url, token, 'POST', '/emails', body, { 'idempotency-key': key });
      expect({ kind, status: replay.status }).toEqual({ kind, status: 403 });
    }
    // The same key with B's own email: a new email of B's, not a conflict with A's request.
    const own = await call(api.url, b.team.token, 'POST', '/emails', email(b.team.from('orders')), { 'idempotency-key': key });
    expect(own.status).toBe(200);
    expect(own.body.id).not.toBe(first.body.id);
    // A's replay is still A's.
    expect((await call(api.url, a.team.token, 'POST', '/emails', body, { 'idempotency-key': key })).body.id).toBe(first.body.id);
  });

  it("never lets a key into the dashboard's routes, team A's or any other", async () => {
    const routes = routerTable(api.app.getHttpAdapter().getInstance() as unknown as FastifyInstance).filter(
      (route) => route.includes(' /dashboard/api/') && !route.startsWith('head ') && !route.endsWith('*') && !PUBLIC_DASHBOARD_ROUTES.includes(route),
    );
    expect(routes.length).toBeGreaterThan(30);
    const ids: Record<string, string> = { teamId: a.team.teamId, id: randomUUID(), messageId: a.eventId, userId: randomUUID(), token: 'x' };
    // A valid CSRF pair, so that state changes are judged on the key, not refused for want of the token.
    const csrf = await fetch(`${api.url}/dashboard/api/csrf`);
    const cookie = csrf.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const csrfHeaders = { cookie, 'x-csrf-token': ((await csrf.json()) as { token: string }).token };
    for (const { kind, token } of keys.filter((k) => k.token !== null)) {
      for (const route of routes) {
        const [method, template] = route.split(' ');
        const path = template!.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? randomUUID());
        const reply = await call(api.url, token, method!.toUpperCase(), path, method === 'get' || method === 'delete' ? undefined : {}, csrfHeaders);
        expect({ kind, route, status: reply.status, name: reply.body?.name }).toEqual({ kind, route, status: 401, name: 'session_required' });
      }
    }
  });

  it('leaves every resource of team A as it was', async () => {
    expect(await readA()).toEqual(snapshot);
  });
});
