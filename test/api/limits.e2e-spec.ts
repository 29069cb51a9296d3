import type { CreateEmailOptions } from 'resend';
import { RedisService } from '@herald/redis';
import { call, startTestApi, TestApi, TestTeam, UUID } from '../support/api-harness';

/*
 * The per-team rate limit (requests per second) and the per-recipient email quotas (free plan:
 * 100 a UTC day, 3,000 a UTC month; paid plans: monthly only), over HTTP. Every test has its own
 * team, so the counters it fills are its own.
 */

const UNKNOWN_EMAIL = '6f1c7a3e-2a4b-4c1d-9e8f-0a1b2c3d4e5f';

const addresses = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}@example.com`);
/** An email from the team's own (verified) domain. */
const email = (team: TestTeam, recipients: { to: string | string[]; cc?: string[]; bcc?: string[]; replyTo?: string }): CreateEmailOptions => ({
  from: `Acme <${team.from('hello')}>`,
  subject: 'Hi',
  text: 'Hi',
  ...recipients,
});
/** `n` recipients spread over to, cc and bcc. */
const emailTo = (team: TestTeam, n: number, tag: string): CreateEmailOptions => {
  const all = addresses(n, tag);
  const third = Math.ceil(n / 3);
  return email(team, { to: all.slice(0, third), cc: all.slice(third, 2 * third), bcc: all.slice(2 * third) });
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whole seconds until `end`, as the API computes `retry-after`. */
const secondsUntil = (end: Date) => Math.ceil((end.getTime() - Date.now()) / 1000);
const nextUtcDay = () => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
};
const nextUtcMonth = () => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
};

type HeaderBag = Headers | Record<string, string> | null;
const header = (headers: HeaderBag, name: string): string | null => (headers instanceof Headers ? headers.get(name) : (headers?.[name] ?? null));

function expectRateLimitHeaders(headers: HeaderBag, limit: number): void {
  expect(header(headers, 'ratelimit-limit')).toBe(String(limit));
  expect(header(headers, 'ratelimit-remaining')).toMatch(/^\d+$/);
  expect(Number(header(headers, 'ratelimit-remaining'))).toBeLessThanOrEqual(limit);
  expect(Number(header(headers, 'ratelimit-reset'))).toBeGreaterThanOrEqual(1);
}

/** A `retry-after` (seconds) that points at `end`, give or take the time the request took. */
function expectRetryAfter(headers: HeaderBag, end: Date): void {
  const retryAfter = Number(header(headers, 'retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(Math.abs(retryAfter - secondsUntil(end))).toBeLessThanOrEqual(2);
}

describe('limits', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(async () => {
    await api.close();
  });

  describe('rate limit', () => {
    it('lets a burst of `limit` requests through, refuses the next, and passes again once it resets', async () => {
      const team = await api.team({ rateLimit: 3 });
      const burst = await Promise.all(Array.from({ length: 4 }, () => call(api.url, team.token, 'GET', '/emails')));

      expect(burst.map((r) => r.status).sort()).toEqual([200, 200, 200, 429]);
      for (const response of burst) expectRateLimitHeaders(response.headers, 3);
      const allowed = burst.filter((r) => r.status === 200);
      expect(allowed.map((r) => Number(r.headers.get('ratelimit-remaining'))).sort()).toEqual([0, 1, 2]);
      const denied = burst.find((r) => r.status === 429)!;
      expect(denied.body).toEqual({
        statusCode: 429,
        name: 'rate_limit_exceeded',
        message: expect.stringContaining('You can only make 3 requests per second.'),
      });
      expect(denied.headers.get('ratelimit-remaining')).toBe('0');
      const retryAfter = Number(denied.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);

      await sleep(retryAfter * 1000);
      // A fresh burst of 3, each response with the headers whatever its status; the 4th is refused.
      const ok = await call(api.url, team.token, 'GET', '/emails');
      const unprocessable = await call(api.url, team.token, 'GET', '/emails?limit=101');
      const notFound = await call(api.url, team.token, 'GET', `/emails/${UNKNOWN_EMAIL}`);
      const refused = await team.resend.emails.send(email(team, { to: 'jane@example.com' }));
      expect([ok.status, unprocessable.status, notFound.status]).toEqual([200, 422, 404]);
      for (const response of [ok, unprocessable, notFound]) expectRateLimitHeaders(response.headers, 3);
      expect(refused.error).toMatchObject({ statusCode: 429, name: 'rate_limit_exceeded' });
      expectRateLimitHeaders(refused.headers, 3);
      expect(Number(refused.headers!['retry-after'])).toBeGreaterThanOrEqual(1);
    });

    it('is 10 requests per second for a team without an override', async () => {
      const team = await api.team({ rateLimit: null });
      const started = Date.now();
      const burst = await Promise.all(Array.from({ length: 20 }, () => call(api.url, team.token, 'GET', '/emails')));
      const elapsed = Date.now() - started;
      for (const response of burst) expectRateLimitHeaders(response.headers, 10);
      // A fresh bucket admits 10 at once, then one more per 100 ms; on a loaded machine the
      // "concurrent" requests spread out, so the bound follows the time the burst really took.
      const allowed = burst.filter((r) => r.status === 200).length;
      expect(allowed).toBeGreaterThanOrEqual(10);
      expect(allowed).toBeLessThanOrEqual(10 + Math.ceil(elapsed / 100));
      expect(burst.filter((r) => r.status !== 200).every((r) => r.status === 429)).toBe(true);
    });
  });

  describe('daily quota', () => {
    it('gives a free team 100 recipients a UTC day, each person counted once, replays not counted', async () => {
      const team = await api.team();
      const first = emailTo(team, 50, 'first');
      const sent = await team.resend.emails.send(first, { idempotencyKey: 'welcome/1' });
      expect(sent.error).toBeNull();

      // 49 people: one cc is a `to` spelled in another case; reply_to is nobody's inbox to count.
      const second = await team.resend.emails.send(
        email(team, { to: addresses(25, 'second'), cc: [...addresses(24, 'cc'), 'SECOND0@EXAMPLE.COM'], replyTo: 'help@acme.test' }),
      );
      expect(second.error).toBeNull();
      expect(await team.resend.emails.send(first, { idempotencyKey: 'welcome/1' })).toMatchObject({ data: sent.data, error: null });
      const hundredth = await team.resend.emails.send(email(team, { to: 'hundredth@example.com' }));
      expect(hundredth.error).toBeNull();

      const over = await team.resend.emails.send(email(team, { to: 'one-more@example.com' }));
      expect(over.error).toEqual({
        statusCode: 429,
        name: 'daily_quota_exceeded',
        message: expect.stringContaining('daily email sending quota of 100 emails (100 used, this request needs 1)'),
      });
      expectRetryAfter(over.headers, nextUtcDay());
      expectRateLimitHeaders(over.headers, 10_000);

      // The accepted request still replays once the cap is reached; a new key is a new send.
      expect(await team.resend.emails.send(first, { idempotencyKey: 'welcome/1' })).toMatchObject({ data: sent.data, error: null });
      const newKey = await team.resend.emails.send(first, { idempotencyKey: 'welcome/2' });
      expect(newKey.error).toMatchObject({ statusCode: 429, name: 'daily_quota_exceeded' });
      expect((await team.resend.emails.list()).data!.data).toHaveLength(3);
    });

    it('is still enforced after Redis lost the counters: they are seeded again from the emails on record', async () => {
      const team = await api.team();
      expect((await team.resend.emails.send(emailTo(team, 50, 'before'))).error).toBeNull();
      expect((await team.resend.emails.send(emailTo(team, 49, 'before-too'))).error).toBeNull();
      // Redis restarted empty: the team's counters are gone (and nothing else of Redis matters here).
      const redis = api.app.get(RedisService);
      const counters = await redis.command((client) => client.keys(redis.key('quota', `{${team.teamId}}`, '*')));
      expect(counters).toHaveLength(2);
      await redis.command((client) => client.del(counters));

      expect((await team.resend.emails.send(email(team, { to: 'hundredth@example.com' }))).error).toBeNull();
      const over = await team.resend.emails.send(email(team, { to: 'one-more@example.com' }));
      expect(over.error).toMatchObject({
        statusCode: 429,
        name: 'daily_quota_exceeded',
        message: expect.stringContaining('(100 used, this request needs 1)'),
      });
    });

    it('counts every recipient of every email of a batch, and nothing of a refused or invalid one', async () => {
      const team = await api.team();
      const tooMany = await team.resend.batch.send([emailTo(team, 40, 'a'), emailTo(team, 40, 'b'), emailTo(team, 40, 'c')]);
      expect(tooMany.error).toMatchObject({ statusCode: 429, name: 'daily_quota_exceeded', message: expect.stringContaining('needs 120') });
      expectRetryAfter(tooMany.headers, nextUtcDay());

      const permissive = await team.resend.batch.send([emailTo(team, 50, 'ok'), email(team, { to: [...addresses(49, 'bad'), 'not-an-address'] })], {
        batchValidation: 'permissive',
      });
      expect(permissive.error).toBeNull();
      expect(permissive.data).toMatchObject({ data: [{ id: expect.stringMatching(UUID) }], errors: [{ index: 1 }] });

      const strict = await team.resend.batch.send([emailTo(team, 25, 'x'), emailTo(team, 25, 'y')]);
      expect(strict.error).toBeNull();
      expect(strict.data!.data).toHaveLength(2);

      const over = await team.resend.batch.send([email(team, { to: 'one-more@example.com' })]);
      expect(over.error).toMatchObject({ statusCode: 429, name: 'daily_quota_exceeded' });
      expect((await team.resend.emails.list()).data!.data).toHaveLength(3);
    });

    it('does not apply to a paid plan', async () => {
      const team = await api.team({ plan: 'pro-50k' });
      const batch = await team.resend.batch.send([emailTo(team, 50, 'a'), emailTo(team, 50, 'b'), emailTo(team, 50, 'c')]);
      expect(batch.error).toBeNull();
      const single = await team.resend.emails.send(emailTo(team, 50, 'd'));
      expect(single.error).toBeNull();
      expect(single.data!.id).toMatch(UUID);
    });
  });
});

describe('monthly quota (FREE_DAILY_LIMIT=100000)', () => {
  let api: TestApi;
  let team: TestTeam;

  beforeAll(async () => {
    api = await startTestApi({ FREE_DAILY_LIMIT: '100000' });
    team = await api.team();
  });
  afterAll(() => api.close());

  it('gives a free team 3,000 recipients a UTC month, then 429 monthly_quota_exceeded', async () => {
    const batchOf = (emails: number, tag: string) => Array.from({ length: emails }, (_, i) => emailTo(team, 50, `${tag}${i}-`));

    const tooMany = await team.resend.batch.send(batchOf(61, 'a'));
    expect(tooMany.error).toMatchObject({
      statusCode: 429,
      name: 'monthly_quota_exceeded',
      message: expect.stringContaining('needs 3050'),
    });

    const all = await team.resend.batch.send(batchOf(60, 'b'));
    expect(all.error).toBeNull();
    expect(all.data!.data).toHaveLength(60);

    const over = await team.resend.emails.send(email(team, { to: 'one-more@example.com' }));
    expect(over.error).toEqual({
      statusCode: 429,
      name: 'monthly_quota_exceeded',
      message: expect.stringContaining('monthly email sending quota of 3000 emails (3000 used, this request needs 1)'),
    });
    expectRetryAfter(over.headers, nextUtcMonth());
  });
});
