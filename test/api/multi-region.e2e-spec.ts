import { Client } from 'pg';
import { isolatedConfig, IsolatedConfig } from '@herald/testing';
import { ApiProcess, envOf, herald, startApiProcess } from '../support/herald-process';
import { NatsProbe } from '../support/nats-probe';

/**
 * Two API processes for two regions, sharing Postgres, Redis and NATS, as real child processes
 * (`herald api`), the way a two-region deployment runs.
 */
describe('two regional API processes', () => {
  let isolated: IsolatedConfig;
  let us: ApiProcess;
  let eu: ApiProcess;
  let probe: NatsProbe;
  let db: Client;
  /** Each team with its sending domain, in its own region: `us` sends from us-east-1, `eu` from eu-west-1. */
  const teams: Record<'us' | 'eu', { id: string; token: string; from: string; region: string }> = {} as never;
  const regions = { us: 'us-east-1', eu: 'eu-west-1' } as const;

  beforeAll(async () => {
    isolated = await isolatedConfig();
    const env = envOf(isolated.config);
    for (const [name, region] of Object.entries(regions) as ['us' | 'eu', string][]) {
      const team = await herald(env, 'team', 'create', '--name', `${name} team`, '--region', region, '--plan', 'scale-1m', '--rate-limit', '100000');
      const key = await herald(env, 'key', 'create', '--team', team.id);
      teams[name] = { id: team.id, token: key.token, from: `hello@${name}-team.acme.test`, region };
    }
    [us, eu] = await Promise.all([startApiProcess({ ...env, HERALD_REGION: 'us-east-1' }), startApiProcess({ ...env, HERALD_REGION: 'eu-west-1' })]);
    probe = await NatsProbe.open(isolated.config);
    db = new Client({ connectionString: isolated.config.DATABASE_URL });
    await db.connect();
    await db.query(`SET search_path TO ${isolated.config.DATABASE_SCHEMA}`);
    // Each team adds its sending domain through the API, in its region; DNS verification has its
    // own suites (test/domains), so the domain is marked verified directly.
    for (const [name, team] of Object.entries(teams)) {
      const domain = team.from.split('@')[1];
      const created = await fetch(`${(name === 'us' ? us : eu).url}/domains`, {
        method: 'POST',
        headers: { authorization: `Bearer ${team.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: domain, region: team.region }),
      });
      const body = (await created.json()) as { id: string; region: string };
      expect({ status: created.status, region: body.region }).toEqual({ status: 200, region: team.region });
      await db.query(`UPDATE domains SET status = 'verified', verified_at = now() WHERE id = $1`, [body.id]);
    }
  });

  afterAll(async () => {
    await Promise.all([us?.stop(), eu?.stop()]);
    await probe?.close();
    await db?.end();
    await isolated?.cleanup();
  });

  const send = (api: ApiProcess, team: { token: string; from: string }, subject: string, key?: string) =>
    fetch(`${api.url}/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${team.token}`, 'content-type': 'application/json', ...(key && { 'idempotency-key': key }) },
      body: JSON.stringify({ from: team.from, to: 'jane@example.com', subject, html: '<p>hi</p>' }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

  it("puts each email on its own region's stream, whichever region's API accepted it", async () => {
    const sent = {
      usViaUs: await send(us, teams.us, 'us via us'),
      usViaEu: await send(eu, teams.us, 'us via eu'),
      euViaUs: await send(us, teams.eu, 'eu via us'),
      euViaEu: await send(eu, teams.eu, 'eu via eu'),
    };
    for (const r of Object.values(sent)) expect(r.status).toBe(200);
    const usStream = await probe.sendCommands('us-east-1');
    const euStream = await probe.sendCommands('eu-west-1');
    expect(usStream).toEqual(expect.arrayContaining([sent.usViaUs.body.id, sent.usViaEu.body.id]));
    expect(euStream).toEqual(expect.arrayContaining([sent.euViaUs.body.id, sent.euViaEu.body.id]));
    expect(usStream).not.toContain(sent.euViaUs.body.id);
    expect(euStream).not.toContain(sent.usViaEu.body.id);
    const { rows } = await db.query(`SELECT subject, region FROM emails WHERE subject LIKE '% via %' ORDER BY subject`);
    expect(rows).toEqual([
      { subject: 'eu via eu', region: 'eu-west-1' },
      { subject: 'eu via us', region: 'eu-west-1' },
      { subject: 'us via eu', region: 'us-east-1' },
      { subject: 'us via us', region: 'us-east-1' },
    ]);
  });

  it.each([
    ['one process', () => [us, us]],
    ['both regions at once', () => [us, eu]],
  ])('50 concurrent requests with one Idempotency-Key produce one email (%s)', async (label, apis) => {
    const key = `order-42/${label}`;
    const [a, b] = apis();
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => send(i % 2 ? b : a, teams.us, 'Your order', key)));
    const { rows } = await db.query(`SELECT id FROM emails WHERE team_id = $1 AND idempotency_key = $2`, [teams.us.id, key]);
    expect(rows).toHaveLength(1);
    const id = rows[0].id;
    for (const r of responses) {
      if (r.status === 200) expect(r.body).toEqual({ id });
      else expect(r).toMatchObject({ status: 409, body: { name: 'concurrent_idempotent_requests' } });
    }
    expect(responses.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1);
    // Once the first has finished, every retry replays it.
    expect(await send(b, teams.us, 'Your order', key)).toEqual({ status: 200, body: { id } });
    expect((await probe.sendCommands('us-east-1')).filter((x) => x === id)).toHaveLength(1);
  });
});
