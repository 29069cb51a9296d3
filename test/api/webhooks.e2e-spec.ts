import { createHmac, randomUUID } from 'node:crypto';
import { Resend } from 'resend';
import { WebhooksService } from '@herald/webhooks';
import { call, startTestApi, TestApi, TestTeam, UUID } from '../support/api-harness';

const REST_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}\+00$/;
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

/** Standard Webhooks verification by hand (the `standardwebhooks` verifier is the dispatcher suite's). */
function sign(secret: string, id: string, timestamp: number, body: string): string {
  return createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64');
}

/** The /webhooks management endpoints through the official `resend` package. */
describe('webhooks through the resend SDK', () => {
  let api: TestApi;
  let acme: TestTeam;
  let globex: TestTeam;

  beforeAll(async () => {
    api = await startTestApi({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8,::1' });
    acme = await api.team();
    globex = await api.team();
  });
  afterAll(async () => {
    await api?.close();
  });

  it("creates, gets, lists, updates and deletes a webhook in Resend's shapes", async () => {
    const created = await acme.resend.webhooks.create({ endpoint: 'https://example.com/hooks/herald', events: ['email.sent', 'email.delivered'] });
    expect(created.error).toBeNull();
    expect(created.data).toEqual({ object: 'webhook', id: expect.stringMatching(UUID), signing_secret: expect.stringMatching(SECRET) });
    const id = created.data!.id;

    const got = await acme.resend.webhooks.get(id);
    expect(got.error).toBeNull();
    expect(got.data).toEqual({
      object: 'webhook',
      id,
      endpoint: 'https://example.com/hooks/herald',
      events: ['email.sent', 'email.delivered'],
      status: 'enabled',
      created_at: expect.stringMatching(REST_TIME),
      signing_secret: created.data!.signing_secret,
    });

    const listed = await acme.resend.webhooks.list();
    expect(listed.error).toBeNull();
    expect(listed.data).toEqual({
      object: 'list',
      has_more: false,
      data: [
        {
          id,
          endpoint: 'https://example.com/hooks/herald',
          events: ['email.sent', 'email.delivered'],
          status: 'enabled',
          created_at: got.data!.created_at,
        },
      ],
    });

    const updated = await acme.resend.webhooks.update(id, { endpoint: 'https://example.org/other', events: ['domain.created'], status: 'disabled' });
    expect(updated.error).toBeNull();
    expect(updated.data).toEqual({ object: 'webhook', id });
    const after = await acme.resend.webhooks.get(id);
    expect(after.data).toMatchObject({ endpoint: 'https://example.org/other', events: ['domain.created'], status: 'disabled' });
    const partial = await acme.resend.webhooks.update(id, { status: 'enabled' });
    expect(partial.error).toBeNull();
    expect((await acme.resend.webhooks.get(id)).data).toMatchObject({
      endpoint: 'https://example.org/other',
      events: ['domain.created'],
      status: 'enabled',
    });

    const removed = await acme.resend.webhooks.remove(id);
    expect(removed.data).toEqual({ object: 'webhook', id, deleted: true });
    expect((await acme.resend.webhooks.get(id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await acme.resend.webhooks.remove(id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
  });

  it('pages the list newest first', async () => {
    const team = await api.team();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await team.resend.webhooks.create({ endpoint: `https://example.com/${i}`, events: ['email.sent'] })).data!.id);
    const first = await team.resend.webhooks.list({ limit: 2 });
    expect(first.data!.has_more).toBe(true);
    expect(first.data!.data.map((w) => w.id)).toEqual([ids[2], ids[1]]);
    const second = await team.resend.webhooks.list({ limit: 2, after: ids[1]! });
    expect(second.data).toMatchObject({ has_more: false, data: [{ id: ids[0] }] });
    expect(first.data!.data[0]).not.toHaveProperty('signing_secret');
    expect((await team.resend.webhooks.list({ limit: 101 })).error).toMatchObject({ statusCode: 422, name: 'validation_error' });
  });

  it('answers 422 naming the field for bad endpoints, events and statuses', async () => {
    const bad = async (body: unknown) => {
      const r = await call(api.url, acme.token, 'POST', '/webhooks', body);
      expect(r.status).toBe(422);
      return r.body as { name: string; message: string };
    };
    expect(await bad({ events: ['email.sent'] })).toMatchObject({ name: 'missing_required_field', message: expect.stringContaining('`endpoint`') });
    expect(await bad({ endpoint: 'https://example.com' })).toMatchObject({
      name: 'missing_required_field',
      message: expect.stringContaining('`events`'),
    });
    expect(await bad({ endpoint: 'https://example.com', events: [] })).toMatchObject({
      name: 'validation_error',
      message: expect.stringContaining('`events`'),
    });
    expect(await bad({ endpoint: 'https://example.com', events: ['email.sent', 'email.exploded'] })).toMatchObject({
      name: 'validation_error',
      message: expect.stringContaining('`email.exploded`'),
    });
    for (const endpoint of [
      'not a url',
      '/relative',
      'ftp://example.com/',
      'https://u:p@example.com/',
      `https://example.com/${'x'.repeat(2050)}`,
      'https://169.254.169.254/',
      'https://[::ffff:10.0.0.1]/',
    ]) {
      expect({ endpoint, ...(await bad({ endpoint, events: ['email.sent'] })) }).toMatchObject({
        endpoint,
        name: 'validation_error',
        message: expect.stringContaining('`endpoint`'),
      });
    }
    const sdk = await acme.resend.webhooks.create({ endpoint: 'https://example.com', events: ['inbox.created'] });
    expect(sdk.error).toMatchObject({ statusCode: 422, name: 'validation_error', message: expect.stringContaining('`inbox.created`') });

    const id = (await acme.resend.webhooks.create({ endpoint: 'https://example.com', events: ['email.sent'] })).data!.id;
    const patch = await call(api.url, acme.token, 'PATCH', `/webhooks/${id}`, { status: 'paused' });
    expect(patch).toMatchObject({ status: 422, body: { name: 'validation_error', message: expect.stringContaining('`status`') } });
    const invalidId = await call(api.url, acme.token, 'GET', '/webhooks/not-a-uuid');
    expect(invalidId.status).toBe(422);
  });

  it('accepts http and loopback endpoints when WEBHOOK_ALLOW_HTTP and WEBHOOK_ALLOWED_ADDRESSES say so', async () => {
    expect(api.config.WEBHOOK_ALLOW_HTTP).toBe(true);
    const created = await acme.resend.webhooks.create({ endpoint: 'http://127.0.0.1:9999/hook', events: ['email.sent'] });
    expect(created.error).toBeNull();
    expect((await acme.resend.webhooks.create({ endpoint: 'http://localhost:9999/hook', events: ['email.sent'] })).error).toBeNull();
    const privateAddress = await acme.resend.webhooks.create({ endpoint: 'http://10.0.0.1/hook', events: ['email.sent'] });
    expect(privateAddress.error).toMatchObject({ statusCode: 422, message: expect.stringContaining('private, loopback') });
  });

  it('refuses http and loopback endpoints by default (https only, empty allowlist)', async () => {
    const strict = await startTestApi();
    try {
      const team = await strict.team();
      for (const endpoint of ['http://example.com/hook', 'https://127.0.0.1/hook', 'https://localhost/hook', 'https://[::1]/hook']) {
        expect({ endpoint, error: (await team.resend.webhooks.create({ endpoint, events: ['email.sent'] })).error }).toMatchObject({
          endpoint,
          error: { statusCode: 422, name: 'validation_error' },
        });
      }
    } finally {
      await strict.close();
    }
  });

  it("scopes webhooks to the team: another team's webhook is a 404 everywhere", async () => {
    const id = (await acme.resend.webhooks.create({ endpoint: 'https://example.com/acme', events: ['email.sent'] })).data!.id;
    expect((await globex.resend.webhooks.get(id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await globex.resend.webhooks.update(id, { status: 'disabled' })).error).toMatchObject({ statusCode: 404 });
    expect((await globex.resend.webhooks.rotateSigningSecret(id)).error).toMatchObject({ statusCode: 404 });
    expect((await globex.resend.webhooks.remove(id)).error).toMatchObject({ statusCode: 404 });
    expect((await globex.resend.webhooks.list()).data!.data.map((w) => w.id)).not.toContain(id);
    expect((await acme.resend.webhooks.get(id)).data).toMatchObject({ id, status: 'enabled' });
  });

  it('refuses sending_access keys', async () => {
    const restricted = new Resend(await api.key(acme.teamId, 'sending_access'), { baseUrl: api.url });
    expect((await restricted.webhooks.list()).error).toMatchObject({ statusCode: 401, name: 'restricted_api_key' });
  });

  it('rotates the signing secret: the new one is current, the old one signs beside it for 24 hours', async () => {
    const created = await acme.resend.webhooks.create({ endpoint: 'https://example.com/rotate', events: ['email.sent'] });
    const id = created.data!.id;
    const old = created.data!.signing_secret;
    const rotated = await acme.resend.webhooks.rotateSigningSecret(id);
    expect(rotated.error).toBeNull();
    expect(rotated.data).toEqual({ object: 'webhook', id, signing_secret: expect.stringMatching(SECRET) });
    const fresh = rotated.data!.signing_secret;
    expect(fresh).not.toBe(old);
    expect((await acme.resend.webhooks.get(id)).data!.signing_secret).toBe(fresh);

    const service = api.app.get(WebhooksService);
    const webhook = await service.find(acme.teamId, id);
    const now = new Date();
    expect(service.signingSecrets(webhook, now)).toEqual([fresh, old]);
    expect(service.signingSecrets(webhook, new Date(now.getTime() + 23 * 3600_000))).toEqual([fresh, old]);
    expect(service.signingSecrets(webhook, new Date(now.getTime() + 24 * 3600_000 + 60_000))).toEqual([fresh]);

    // A receiver holding either secret verifies a delivery signed with both (Standard Webhooks: any v1 signature matches).
    const body = JSON.stringify({ type: 'email.sent', data: {} });
    const header = service
      .signingSecrets(webhook, now)
      .map((s) => `v1,${sign(s, 'msg_1', 1764000000, body)}`)
      .join(' ');
    for (const secret of [fresh, old]) expect(header.split(' ')).toContain(`v1,${sign(secret, 'msg_1', 1764000000, body)}`);

    // Rotating again retires the first secret at once: only the last two are valid.
    const again = (await acme.resend.webhooks.rotateSigningSecret(id)).data!.signing_secret;
    expect(service.signingSecrets(await service.find(acme.teamId, id), new Date())).toEqual([again, fresh]);
    expect((await acme.resend.webhooks.rotateSigningSecret(randomUUID())).error).toMatchObject({ statusCode: 404, name: 'not_found' });
  });
});
