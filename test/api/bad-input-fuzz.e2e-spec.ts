import fc from 'fast-check';
import { call, startTestApi, TestApi, TestTeam } from '../support/api-harness';

jest.setTimeout(120_000);

const RUNS = 200;

/** The API's writable endpoints: each gets generated bad input in its body. */
const ENDPOINTS: [method: string, path: string][] = [
  ['POST', '/emails'],
  ['POST', '/emails/batch'],
  ['POST', '/domains'],
  ['POST', '/webhooks'],
  ['POST', '/suppressions'],
  ['POST', '/api-keys'],
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
];
const nearSchema = fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 8 });
const body = fc.oneof(nearSchema, fc.array(nearSchema, { maxLength: 4 }), fc.jsonValue({ maxDepth: 4 }));

/**
 * Security (issue 17): bad input on every writable endpoint, generated with fast-check. Every
 * reply is a clear 4xx JSON error with a name and a message (or a 200 for the rare input that is
 * valid), never a 5xx; and the API stays up.
 */
describe('bad input at the REST edge (fast-check)', () => {
  let api: TestApi;
  let team: TestTeam;

  beforeAll(async () => {
    api = await startTestApi();
    team = await api.team();
  });
  afterAll(async () => {
    await api?.close();
  });

  it.each(ENDPOINTS)('%s %s answers generated bad input with a 4xx JSON error, never a 5xx', async (method, path) => {
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
    console.log(`${method} ${path}: ${JSON.stringify(seen)}`);
  });
});
