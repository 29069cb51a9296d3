import { Client } from 'pg';
import { regionOfId } from '@herald/core';
import { isolatedConfig, IsolatedConfig, MxSink, TestDnsServer } from '@herald/testing';
import { DashboardClient } from '../support/dashboard-client';
import { Boot, Running, startHeraldAll, waitFor } from '../support/herald-all';
import { envOf, herald as heraldCli } from '../support/herald-process';
import { startInbox } from '../support/inbox';

const SINK_HOST = '127.0.0.40';

/**
 * `herald all` as `npm start` runs it (development bootstrap, a real child process): a worker and
 * a webhooks consumer run for each region it serves, so a new user's eu-west-1 domain is
 * delivered (it used to stay `queued`: only the home region's worker ran). With `--regions` it
 * serves only those, and refuses any other region at POST /domains and at send. Recipients' mail
 * goes to a real MX sink through a local DNS server; the two runs share one isolated schema, one
 * after the other.
 */
describe('herald all: a worker for every served region, no other region accepted', () => {
  let isolated: IsolatedConfig;
  let dns: TestDnsServer;
  let sink: MxSink;
  let sinkPort: number;
  let db: Client;
  let running: Running | undefined;
  let boot: Boot;

  beforeAll(async () => {
    isolated = await isolatedConfig();
    ({ dns, sink, port: sinkPort } = await startInbox(SINK_HOST));
    db = new Client({ connectionString: isolated.config.DATABASE_URL });
    await db.connect();
    await db.query(`SET search_path TO "${isolated.config.DATABASE_SCHEMA}"`);
  });

  afterAll(async () => {
    await running?.stop();
    await db?.end();
    await sink?.close();
    await dns?.close();
    await isolated?.cleanup();
  });

  const start = async (...flags: string[]) => {
    await running?.stop();
    running = await startHeraldAll(
      flags,
      envOf(isolated.config, { HERALD_REGIONS: '', DNS_SERVERS: dns.address(), DELIVERY_PORT: String(sinkPort) }),
    );
    boot = running.boot;
  };

  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${boot.api_url}${path}`, {
      method,
      headers: { authorization: `Bearer ${boot.api_key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

  describe('with no options (npm start)', () => {
    beforeAll(() => start(), 90_000);

    it('runs a worker, a webhooks consumer and a metrics consumer for each of the default regions', () => {
      expect(boot.regions).toEqual(['us-east-1', 'eu-west-1', 'sa-east-1', 'ap-northeast-1']);
      const regional = boot.regions.flatMap((r) => [`worker ${r}`, `webhooks ${r}`, `metrics ${r}`]);
      expect(Object.keys(boot.roles).sort()).toEqual(['api', 'smtp', ...regional].sort());
    });

    it("prints the dashboard's URL and a development user who signs in there, an owner of the development team", async () => {
      expect(boot.dashboard_url).toBe(`${boot.api_url}/dashboard/`);
      expect(boot.dashboard_user).toEqual({ email: expect.stringMatching(/^dev@/), password: expect.any(String) });
      const page = await fetch(boot.dashboard_url);
      expect({ status: page.status, type: page.headers.get('content-type') }).toEqual({ status: 200, type: expect.stringMatching(/^text\/html/) });
      const client = await new DashboardClient(new URL(boot.dashboard_url).origin).start();
      const { email, password } = boot.dashboard_user;
      expect((await client.auth('/sign-in/email', { email, password: `${password}!` })).status).toBe(401);
      const signedIn = await client.auth('/sign-in/email', { email, password });
      expect({ status: signedIn.status, email: signedIn.body?.user?.email }).toEqual({ status: 200, email });
      const me = await client.get('/dashboard/api/me');
      // Their one team is the Development team, so the dashboard opens on it (its first team), not on an empty one.
      expect(me.body.teams.map((t: { name: string; role: string }) => [t.name, t.role])).toEqual([['Development', 'owner']]);
      const team = me.body.teams[0];
      // The development team's own domain, the one the printed key sends from.
      const domains = await client.get(`/dashboard/api/teams/${team.id}/domains`);
      expect(domains.body.data.map((d: { name: string; status: string }) => [d.name, d.status])).toContainEqual([
        expect.stringMatching(/^dev\./),
        'verified',
      ]);
    });

    it("delivers an eu-west-1 domain's email to the recipient's MX", async () => {
      const created = await call('POST', '/domains', { name: 'eu.newcomer.test', region: 'eu-west-1' });
      expect({ status: created.status, region: created.body.region }).toEqual({ status: 200, region: 'eu-west-1' });
      // DNS verification has its own suites (test/domains): the domain is marked verified directly.
      await db.query(`UPDATE domains SET status = 'verified', verified_at = now() WHERE id = $1`, [created.body.id]);
      const sent = await call('POST', '/emails', { from: 'hello@eu.newcomer.test', to: 'jane@inbox.test', subject: 'From Europe', text: 'hi' });
      expect(sent.status).toBe(200);
      // Its id names the region that holds it.
      expect(regionOfId(sent.body.id, boot.regions)).toBe('eu-west-1');
      await sink.waitForMessages(1, 20_000);
      expect(sink.messages[0].recipients).toEqual(['jane@inbox.test']);
      expect(sink.messages[0].raw.toString()).toContain('Subject: From Europe');
      await waitFor(
        async () => (await db.query(`SELECT last_event FROM emails WHERE id = $1`, [sent.body.id])).rows[0]?.last_event === 'delivered',
        'the email to be recorded as delivered',
      );
      const { rows } = await db.query(`SELECT region FROM emails WHERE id = $1`, [sent.body.id]);
      expect(rows).toEqual([{ region: 'eu-west-1' }]);
    });
  });

  describe('with --regions us-east-1,eu-west-1', () => {
    beforeAll(() => start('--regions', 'us-east-1,eu-west-1'), 90_000);

    it('runs a worker, a webhooks consumer and a metrics consumer for those two regions only', () => {
      expect(boot.regions).toEqual(['us-east-1', 'eu-west-1']);
      expect(Object.keys(boot.roles).sort()).toEqual([
        'api',
        'metrics eu-west-1',
        'metrics us-east-1',
        'smtp',
        'webhooks eu-west-1',
        'webhooks us-east-1',
        'worker eu-west-1',
        'worker us-east-1',
      ]);
    });

    it('refuses a domain in a region it does not serve with a 422 that says so', async () => {
      const refused = await call('POST', '/domains', { name: 'sa.newcomer.test', region: 'sa-east-1' });
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({ name: 'invalid_region' });
      expect(refused.body.message).toBe(
        'Invalid `region` field. No worker delivers mail for `sa-east-1` here. Region must be one of `us-east-1` | `eu-west-1`.',
      );
    });

    it('refuses to send from a domain whose region is no longer served, rather than queue the email', async () => {
      // A domain created while sa-east-1 was served (an earlier run without --regions).
      const created = await call('POST', '/domains', { name: 'was-sa.newcomer.test', region: 'eu-west-1' });
      await db.query(`UPDATE domains SET status = 'verified', verified_at = now(), region = 'sa-east-1' WHERE id = $1`, [created.body.id]);
      const sent = await call('POST', '/emails', { from: 'hello@was-sa.newcomer.test', to: 'jane@inbox.test', subject: 'Nowhere', text: 'hi' });
      expect(sent.status).toBe(422);
      expect(sent.body).toMatchObject({
        name: 'invalid_region',
        message:
          'The was-sa.newcomer.test domain sends from region sa-east-1, which this deployment does not serve (it serves us-east-1, eu-west-1).',
      });
      expect((await db.query(`SELECT count(*)::int AS n FROM emails WHERE subject = 'Nowhere'`)).rows).toEqual([{ n: 0 }]);
    });

    it('takes --regions only for herald all', async () => {
      await expect(heraldCli(envOf(isolated.config), 'regions', '--regions', 'eu-west-1')).rejects.toThrow(
        '--regions is an option of `herald all` only',
      );
    });
  });
});
