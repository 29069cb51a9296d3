import type { INestApplicationContext } from '@nestjs/common';
import { DomainsRepository } from '@herald/domains';
import { emailEvent, ONCE_PER_EMAIL, type EmailEventRecord, type EmailFacts } from '@herald/messages';
import { startMetrics } from '../../apps/metrics/src/metrics.app';
import { call, markVerified, startTestApi, type TestApi, type TestTeam } from '../support/api-harness';
import { publishEvents } from '../support/metrics-world';
import { waitUntil } from '../support/worker-process';

const HOUR = 3_600_000;
const facts = (teamId: string, region: string, from: string, id: string): EmailFacts => ({
  id,
  teamId,
  region,
  from,
  subject: 'Hi',
  messageId: `<${id}@herald.test>`,
  tags: null,
  headers: null,
  createdAt: new Date(),
});

/** GET /stats over rollups the metrics roles (us-east-1 and eu-west-1) counted from published events. */
describe('GET /stats', () => {
  let api: TestApi;
  let roles: INestApplicationContext[] = [];
  let team: TestTeam;
  let other: TestTeam;
  let euDomainId: string;
  /** The start of the first of the three hours the events fall in, well in the past. */
  const base = Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR;
  const iso = (ms: number) => new Date(ms).toISOString();

  beforeAll(async () => {
    api = await startTestApi();
    roles = [await startMetrics(api.config), await startMetrics({ ...api.config, HERALD_REGION: 'eu-west-1' })];
    team = await api.team();
    other = await api.team();
    const eu = await call(api.url, team.token, 'POST', '/domains', { name: `eu-${team.domain}`, region: 'eu-west-1' });
    euDomainId = eu.body.id;
    await markVerified(api.app.get(DomainsRepository), euDomainId);

    const events: EmailEventRecord[] = [];
    const history = (f: EmailFacts, at: number, fate: 'delivered' | 'bounced' | 'complained') => {
      const to = ['a@inbox.test'];
      events.push(emailEvent('email.sent', f, to, new Date(at), ONCE_PER_EMAIL));
      if (fate === 'bounced') {
        events.push(
          emailEvent('email.bounced', f, to, new Date(at + 1000), 'b', {
            bounce: { type: 'Permanent', subType: 'General', message: 'gone', diagnosticCode: ['smtp; 550 5.1.1'] },
          }),
        );
      } else events.push(emailEvent('email.delivered', f, to, new Date(at + 1000), 'd'));
      if (fate === 'complained') events.push(emailEvent('email.complained', f, to, new Date(at + 2000), 'c'));
    };
    // us-east-1 domain: 4 emails in hour 0 (one bounces), 2 in hour 2 (one complaint).
    for (let i = 0; i < 4; i++)
      history(
        facts(team.teamId, 'us-east-1', team.from(), `0190a000-0000-7000-8000-00000000000${i}`),
        base + 600_000,
        i === 0 ? 'bounced' : 'delivered',
      );
    for (let i = 4; i < 6; i++)
      history(
        facts(team.teamId, 'us-east-1', team.from(), `0190a000-0000-7000-8000-00000000000${i}`),
        base + 2 * HOUR + 60_000,
        i === 4 ? 'complained' : 'delivered',
      );
    // eu-west-1 domain: 3 emails in hour 1.
    for (let i = 6; i < 9; i++)
      history(
        facts(team.teamId, 'eu-west-1', `News <news@eu-${team.domain}>`, `0190a000-0000-7000-8000-00000000000${i}`),
        base + HOUR + 120_000,
        'delivered',
      );
    // Another team's email: never in this team's stats.
    history(facts(other.teamId, 'us-east-1', other.from(), '0190a000-0000-7000-8000-000000000010'), base + 600_000, 'delivered');
    await publishEvents(api.config, events);
    await waitUntil('the rollups of every event', async () => {
      const { body } = await get(team.token, `?from=${iso(base)}&to=${iso(base + 3 * HOUR)}`);
      return body.totals?.sent === 9 && body.totals.complained === 1 && body.totals.bounced_hard === 1 ? true : JSON.stringify(body.totals);
    });
  });

  afterAll(async () => {
    for (const role of roles) await role.close();
    await api?.close();
  });

  const get = (token: string, query: string) => call(api.url, token, 'GET', `/stats${query}`);
  const range = () => `from=${iso(base)}&to=${iso(base + 3 * HOUR)}`;

  it('lists every hour of the range, zeros included, with totals and rates', async () => {
    const { status, body } = await get(team.token, `?${range()}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ object: 'stats', from: iso(base), to: iso(base + 3 * HOUR), granularity: 'hour', domain_id: null, region: null });
    expect(body.data.map((b: any) => [b.timestamp, b.sent, b.delivered, b.bounced_hard, b.complained])).toEqual([
      [iso(base), 4, 3, 1, 0],
      [iso(base + HOUR), 3, 3, 0, 0],
      [iso(base + 2 * HOUR), 2, 2, 0, 1],
    ]);
    expect(body.totals).toMatchObject({
      sent: 9,
      delivered: 8,
      bounced_hard: 1,
      complained: 1,
      delivery_rate: 0.888889,
      bounce_rate: 0.111111,
      complaint_rate: 0.125,
    });
  });

  it('filters by domain and by region, and widens the range to whole buckets', async () => {
    const byDomain = await get(team.token, `?${range()}&domain_id=${euDomainId}`);
    expect(byDomain.body.domain_id).toBe(euDomainId);
    expect(byDomain.body.data.map((b: any) => b.sent)).toEqual([0, 3, 0]);
    const byRegion = await get(team.token, `?${range()}&region=us-east-1`);
    expect(byRegion.body.data.map((b: any) => b.sent)).toEqual([4, 0, 2]);
    const widened = await get(team.token, `?from=${iso(base + 1000)}&to=${iso(base + HOUR + 1000)}`);
    expect(widened.body).toMatchObject({ from: iso(base), to: iso(base + 2 * HOUR) });
    expect(widened.body.data).toHaveLength(2);
  });

  it('sums UTC days at day granularity', async () => {
    const { body } = await get(team.token, `?${range()}&granularity=day`);
    const days = body.data.filter((b: any) => b.sent > 0);
    expect(days.reduce((n: number, b: any) => n + b.sent, 0)).toBe(9);
    for (const b of body.data) expect(b.timestamp).toMatch(/T00:00:00\.000Z$/);
  });

  it("is scoped to the key's team", async () => {
    const { body } = await get(other.token, `?${range()}`);
    expect(body.totals.sent).toBe(1);
    expect((await get(other.token, `?${range()}&domain_id=${euDomainId}`)).body).toEqual({
      statusCode: 404,
      name: 'not_found',
      message: 'Domain not found',
    });
  });

  it.each([
    ['granularity=week', 'The `granularity` field must be `hour` or `day`.'],
    ['from=yesterday', 'The `from` field must be an ISO 8601 date or date-time.'],
    ['domain_id=nope', 'The `domain_id` field must be a domain id (a UUID).'],
    ['region=mars-north-1', 'The `region` field must be one of us-east-1, eu-west-1, sa-east-1, ap-northeast-1.'],
    ['from=2026-01-02&to=2026-01-01', 'The `from` date must be before `to`.'],
    ['from=2025-01-01&to=2026-01-01', 'The range from `from` to `to` must be at most 93 days at `hour` granularity.'],
  ])('refuses %s with 422', async (query, message) => {
    expect((await get(team.token, `?${query}`)).body).toEqual({ statusCode: 422, name: 'validation_error', message });
  });

  it('needs an API key', async () => {
    expect((await get('', `?${range()}`)).status).toBe(401);
  });
});
