import { randomUUID } from 'node:crypto';
import { INestApplicationContext } from '@nestjs/common';
import { jetstream } from '@nats-io/jetstream';
import { connect, NatsConnection } from '@nats-io/transport-node';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { DataSource } from 'typeorm';
import { eventSubject } from '@herald/bus';
import { startWebhooks } from '../../apps/webhooks/src/webhooks.app';
import { startTestApi, TestApi, TestTeam } from '../support/api-harness';
import { ReceivedDelivery, verifySignature, WebhookReceiver } from './webhook-receiver';

/** The delivery's headers of one family, as the verifiers take them. */
function family(delivery: ReceivedDelivery, prefix: 'webhook' | 'svix'): Record<string, string> {
  return {
    [`${prefix}-id`]: String(delivery.headers[`${prefix}-id`]),
    [`${prefix}-timestamp`]: String(delivery.headers[`${prefix}-timestamp`]),
    [`${prefix}-signature`]: String(delivery.headers[`${prefix}-signature`]),
  };
}

/** Whether the real `standardwebhooks` verifier (webhook-* headers) and the real `svix` one (svix-* headers) both accept it. */
function verifiesWith(delivery: ReceivedDelivery, secret: string): { standardwebhooks: boolean; svix: boolean } {
  const accepts = (verify: () => unknown) => {
    try {
      verify();
      return true;
    } catch {
      return false;
    }
  };
  return {
    standardwebhooks: accepts(() => new StandardWebhook(secret).verify(delivery.body, family(delivery, 'webhook'))),
    svix: accepts(() => new SvixWebhook(secret).verify(delivery.body, family(delivery, 'svix'))),
  };
}
const BOTH = { standardwebhooks: true, svix: true };
const REST_TIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}\+00$/;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/**
 * The webhooks role end to end: the API publishes events, the role (in this process, on the
 * same isolated schema and NATS namespace, with a compressed retry schedule) fans them out and
 * POSTs them, signed, to a local receiver.
 */
describe('webhook delivery', () => {
  let api: TestApi;
  let webhooks: INestApplicationContext;
  let receiver: WebhookReceiver;
  let db: DataSource;
  let nc: NatsConnection;
  let paths = 0;

  beforeAll(async () => {
    api = await startTestApi({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8,::1' });
    webhooks = await startWebhooks(api.config, {}, { retryScheduleMs: [0, 100, 100, 100, 100, 100, 100, 100], pollIntervalMs: 25, attemptTimeoutMs: 3_000 });
    receiver = await WebhookReceiver.start();
    db = api.app.get(DataSource);
    nc = await connect({ servers: api.config.NATS_URL });
  });
  afterAll(async () => {
    await nc?.close();
    await receiver?.close();
    await webhooks?.close();
    await api?.close();
  });

  /** Every receiver path's signing secrets: each delivery must verify with one of them. */
  const secrets = new Map<string, string[]>();
  afterEach(() => {
    for (const delivery of receiver.received.splice(0)) {
      const known = secrets.get(delivery.path) ?? [];
      expect({ path: delivery.path, verifies: known.some((secret) => verifiesWith(delivery, secret).standardwebhooks && verifiesWith(delivery, secret).svix) }).toEqual({
        path: delivery.path,
        verifies: true,
      });
    }
  });

  /** A new team with a webhook on its own receiver path. */
  async function teamWithWebhook(events: string[] = ['domain.created']): Promise<{ team: TestTeam; path: string; id: string; secret: string }> {
    const team = await api.team();
    const path = `/hook-${++paths}`;
    const created = await team.resend.webhooks.create({ endpoint: receiver.url(path), events: events as never });
    expect(created.error).toBeNull();
    secrets.set(path, [created.data!.signing_secret]);
    return { team, path, id: created.data!.id, secret: created.data!.signing_secret };
  }

  const forDomain = (path: string, name: string): ReceivedDelivery[] => receiver.at(path).filter((d) => d.json.data.name === name);
  const createDomain = async (team: TestTeam, name = `${randomUUID().slice(0, 8)}.hooks.test`) => {
    const created = await team.resend.domains.create({ name });
    expect(created.error).toBeNull();
    return created.data!;
  };
  const messagesOf = async (webhookId: string): Promise<{ id: string; status: string; attempts: number }[]> =>
    db.query(`SELECT id, status, attempts FROM webhook_messages WHERE webhook_id = $1`, [webhookId]);

  it('delivers domain.created once, signed the Standard Webhooks way in both header families', async () => {
    const { team, path, id, secret } = await teamWithWebhook();
    const domain = await createDomain(team);
    await waitFor(() => forDomain(path, domain.name).length === 1, 'the delivery');
    await sleep(300);
    const [delivery] = forDomain(path, domain.name);
    expect(forDomain(path, domain.name)).toHaveLength(1);
    expect(delivery!.json).toMatchObject({ type: 'domain.created', data: { id: domain.id, name: domain.name } });
    expect(delivery!.json.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(delivery!.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(delivery!.headers['svix-id']).toBe(delivery!.headers['webhook-id']);
    expect(verifySignature(delivery!, secret, 'webhook')).toBe(true);
    expect(verifySignature(delivery!, secret, 'svix')).toBe(true);
    expect(verifiesWith(delivery!, secret)).toEqual(BOTH);
    expect(verifiesWith(delivery!, 'whsec_' + Buffer.from('wrong-secret-wrong-secret').toString('base64'))).toEqual({ standardwebhooks: false, svix: false });
    await waitFor(async () => (await messagesOf(id)).some((m) => m.status === 'success'), 'the success to be recorded');
  });

  it('retries a 500 on the schedule with the same message id and records every attempt', async () => {
    const { team, path, id } = await teamWithWebhook();
    receiver.answer(path, (n) => (n < 2 ? 500 : 200));
    const domain = await createDomain(team);
    await waitFor(() => forDomain(path, domain.name).length === 3, 'three deliveries');
    const ids = forDomain(path, domain.name).map((d) => d.headers['webhook-id']);
    expect(new Set(ids).size).toBe(1);
    const messageId = ids[0] as string;
    await waitFor(async () => (await messagesOf(id)).find((m) => m.id === messageId)?.status === 'success', 'success');
    const attempts: { attempt: number; status_code: number; response_excerpt: string }[] = await db.query(
      `SELECT attempt, status_code, response_excerpt FROM webhook_attempts WHERE message_id = $1 ORDER BY attempt`,
      [messageId],
    );
    expect(attempts).toEqual([
      { attempt: 1, status_code: 500, response_excerpt: 'answered 500' },
      { attempt: 2, status_code: 500, response_excerpt: 'answered 500' },
      { attempt: 3, status_code: 200, response_excerpt: 'answered 200' },
    ]);

    // The same story through the event log API, with the resend SDK.
    const listed = await team.resend.webhooks.events.list({ webhookId: id });
    expect(listed.error).toBeNull();
    expect(listed.data).toEqual({
      object: 'list',
      has_more: false,
      data: [{ id: messageId, type: 'domain.created', created_at: expect.stringMatching(REST_TIME), status: 'success' }],
    });
    const got = await team.resend.webhooks.events.get({ webhookId: id, eventId: messageId });
    expect(got.error).toBeNull();
    expect(got.data).toEqual({
      object: 'webhook_event',
      id: messageId,
      type: 'domain.created',
      created_at: listed.data!.data[0]!.created_at,
      status: 'success',
      next_attempt_at: null,
      payload: forDomain(path, domain.name)[0]!.json,
    });
    const tried = await team.resend.webhooks.events.attempts.list({ webhookId: id, eventId: messageId });
    expect(tried.error).toBeNull();
    expect(tried.data!.has_more).toBe(false);
    expect(tried.data!.data).toEqual([
      { id: expect.stringMatching(/^\d+$/), http_status_code: 200, response: 'answered 200', sent_at: expect.stringMatching(REST_TIME) },
      { id: expect.stringMatching(/^\d+$/), http_status_code: 500, response: 'answered 500', sent_at: expect.stringMatching(REST_TIME) },
      { id: expect.stringMatching(/^\d+$/), http_status_code: 500, response: 'answered 500', sent_at: expect.stringMatching(REST_TIME) },
    ]);
    const firstPage = await team.resend.webhooks.events.attempts.list({ webhookId: id, eventId: messageId, limit: 2 });
    expect(firstPage.data).toMatchObject({ has_more: true, data: [{ http_status_code: 200 }, { http_status_code: 500 }] });
    const secondPage = await team.resend.webhooks.events.attempts.list({ webhookId: id, eventId: messageId, limit: 2, after: firstPage.data!.data[1]!.id });
    expect(secondPage.data).toMatchObject({ has_more: false, data: [{ id: tried.data!.data[2]!.id, http_status_code: 500 }] });
  });

  it('pages the event log newest first and scopes it to the team', async () => {
    const { team, path, id } = await teamWithWebhook();
    const names: string[] = [];
    for (let i = 0; i < 3; i++) {
      names.push((await createDomain(team)).name);
      await waitFor(() => forDomain(path, names[i]!).length === 1, `delivery ${i}`);
    }
    const messageIds = names.map((n) => forDomain(path, n)[0]!.headers['webhook-id'] as string);
    const first = await team.resend.webhooks.events.list({ webhookId: id, limit: 2 });
    expect(first.data).toMatchObject({ has_more: true, data: [{ id: messageIds[2] }, { id: messageIds[1] }] });
    const second = await team.resend.webhooks.events.list({ webhookId: id, limit: 2, after: messageIds[1]! });
    expect(second.data).toMatchObject({ has_more: false, data: [{ id: messageIds[0] }] });

    const other = await api.team();
    const eventId = messageIds[0]!;
    expect((await other.resend.webhooks.events.list({ webhookId: id })).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await other.resend.webhooks.events.get({ webhookId: id, eventId })).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await other.resend.webhooks.events.replay({ webhookId: id, eventId })).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await other.resend.webhooks.events.attempts.list({ webhookId: id, eventId })).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    const unknown = `msg_${'0'.repeat(32)}`;
    expect((await team.resend.webhooks.events.get({ webhookId: id, eventId: unknown })).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await team.resend.webhooks.events.get({ webhookId: id, eventId: 'nope' })).error).toMatchObject({ statusCode: 422 });
    expect((await team.resend.webhooks.events.list({ webhookId: id, limit: 101 })).error).toMatchObject({ statusCode: 422, name: 'validation_error' });
  });

  it('replays a delivered event: delivered again under the same message id, with a fresh attempt budget', async () => {
    const { team, path, id, secret } = await teamWithWebhook();
    const domain = await createDomain(team);
    await waitFor(() => forDomain(path, domain.name).length === 1, 'the delivery');
    const messageId = forDomain(path, domain.name)[0]!.headers['webhook-id'] as string;
    await waitFor(async () => (await messagesOf(id)).find((m) => m.id === messageId)?.status === 'success', 'success');

    const replayed = await team.resend.webhooks.events.replay({ webhookId: id, eventId: messageId });
    expect(replayed).toMatchObject({ data: { object: 'webhook_event', id: messageId }, error: null });
    await waitFor(() => forDomain(path, domain.name).length === 2, 'the replayed delivery');
    const [first, again] = forDomain(path, domain.name);
    expect(again!.headers['webhook-id']).toBe(messageId);
    expect(again!.headers['svix-id']).toBe(messageId);
    expect(again!.body).toBe(first!.body);
    expect(verifiesWith(again!, secret)).toEqual(BOTH);
    await waitFor(async () => (await messagesOf(id)).find((m) => m.id === messageId)?.status === 'success', 'success again');
    expect((await messagesOf(id)).find((m) => m.id === messageId)).toMatchObject({ attempts: 1 });
    const tried = await team.resend.webhooks.events.attempts.list({ webhookId: id, eventId: messageId });
    expect(tried.data!.data.map((a) => a.http_status_code)).toEqual([200, 200]);
  });

  it('replays a failed event after the endpoint recovers', async () => {
    const { team, path, id } = await teamWithWebhook();
    let healthy = false;
    receiver.answer(path, () => (healthy ? 200 : 503));
    const domain = await createDomain(team);
    await waitFor(async () => (await messagesOf(id)).some((m) => m.status === 'failed'), 'the message to fail', 15_000);
    const messageId = (await messagesOf(id))[0]!.id;
    expect(forDomain(path, domain.name)).toHaveLength(8);
    expect((await team.resend.webhooks.events.get({ webhookId: id, eventId: messageId })).data).toMatchObject({ status: 'failed', next_attempt_at: null });
    healthy = true;
    expect((await team.resend.webhooks.events.replay({ webhookId: id, eventId: messageId })).error).toBeNull();
    await waitFor(async () => (await messagesOf(id)).find((m) => m.id === messageId)?.status === 'success', 'success after replay');
    expect(forDomain(path, domain.name).map((d) => d.headers['webhook-id'])).toEqual(new Array(9).fill(messageId));
  });

  it('signs with both secrets after a rotation, through the running role', async () => {
    const { team, path, id, secret: oldSecret } = await teamWithWebhook();
    const rotated = await team.resend.webhooks.rotateSigningSecret(id);
    expect(rotated.error).toBeNull();
    const newSecret = rotated.data!.signing_secret;
    expect(newSecret).not.toBe(oldSecret);
    secrets.set(path, [newSecret, oldSecret]);
    const domain = await createDomain(team);
    await waitFor(() => forDomain(path, domain.name).length === 1, 'the delivery');
    const [delivery] = forDomain(path, domain.name);
    expect(String(delivery!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifiesWith(delivery!, oldSecret)).toEqual(BOTH);
    expect(verifiesWith(delivery!, newSecret)).toEqual(BOTH);
  });

  it('disables the webhook when the endpoint answers 410, and fails the message', async () => {
    const { team, path, id } = await teamWithWebhook();
    receiver.answer(path, () => 410);
    const domain = await createDomain(team);
    await waitFor(() => forDomain(path, domain.name).length === 1, 'the delivery');
    await waitFor(async () => (await team.resend.webhooks.get(id)).data?.status === 'disabled', 'the webhook to be disabled');
    const [row]: { disabled_reason: string }[] = await db.query(`SELECT disabled_reason FROM webhooks WHERE id = $1`, [id]);
    expect(row!.disabled_reason).toMatch(/410/);
    const message = (await messagesOf(id)).find((m) => m.id === forDomain(path, domain.name)[0]!.headers['webhook-id']);
    expect(message).toMatchObject({ status: 'failed', attempts: 1 });
  });

  it('does not let a hanging endpoint delay a healthy one', async () => {
    const { team, path: healthy } = await teamWithWebhook();
    const hanging = `/hang-${++paths}`;
    const hangingHook = await team.resend.webhooks.create({ endpoint: receiver.url(hanging), events: ['domain.created'] });
    expect(hangingHook.error).toBeNull();
    secrets.set(hanging, [hangingHook.data!.signing_secret]);
    receiver.answer(hanging, () => 'hang');
    const names: string[] = [];
    for (let i = 0; i < 8; i++) names.push((await createDomain(team)).name);
    const started = Date.now();
    await waitFor(() => names.every((n) => forDomain(healthy, n).length === 1), 'every healthy delivery', 2_500);
    expect(Date.now() - started).toBeLessThan(2_500);
    // The hanging endpoint holds only its own slots: at most 4 requests are open at a time.
    expect(receiver.at(hanging).filter((d) => names.includes(d.json.data.name as string)).length).toBeLessThanOrEqual(4);
  });

  it('makes one message and one delivery of an event the fan-out handler sees twice', async () => {
    const { team, path, id } = await teamWithWebhook(['domain.updated']);
    const event = {
      id: randomUUID(),
      type: 'domain.updated',
      created_at: new Date().toISOString(),
      data: { id: randomUUID(), name: `twice-${paths}.hooks.test` },
      team_id: team.teamId,
    };
    // Published without a Nats-Msg-Id, so JetStream stores (and the consumer delivers) it twice.
    const js = jetstream(nc);
    const subject = eventSubject(api.config.NATS_NAMESPACE, api.config.HERALD_REGION, event.type);
    await js.publish(subject, JSON.stringify(event));
    await js.publish(subject, JSON.stringify(event));
    await waitFor(() => forDomain(path, event.data.name).length === 1, 'the delivery');
    await sleep(500);
    expect(forDomain(path, event.data.name)).toHaveLength(1);
    const rows: { event_id: string }[] = await db.query(`SELECT event_id FROM webhook_messages WHERE webhook_id = $1 AND event_id = $2`, [id, event.id]);
    expect(rows).toHaveLength(1);
  });
});
