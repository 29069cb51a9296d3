import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { DataSource } from 'typeorm';
import { DomainsRepository } from '@herald/domains';
import { WebhookMessagesRepository } from '@herald/webhooks';
import { call, markVerified, startTestApi, TestApi, TestTeam } from '../support/api-harness';
import { OpenApiDocument } from '../support/openapi-document';
import { routerTable } from '../support/router-table';

jest.setTimeout(120_000);

/** One team's resources: one of each kind the REST API serves. */
interface Resources {
  team: TestTeam;
  emailId: string;
  keyId: string;
  webhookId: string;
  webhookEndpoint: string;
  eventId: string;
  suppressionId: string;
  suppressedEmail: string;
  contactId: string;
  contactEmail: string;
  segmentId: string;
  topicId: string;
  propertyId: string;
  importId: string;
  broadcastId: string;
}

/**
 * What team B's full-access key gets for a request about team A: `not_found` (404, as Resend
 * answers for another account's id), `own` (2xx, and nothing of team A in the body: a list or a
 * create that touches only B's own data), or an exact error.
 */
type Outcome = 'not_found' | 'own' | { status: number; name: string };
interface Probe {
  path: string;
  body?: unknown;
  full: Outcome;
}

/**
 * Every REST route, what team B asks of it about team A's resources. A route of the document
 * without a row fails the suite, so a new endpoint cannot ship without saying how it keeps teams
 * apart. Routes with two ids are asked with A's pair and with B's parent over A's child.
 */
const ROWS: Record<string, (a: Resources, b: Resources) => Probe[]> = {
  'post /emails': (a) => [{ path: '/emails', body: email(a.team.from('ceo')), full: refusedDomain }],
  'post /emails/batch': (a, b) => [{ path: '/emails/batch', body: [email(b.team.from()), email(a.team.from('ceo'))], full: refusedDomain }],
  'get /emails': () => [{ path: '/emails', full: 'own' }],
  'get /emails/{id}': (a) => [{ path: `/emails/${a.emailId}`, full: 'not_found' }],
  'get /emails/{id}/insights': (a) => [{ path: `/emails/${a.emailId}/insights`, full: 'not_found' }],
  'patch /emails/{id}': (a) => [{ path: `/emails/${a.emailId}`, body: { scheduled_at: inHours(3) }, full: 'not_found' }],
  'post /emails/{id}/cancel': (a) => [{ path: `/emails/${a.emailId}/cancel`, full: 'not_found' }],
  'post /api-keys': (a) => [
    {
      path: '/api-keys',
      body: { name: 'theirs', permission: 'sending_access', domain_id: a.team.domainId },
      full: { status: 422, name: 'validation_error' },
    },
  ],
  'get /api-keys': () => [{ path: '/api-keys', full: 'own' }],
  'patch /api-keys/{id}': (a) => [{ path: `/api-keys/${a.keyId}`, body: { name: 'taken over' }, full: 'not_found' }],
  'delete /api-keys/{id}': (a) => [{ path: `/api-keys/${a.keyId}`, full: 'not_found' }],
  'post /domains': (a) => [{ path: '/domains', body: { name: a.team.domain }, full: { status: 403, name: 'validation_error' } }],
  'get /domains': () => [{ path: '/domains', full: 'own' }],
  'get /domains/{id}': (a) => [{ path: `/domains/${a.team.domainId}`, full: 'not_found' }],
  'patch /domains/{id}': (a) => [{ path: `/domains/${a.team.domainId}`, body: { open_tracking: true }, full: 'not_found' }],
  'delete /domains/{id}': (a) => [{ path: `/domains/${a.team.domainId}`, full: 'not_found' }],
  'post /domains/{id}/verify': (a) => [{ path: `/domains/${a.team.domainId}/verify`, full: 'not_found' }],
  'post /domains/{id}/dkim/rotate': (a) => [{ path: `/domains/${a.team.domainId}/dkim/rotate`, full: 'not_found' }],
  'post /domains/{id}/resume': (a) => [{ path: `/domains/${a.team.domainId}/resume`, full: 'not_found' }],
  'post /suppressions': (a) => [{ path: '/suppressions', body: { email: a.suppressedEmail }, full: 'own' }],
  'get /suppressions': () => [{ path: '/suppressions', full: 'own' }],
  'get /suppressions/{idOrEmail}': (a) => [
    { path: `/suppressions/${a.suppressionId}`, full: 'not_found' },
    { path: `/suppressions/${encodeURIComponent(a.suppressedEmail)}`, full: 'not_found' },
  ],
  'delete /suppressions/{idOrEmail}': (a) => [
    { path: `/suppressions/${a.suppressionId}`, full: 'not_found' },
    { path: `/suppressions/${encodeURIComponent(a.suppressedEmail)}`, full: 'not_found' },
  ],
  'post /suppressions/batch/add': (a) => [{ path: '/suppressions/batch/add', body: { emails: [a.suppressedEmail] }, full: 'own' }],
  'post /suppressions/batch/remove': (a) => [{ path: '/suppressions/batch/remove', body: { emails: [a.suppressedEmail] }, full: 'own' }],
  'post /webhooks': (a) => [{ path: '/webhooks', body: { endpoint: a.webhookEndpoint, events: ['email.sent'] }, full: 'own' }],
  'get /webhooks': () => [{ path: '/webhooks', full: 'own' }],
  'get /webhooks/{id}': (a) => [{ path: `/webhooks/${a.webhookId}`, full: 'not_found' }],
  'patch /webhooks/{id}': (a) => [
    { path: `/webhooks/${a.webhookId}`, body: { endpoint: 'https://attacker.example/hook', status: 'enabled' }, full: 'not_found' },
  ],
  'delete /webhooks/{id}': (a) => [{ path: `/webhooks/${a.webhookId}`, full: 'not_found' }],
  'post /webhooks/{id}/signing-secret/rotate': (a) => [{ path: `/webhooks/${a.webhookId}/signing-secret/rotate`, full: 'not_found' }],
  'get /webhooks/{id}/events': (a, b) => [
    { path: `/webhooks/${a.webhookId}/events`, full: 'not_found' },
    { path: `/webhooks/${b.webhookId}/events`, full: 'own' },
  ],
  'get /webhooks/{id}/events/{eventId}': (a, b) => [
    { path: `/webhooks/${a.webhookId}/events/${a.eventId}`, full: 'not_found' },
    { path: `/webhooks/${b.webhookId}/events/${a.eventId}`, full: 'not_found' },
  ],
  'post /webhooks/{id}/events/{eventId}/replay': (a, b) => [
    { path: `/webhooks/${a.webhookId}/events/${a.eventId}/replay`, full: 'not_found' },
    { path: `/webhooks/${b.webhookId}/events/${a.eventId}/replay`, full: 'not_found' },
  ],
  'get /webhooks/{id}/events/{eventId}/attempts': (a, b) => [
    { path: `/webhooks/${a.webhookId}/events/${a.eventId}/attempts`, full: 'not_found' },
    { path: `/webhooks/${b.webhookId}/events/${a.eventId}/attempts`, full: 'not_found' },
  ],
  'post /contacts': (a) => [{ path: '/contacts', body: { email: a.contactEmail, first_name: 'Theirs' }, full: 'own' }],
  'get /contacts': () => [{ path: '/contacts', full: 'own' }],
  ...contactRows(['get', 'patch', 'delete'], '', { first_name: 'Taken' }),
  ...contactRows(['get', 'patch'], '/topics', undefined),
  ...contactRows(['get'], '/segments', undefined),
  'post /contacts/{idOrEmail}/segments/{segmentId}': (a, b) => contactInSegment(a, b),
  'delete /contacts/{idOrEmail}/segments/{segmentId}': (a, b) => contactInSegment(a, b),
  'post /segments': () => [{ path: '/segments', body: { name: 'Theirs' }, full: 'own' }],
  'get /segments': () => [{ path: '/segments', full: 'own' }],
  'get /segments/{id}': (a) => [{ path: `/segments/${a.segmentId}`, full: 'not_found' }],
  'patch /segments/{id}': (a) => [{ path: `/segments/${a.segmentId}`, body: { name: 'Taken' }, full: 'not_found' }],
  'delete /segments/{id}': (a) => [{ path: `/segments/${a.segmentId}`, full: 'not_found' }],
  'get /segments/{id}/contacts': (a) => [{ path: `/segments/${a.segmentId}/contacts`, full: 'not_found' }],
  'post /topics': () => [{ path: '/topics', body: { name: 'Theirs', default_subscription: 'opt_in' }, full: 'own' }],
  'get /topics': () => [{ path: '/topics', full: 'own' }],
  'get /topics/{id}': (a) => [{ path: `/topics/${a.topicId}`, full: 'not_found' }],
  'patch /topics/{id}': (a) => [{ path: `/topics/${a.topicId}`, body: { name: 'Taken' }, full: 'not_found' }],
  'delete /topics/{id}': (a) => [{ path: `/topics/${a.topicId}`, full: 'not_found' }],
  'post /contact-properties': () => [{ path: '/contact-properties', body: { key: 'tier', type: 'string', fallback_value: 'free' }, full: 'own' }],
  'get /contact-properties': () => [{ path: '/contact-properties', full: 'own' }],
  'get /contact-properties/{id}': (a) => [{ path: `/contact-properties/${a.propertyId}`, full: 'not_found' }],
  'patch /contact-properties/{id}': (a) => [{ path: `/contact-properties/${a.propertyId}`, body: { fallback_value: 'taken' }, full: 'not_found' }],
  'delete /contact-properties/{id}': (a) => [{ path: `/contact-properties/${a.propertyId}`, full: 'not_found' }],
  // Not in the document (the older SDKs' /audiences, segments by their former name; the multipart
  // import), so listed here by hand, and the router check below knows them.
  'post /audiences': () => [{ path: '/audiences', body: { name: 'Theirs' }, full: 'own' }],
  'get /audiences': () => [{ path: '/audiences', full: 'own' }],
  'get /audiences/{id}': (a) => [{ path: `/audiences/${a.segmentId}`, full: 'not_found' }],
  'delete /audiences/{id}': (a) => [{ path: `/audiences/${a.segmentId}`, full: 'not_found' }],
  'post /audiences/{id}/contacts': (a) => [{ path: `/audiences/${a.segmentId}/contacts`, body: { email: 'new@people.example' }, full: 'not_found' }],
  'get /audiences/{id}/contacts': (a) => [{ path: `/audiences/${a.segmentId}/contacts`, full: 'not_found' }],
  'get /audiences/{id}/contacts/{idOrEmail}': (a, b) => audienceContact(a, b),
  'patch /audiences/{id}/contacts/{idOrEmail}': (a, b) => audienceContact(a, b, { first_name: 'Taken' }),
  'delete /audiences/{id}/contacts/{idOrEmail}': (a, b) => audienceContact(a, b),
  'get /contacts/imports': () => [{ path: '/contacts/imports', full: 'own' }],
  'get /contacts/imports/{id}': (a) => [{ path: `/contacts/imports/${a.importId}`, full: 'not_found' }],
  'post /broadcasts': (a, b) => [
    { path: '/broadcasts', body: { from: b.team.from(), subject: 'Theirs', segment_id: a.segmentId, html: '<p>Hi</p>' }, full: segmentUnknown },
  ],
  'get /broadcasts': () => [{ path: '/broadcasts', full: 'own' }],
  'get /broadcasts/{id}': (a) => [{ path: `/broadcasts/${a.broadcastId}`, full: 'not_found' }],
  'patch /broadcasts/{id}': (a) => [{ path: `/broadcasts/${a.broadcastId}`, body: { subject: 'Taken' }, full: 'not_found' }],
  'delete /broadcasts/{id}': (a) => [{ path: `/broadcasts/${a.broadcastId}`, full: 'not_found' }],
  'post /broadcasts/{id}/send': (a) => [{ path: `/broadcasts/${a.broadcastId}/send`, full: 'not_found' }],
  'post /broadcasts/{id}/cancel': (a) => [{ path: `/broadcasts/${a.broadcastId}/cancel`, full: 'not_found' }],
  'post /broadcasts/{id}/duplicate': (a) => [{ path: `/broadcasts/${a.broadcastId}/duplicate`, full: 'not_found' }],
  'get /stats': (a) => [
    { path: '/stats', full: 'own' },
    { path: `/stats?domain_id=${a.team.domainId}`, full: 'not_found' },
  ],
};

/** A contact route (`/contacts/{idOrEmail}<suffix>`) asked about A's contact by id and by address. */
function contactRows(methods: string[], suffix: string, body: unknown): Record<string, (a: Resources, b: Resources) => Probe[]> {
  const bodyOf = (method: string) =>
    method === 'patch' ? (suffix === '/topics' ? [{ id: randomUUID(), subscription: 'opt_out' }] : body) : undefined;
  return Object.fromEntries(
    methods.map((method) => [
      `${method} /contacts/{idOrEmail}${suffix}`,
      (a: Resources) => [
        { path: `/contacts/${a.contactId}${suffix}`, body: bodyOf(method), full: 'not_found' as const },
        { path: `/contacts/${encodeURIComponent(a.contactEmail)}${suffix}`, body: bodyOf(method), full: 'not_found' as const },
      ],
    ]),
  );
}

/** A's contact in A's segment, and B's contact in A's segment. */
const contactInSegment = (a: Resources, b: Resources): Probe[] => [
  { path: `/contacts/${a.contactId}/segments/${a.segmentId}`, full: 'not_found' },
  { path: `/contacts/${b.contactId}/segments/${a.segmentId}`, full: 'not_found' },
  { path: `/contacts/${a.contactId}/segments/${b.segmentId}`, full: 'not_found' },
];

/** A's contact in A's audience, and B's contact in A's audience. */
const audienceContact = (a: Resources, b: Resources, body?: unknown): Probe[] => [
  { path: `/audiences/${a.segmentId}/contacts/${a.contactId}`, body, full: 'not_found' },
  { path: `/audiences/${a.segmentId}/contacts/${encodeURIComponent(a.contactEmail)}`, body, full: 'not_found' },
  { path: `/audiences/${b.segmentId}/contacts/${a.contactId}`, body, full: 'not_found' },
];

/** Routes the REST API serves outside the OpenAPI document, each with a row above. */
const UNDOCUMENTED = Object.keys(ROWS).filter((route) => / \/(audiences|contacts\/imports|broadcasts)/.test(route));
/** Routes anyone may call without a key: their token or id is the capability (a recipient's unsubscribe link, an email's image). */
const PUBLIC_ROUTES = ['get /images/{id}', 'get /unsubscribe/{token}', 'post /unsubscribe/{token}'];
const segmentUnknown: Outcome = { status: 422, name: 'validation_error' };

const SEND_ROUTES = ['post /emails', 'post /emails/batch'];
/** Dashboard routes anyone may read (no team data): sign-in choices, the regions to sign up in, the CSRF token. */
const PUBLIC_DASHBOARD_ROUTES = ['get /dashboard/api/regions', 'get /dashboard/api/sign-in-providers', 'get /dashboard/api/csrf'];

const refusedDomain: Outcome = { status: 403, name: 'validation_error' };
const inHours = (hours: number) => new Date(Date.now() + hours * 3600_000).toISOString();
const email = (from: string) => ({ from, to: 'someone@example.com', subject: 'Hello', text: 'Hi', scheduled_at: inHours(2) });

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
    const messages = new WebhookMessagesRepository(api.app.get(DataSource));
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
    if (imported.status !== 200 && imported.status !== 201) throw new Error(`POST /contacts/imports: ${imported.status} ${await imported.text()}`);
    const importId = ((await imported.json()) as { id: string }).id;
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

  const apiRoutes = () => [
    ...document
      .operations()
      .filter(([, op]) => op.security === undefined || op.security.length > 0)
      .map(([route]) => route),
    ...UNDOCUMENTED,
  ];

  it('has a row for every route that needs a key, and the router serves no route outside the document', () => {
    const routes = apiRoutes();
    expect(routes.length).toBeGreaterThan(30);
    expect(routes.filter((route) => !ROWS[route])).toEqual([]);
    expect(Object.keys(ROWS).filter((route) => !routes.includes(route))).toEqual([]);
    const documented = document.operations().map(([route]) => route);
    const undocumented = routerTable(api.app.getHttpAdapter().getInstance() as unknown as FastifyInstance)
      .filter((route) => !route.startsWith('head ') && !route.includes(' /dashboard') && !route.endsWith('*') && route !== 'get /')
      .filter((route) => !documented.includes(route) && !UNDOCUMENTED.includes(route))
      // The multipart import is asked in its own form (its body is a file), not by the JSON probes.
      .filter((route) => route !== 'post /contacts/imports' && !PUBLIC_ROUTES.includes(route));
    expect(undocumented).toEqual([]);
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
      const reply = await call(api.url, b.team.token, method, probe.path, probe.body);
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
          const reply = await call(api.url, token, route.split(' ')[0]!.toUpperCase(), probe.path, probe.body);
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
