import fc from 'fast-check';
import { call, startTestApi, TestApi, TestTeam } from '../support/api-harness';
import { OpenApiDocument } from '../support/openapi-document';

jest.setTimeout(120_000);

const RUNS = 200;

/**
 * The API's endpoints that take a JSON body (every route of /openapi.json with a JSON requestBody,
 * which the first test checks): each gets generated bad input in its body. `{id}` is one of the
 * team's own resources of that kind, so the body is judged rather than the id refused. (The
 * multipart contacts import and the unsubscribe form have suites of their own.)
 */
const ENDPOINTS: [method: string, path: string][] = [
  ['POST', '/emails'],
  ['POST', '/emails/batch'],
  ['PATCH', '/emails/{id}'],
  ['POST', '/domains'],
  ['PATCH', '/domains/{id}'],
  ['POST', '/webhooks'],
  ['PATCH', '/webhooks/{id}'],
  ['POST', '/suppressions'],
  ['POST', '/suppressions/batch/add'],
  ['POST', '/suppressions/batch/remove'],
  ['POST', '/api-keys'],
  ['PATCH', '/api-keys/{id}'],
  ['POST', '/contacts'],
  ['PATCH', '/contacts/{idOrEmail}'],
  ['PATCH', '/contacts/{idOrEmail}/topics'],
  ['POST', '/segments'],
  ['PATCH', '/segments/{id}'],
  ['POST', '/topics'],
  ['PATCH', '/topics/{id}'],
  ['POST', '/contact-properties'],
  ['PATCH', '/contact-properties/{id}'],
  ['POST', '/audiences'],
  ['POST', '/audiences/{id}/contacts'],
  ['PATCH', '/audiences/{id}/contacts/{idOrEmail}'],
  ['POST', '/broadcasts'],
  ['PATCH', '/broadcasts/{id}'],
  ['POST', '/broadcasts/{id}/send'],
];

/** Bodies near the schemas (right field names, wrong types and shapes), and anything JSON at all. */
const fieldValue = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 5 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.string(), { maxKeys: 3 }),
  fc.string().map((s) => `${s}\r\nBcc: victim@example.com`),
  fc.constantFrom('a@b.c', '<a@b.c>', '"x@evil.test y"@inbox.test', '@', 'x'.repeat(5_000), 'http://169.254.169.254/', '../../etc/passwd'),
);
const FIELDS = [
  'from',
  'to',
  'cc',
  'bcc',
  'reply_to',
  'subject',
  'text',
  'html',
  'headers',
  'attachments',
  'tags',
  'scheduled_at',
  'name',
  'endpoint',
  'events',
  'email',
  'permission',
  'domain_id',
  'region',
  'first_name',
  'last_name',
  'unsubscribed',
  'properties',
  'segments',
  'topics',
  'key',
  'type',
  'fallback_value',
  'default_subscription',
  'description',
  'visibility',
  'id',
  'subscription',
  'segment_id',
  'audience_id',
  'topic_id',
  'preview_text',
  'document',
  'send',
];
const nearSchema = fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 8 });
const body = fc.oneof(nearSchema, fc.array(nearSchema, { maxLength: 4 }), fc.jsonValue({ maxDepth: 4 }));

/**
 * Security (issue 17): bad input on every writable endpoint, generated with fast-check. Every
 * reply is a clear 4xx JSON error with a name and a message (or a 200 for the rare input that is
 * valid), never a 5xx; nothing refused is stored; and the API stays up.
 */
describe('bad input at the REST edge (fast-check)', () => {
  let api: TestApi;
  let team: TestTeam;
  let document: OpenApiDocument;
  /** The team's own resource of each kind, by the path's first segment. */
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    api = await startTestApi();
    team = await api.team();
    document = new OpenApiDocument((await call(api.url, null, 'GET', '/openapi.json')).body);
    const create = async (path: string, body: unknown) => (await call(api.url, team.token, 'POST', path, body)).body.id as string;
    const later = new Date(Date.now() + 3600_000).toISOString();
    ids.emails = await create('/emails', { from: team.from(), to: 'a@example.com', subject: 'Later', text: 'x', scheduled_at: later });
    ids.domains = team.domainId;
    ids.webhooks = await create('/webhooks', { endpoint: 'https://example.com/fuzz', events: ['email.sent'] });
    ids['api-keys'] = await create('/api-keys', { name: 'fuzzed' });
    ids.segments = await create('/segments', { name: 'Fuzzed' });
    ids.audiences = ids.segments;
    ids.contacts = await create('/contacts', { email: 'fuzzed@people.example', first_name: 'Fuzz', segments: [{ id: ids.segments }] });
    // A draft to an empty segment of its own: a fuzzed send that goes through writes no email.
    const empty = await create('/segments', { name: 'Nobody' });
    ids.broadcasts = await create('/broadcasts', { from: team.from(), subject: 'Fuzzed', segment_id: empty, html: '<p>x</p>' });
    ids.topics = await create('/topics', { name: 'Fuzzed', default_subscription: 'opt_in' });
    ids['contact-properties'] = await create('/contact-properties', { key: 'plan', type: 'string', fallback_value: 'free' });
    for (const id of Object.values(ids)) expect(id).toEqual(expect.any(String));
  });
  afterAll(async () => {
    await api?.close();
  });

  /** What the team has: every list, and each resource the PATCH routes would change. */
  async function stored(): Promise<unknown[]> {
    const paths = [
      '/emails',
      '/domains',
      '/webhooks',
      '/suppressions',
      '/api-keys',
      '/contacts',
      '/segments',
      '/topics',
      '/contact-properties',
      ...['emails', 'domains', 'webhooks', 'contacts', 'segments', 'topics', 'contact-properties'].map((kind) => `/${kind}/${ids[kind]}`),
      `/contacts/${ids.contacts}/topics`,
    ];
    // A key's `last_used_at` moves with the fuzzing requests themselves (once a minute at most): not something a body stored.
    const withoutUse = (body: unknown) => JSON.parse(JSON.stringify(body, (key, value: unknown) => (key === 'last_used_at' ? undefined : value)));
    return Promise.all(paths.map(async (path) => withoutUse((await call(api.url, team.token, 'GET', path)).body)));
  }

  it('covers every route that takes a JSON body', () => {
    const withBody = document
      .operations()
      .filter(([, op]) => op.requestBody?.content['application/json'])
      .map(([route]) => route);
    expect(withBody.sort()).toEqual(ENDPOINTS.map(([method, path]) => `${method.toLowerCase()} ${path}`).sort());
  });

  it.each(ENDPOINTS)('%s %s answers generated bad input with a 4xx JSON error, never a 5xx', async (method, template) => {
    // `/audiences/{id}/contacts/{idOrEmail}`: the segment, then its contact.
    const path = template.replace(/\{id\}|\{idOrEmail\}/, () => ids[template.split('/')[1]!]!).replace('{idOrEmail}', ids.contacts!);
    const before = await stored();
    const seen: Record<number, number> = {};
    await fc.assert(
      fc.asyncProperty(body, async (input) => {
        const reply = await call(api.url, team.token, method, path, input);
        seen[reply.status] = (seen[reply.status] ?? 0) + 1;
        if (reply.status >= 500) throw new Error(`${reply.status} for ${JSON.stringify(input).slice(0, 300)}: ${JSON.stringify(reply.body)}`);
        if (reply.status >= 400) {
          expect(typeof reply.body?.name).toBe('string');
          expect(typeof reply.body?.message).toBe('string');
        }
      }),
      { numRuns: RUNS },
    );
    // Raw bytes that are not JSON at all.
    const raw = await call(api.url, team.token, method, path, '{"from":');
    expect(raw).toMatchObject({ status: 422, body: { name: 'validation_error' } });
    expect((await call(api.url, null, 'GET', '/health/ready')).status).toBe(200);
    // Nothing refused was stored: when no body was taken, the team's data is as it was.
    if (!seen[200]) expect(await stored()).toEqual(before);
    console.log(`${method} ${path}: ${JSON.stringify(seen)}`);
  });
});
