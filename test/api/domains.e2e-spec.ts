import { randomUUID } from 'node:crypto';
import { Resend } from 'resend';
import { call, startTestApi, TestApi, TestTeam, UUID } from '../support/api-harness';

const REST_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}\+00$/;
const SELECTOR = /^h\d{8}[re][a-z2-7]{4}\._domainkey$/;
const REGIONS = '`us-east-1` | `eu-west-1` | `sa-east-1` | `ap-northeast-1`';

/**
 * The /domains endpoints through the official `resend` package, on config-derived DNS values
 * (domain-events.e2e-spec.ts has the events they publish).
 */
describe('domains through the resend SDK', () => {
  let api: TestApi;
  let acme: TestTeam;
  let globex: TestTeam;
  /** Names are global across teams, and suites share nothing but the machine: keep them unique. */
  const unique = (label: string) => `${label}-${randomUUID().slice(0, 8)}.example`;

  beforeAll(async () => {
    api = await startTestApi({
      MAIL_DOMAIN: 'mail.herald.test',
      REGION_BOUNCE_HOSTS: 'eu-west-1=feedback.eu.herald.test',
      REGION_SPF: 'eu-west-1=ip4:203.0.113.0/24 ip6:2001:db8::/32',
    });
    acme = await api.team();
    globex = await api.team({ region: 'eu-west-1' });
  });
  afterAll(() => api?.close());

  it("creates a domain in the team's region, answering Resend's create shape with the records to publish", async () => {
    const name = unique('acme');
    const { data, error } = await acme.resend.domains.create({ name: name.toUpperCase() });
    expect(error).toBeNull();
    expect(data).not.toHaveProperty('object');
    expect(data).toEqual({
      id: expect.stringMatching(UUID),
      name,
      created_at: expect.stringMatching(REST_TIME),
      status: 'not_started',
      region: 'us-east-1',
      capabilities: { sending: 'enabled', receiving: 'disabled' },
      open_tracking: false,
      click_tracking: false,
      tracking_subdomain: null,
      paused: null,
      custom_return_path: 'send',
      tls: 'opportunistic',
      records: [
        {
          record: 'DKIM',
          name: expect.stringMatching(SELECTOR),
          type: 'TXT',
          ttl: 'Auto',
          status: 'not_started',
          value: expect.stringMatching(/^v=DKIM1; k=rsa; p=MIIBIjAN[A-Za-z0-9+/]+=*$/),
        },
        {
          record: 'SPF',
          name: 'send',
          type: 'MX',
          ttl: 'Auto',
          status: 'not_started',
          value: 'bounce.us-east-1.mail.herald.test',
          priority: 10,
        },
        {
          record: 'SPF',
          name: 'send',
          type: 'TXT',
          ttl: 'Auto',
          status: 'not_started',
          value: 'v=spf1 include:_spf.us-east-1.mail.herald.test ~all',
        },
        { record: 'DMARC', name: '_dmarc', type: 'TXT', ttl: 'Auto', status: 'not_started', value: 'v=DMARC1; p=none;' },
      ],
    });
  });

  it("uses the region's configured bounce host and SPF, the options given, and an Ed25519 key on request", async () => {
    const name = unique('globex');
    const { data } = await globex.resend.domains.create({
      name,
      customReturnPath: 'bounces',
      openTracking: true,
      clickTracking: true,
      trackingSubdomain: 'links',
      tls: 'enforced',
    });
    expect(data).toMatchObject({ region: 'eu-west-1', open_tracking: true, click_tracking: true, tracking_subdomain: 'links' });
    expect(data).toMatchObject({ custom_return_path: 'bounces', tls: 'enforced' });
    expect(data!.records.slice(1)).toEqual([
      expect.objectContaining({ record: 'SPF', name: 'bounces', type: 'MX', value: 'feedback.eu.herald.test', priority: 10 }),
      expect.objectContaining({ record: 'SPF', name: 'bounces', type: 'TXT', value: 'v=spf1 ip4:203.0.113.0/24 ip6:2001:db8::/32 ~all' }),
      expect.objectContaining({ record: 'DMARC', name: '_dmarc' }),
      expect.objectContaining({ record: 'Tracking', name: 'links', type: 'CNAME', value: 'track.mail.herald.test' }),
    ]);

    const both = await call(api.url, acme.token, 'POST', '/domains', {
      name: unique('dual'),
      region: 'sa-east-1',
      dkim_algorithms: ['rsa-sha256', 'ed25519-sha256'],
    });
    expect(both.status).toBe(200);
    const dkim = both.body.records.filter((r: { record: string }) => r.record === 'DKIM');
    expect(dkim.map((r: { value: string }) => r.value.slice(0, 18))).toEqual(['v=DKIM1; k=rsa; p=', 'v=DKIM1; k=ed25519']);
    expect(Buffer.from(dkim[1].value.split('p=')[1], 'base64')).toHaveLength(32);
    expect(new Set(dkim.map((r: { name: string }) => r.name)).size).toBe(2);
    expect(both.body.region).toBe('sa-east-1');
  });

  it('refuses what Resend refuses, with its error names', async () => {
    const missing = await acme.resend.domains.create({} as never);
    expect(missing.error).toMatchObject({ statusCode: 422, name: 'missing_required_field', message: 'Missing `name` field.' });
    const invalid = await acme.resend.domains.create({ name: 'not a domain' });
    expect(invalid.error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    const region = await acme.resend.domains.create({ name: unique('region'), region: 'mars-north-1' as never });
    expect(region.error).toMatchObject({ statusCode: 422, name: 'invalid_region' });
    expect(region.error!.message).toContain(REGIONS);
    const tls = await call(api.url, acme.token, 'POST', '/domains', { name: unique('tls'), tls: 'always' });
    expect(tls).toMatchObject({ status: 422, body: { name: 'validation_error' } });
  });

  it('answers 403 for a name registered already, by another team or the same one, however it is spelled', async () => {
    const name = `bücher-${randomUUID().slice(0, 8)}.example`;
    const first = await acme.resend.domains.create({ name });
    expect(first.error).toBeNull();
    const ascii = first.data!.name;
    expect(ascii).toMatch(/^xn--/);
    for (const [team, attempt] of [
      [globex, name],
      [acme, name],
      [globex, ascii.toUpperCase()],
    ] as const) {
      const again = await team.resend.domains.create({ name: attempt });
      const message = `The domain ${ascii} has been registered already.`;
      expect(again.error).toEqual({ statusCode: 403, name: 'validation_error', message });
    }
  });

  it('lists the team’s domains newest first, without records, paginated on request', async () => {
    const team = await api.team();
    const names = [unique('one'), unique('two'), unique('three')];
    const ids: string[] = [];
    for (const name of names) ids.push((await team.resend.domains.create({ name })).data!.id);
    const all = await team.resend.domains.list();
    expect(all.error).toBeNull();
    expect(all.data).toMatchObject({ object: 'list', has_more: false });
    // The oldest is the sending domain every test team is given.
    expect(all.data!.data.map((d) => d.id)).toEqual([...ids].reverse().concat(team.domainId));
    expect(all.data!.data[0]).toEqual({
      id: ids[2],
      name: names[2],
      status: 'not_started',
      created_at: expect.stringMatching(REST_TIME),
      region: 'us-east-1',
      capabilities: { sending: 'enabled', receiving: 'disabled' },
      open_tracking: false,
      click_tracking: false,
      tracking_subdomain: null,
      paused: null,
    });
    const first = await team.resend.domains.list({ limit: 2 });
    expect(first.data).toMatchObject({ has_more: true, data: [{ id: ids[2] }, { id: ids[1] }] });
    const next = await team.resend.domains.list({ limit: 2, after: ids[1] });
    expect(next.data).toMatchObject({ has_more: false, data: [{ id: ids[0] }, { id: team.domainId }] });
    const last = await team.resend.domains.list({ limit: 2, after: ids[0] });
    expect(last.data).toMatchObject({ has_more: false, data: [{ id: team.domainId }] });
    const back = await team.resend.domains.list({ limit: 1, before: ids[0] });
    expect(back.data).toMatchObject({ has_more: true, data: [{ id: ids[1] }] });
    const bad = await call(api.url, team.token, 'GET', '/domains?limit=500');
    expect(bad).toMatchObject({ status: 422, body: { name: 'validation_error' } });
  });

  it("gets a domain with `object: 'domain'`, and not another team's", async () => {
    const created = (await acme.resend.domains.create({ name: unique('get') })).data!;
    const got = await acme.resend.domains.get(created.id);
    expect(got.error).toBeNull();
    expect(got.data).toEqual({ object: 'domain', ...created });
    expect((await globex.resend.domains.get(created.id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await acme.resend.domains.get(randomUUID())).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await acme.resend.domains.get('example.com')).error).toMatchObject({ statusCode: 422, name: 'invalid_parameter' });
  });

  it('updates tracking and TLS; the region and the tracking subdomain stay', async () => {
    const created = (await acme.resend.domains.create({ name: unique('update') })).data!;
    const updated = await acme.resend.domains.update({ id: created.id, openTracking: true, tls: 'enforced', trackingSubdomain: 'links' });
    expect(updated.error).toBeNull();
    expect(updated.data).toEqual({ object: 'domain', id: created.id });
    const got = (await acme.resend.domains.get(created.id)).data!;
    expect(got).toMatchObject({ open_tracking: true, click_tracking: false, tracking_subdomain: 'links', tls: 'enforced' });
    expect(got.records[got.records.length - 1]).toEqual({
      record: 'Tracking',
      name: 'links',
      type: 'CNAME',
      ttl: 'Auto',
      status: 'not_started',
      value: 'track.mail.herald.test',
    });

    const region = await call(api.url, acme.token, 'PATCH', `/domains/${created.id}`, { region: 'eu-west-1' });
    expect(region).toMatchObject({ status: 422, body: { name: 'validation_error', message: expect.stringContaining('`region`') } });
    const removal = await call(api.url, acme.token, 'PATCH', `/domains/${created.id}`, { tracking_subdomain: null });
    expect(removal).toMatchObject({ status: 422, body: { message: 'The `tracking_subdomain` field can be changed but not removed.' } });
    expect((await globex.resend.domains.update({ id: created.id, openTracking: false })).error).toMatchObject({ statusCode: 404 });
  });

  it('queues a verification: `{object, id}`, and the domain is pending', async () => {
    const created = (await acme.resend.domains.create({ name: unique('verify') })).data!;
    const verified = await acme.resend.domains.verify(created.id);
    expect(verified.error).toBeNull();
    expect(verified.data).toEqual({ object: 'domain', id: created.id });
    expect((await acme.resend.domains.get(created.id)).data!.status).toBe('pending');
    expect((await globex.resend.domains.verify(created.id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
  });

  it('rotates the DKIM key: a new selector is listed beside the current one, one rotation at a time', async () => {
    const created = (await acme.resend.domains.create({ name: unique('rotate') })).data!;
    const rotated = await call(api.url, acme.token, 'POST', `/domains/${created.id}/dkim/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ object: 'domain', id: created.id });
    const dkim = rotated.body.records.filter((r: { record: string }) => r.record === 'DKIM');
    expect(dkim).toHaveLength(2);
    expect(dkim[0]).toEqual(created.records[0]);
    expect(dkim[1]).toMatchObject({ name: expect.stringMatching(SELECTOR), status: 'not_started' });
    expect(dkim[1].name).not.toBe(dkim[0].name);
    const again = await call(api.url, acme.token, 'POST', `/domains/${created.id}/dkim/rotate`);
    expect(again).toMatchObject({ status: 422, body: { name: 'validation_error' } });
    expect((await call(api.url, globex.token, 'POST', `/domains/${created.id}/dkim/rotate`)).status).toBe(404);
  });

  it('deletes a domain, freeing its name', async () => {
    const name = unique('delete');
    const created = (await acme.resend.domains.create({ name })).data!;
    const removed = await acme.resend.domains.remove(created.id);
    expect(removed.error).toBeNull();
    expect(removed.data).toEqual({ object: 'domain', id: created.id, deleted: true });
    expect((await acme.resend.domains.get(created.id)).error).toMatchObject({ statusCode: 404 });
    expect((await acme.resend.domains.remove(created.id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await globex.resend.domains.create({ name })).error).toBeNull();
  });

  it('refuses sending_access keys on every /domains endpoint', async () => {
    const sender = new Resend(await api.key(acme.teamId, 'sending_access'), { baseUrl: api.url });
    const id = randomUUID();
    const refusals = [
      await sender.domains.create({ name: unique('sender') }),
      await sender.domains.list(),
      await sender.domains.get(id),
      await sender.domains.update({ id, openTracking: true }),
      await sender.domains.verify(id),
      await sender.domains.remove(id),
    ];
    for (const refused of refusals) {
      const message = 'This API key is restricted to only send emails.';
      expect(refused.error).toEqual({ statusCode: 401, name: 'restricted_api_key', message });
    }
  });

  it('restricts a sending key only to a domain of its own team', async () => {
    const created = (await acme.resend.domains.create({ name: unique('keyed') })).data!;
    const ok = await acme.resend.apiKeys.create({ name: 'sender', permission: 'sending_access', domain_id: created.id });
    expect(ok.error).toBeNull();
    const theirs = await globex.resend.apiKeys.create({ name: 'sender', permission: 'sending_access', domain_id: created.id });
    expect(theirs.error).toMatchObject({ statusCode: 422, name: 'validation_error', message: expect.stringContaining('Domain not found') });
  });
});
