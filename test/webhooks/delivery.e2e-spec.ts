import { randomUUID } from 'node:crypto';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { DataSource } from 'typeorm';
import { eventSubject } from '@herald/bus';
import type { TestApi, TestTeam } from '../support/api-harness';
import { verifySignature, type WebhookReceiver } from './webhook-receiver';
import { BOTH, REST_TIME, sleep, verifiesWith, waitFor, WebhooksWorld } from './webhooks-world';

/**
 * The webhooks role end to end: the API publishes events, the role (in this process, on the
 * same isolated schema and NATS namespace, with a compressed retry schedule) fans them out and
 * POSTs them, signed, to a local receiver (replay.e2e-spec.ts has the replays).
 */
describe('webhook delivery', () => {
  let world: WebhooksWorld;
  let api: TestApi;
  let receiver: WebhookReceiver;
  let db: DataSource;
  let nc: NatsConnection;
  let secrets: Map<string, string[]>;

  beforeAll(async () => {
    world = await WebhooksWorld.start();
    ({ api, receiver, db, nc, secrets } = world);
  });
  afterAll(() => world?.close());
  afterEach(() => world.checkSignatures());

  const teamWithWebhook = (events?: string[]) => world.teamWithWebhook(events);
  const forDomain = (path: string, name: string) => world.forDomain(path, name);
  const createDomain = (team: TestTeam, name?: string) => world.createDomain(team, name);
  const messagesOf = (webhookId: string) => world.messagesOf(webhookId);

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
    expect(verifiesWith(delivery!, 'whsec_' + Buffer.from('wrong-secret-wrong-secret').toString('base64'))).toEqual({
      standardwebhooks: false,
      svix: false,
    });
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
    const secondPage = await team.resend.webhooks.events.attempts.list({
      webhookId: id,
      eventId: messageId,
      limit: 2,
      after: firstPage.data!.data[1]!.id,
    });
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
    expect((await other.resend.webhooks.events.attempts.list({ webhookId: id, eventId })).error).toMatchObject({
      statusCode: 404,
      name: 'not_found',
    });
    const unknown = `msg_${'0'.repeat(32)}`;
    expect((await team.resend.webhooks.events.get({ webhookId: id, eventId: unknown })).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await team.resend.webhooks.events.get({ webhookId: id, eventId: 'nope' })).error).toMatchObject({ statusCode: 422 });
    expect((await team.resend.webhooks.events.list({ webhookId: id, limit: 101 })).error).toMatchObject({
      statusCode: 422,
      name: 'validation_error',
    });
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
    const hanging = `/hang-${world.nextPath()}`;
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
    expect(receiver.at(hanging).filter((d) => names.includes(d.json.data.name as string)).length).toBeGreaterThan(0);
    expect(receiver.maxOpen(hanging)).toBeLessThanOrEqual(4);
  });

  it('makes one message and one delivery of an event the fan-out handler sees twice', async () => {
    const { team, path, id } = await teamWithWebhook(['domain.updated']);
    const event = {
      id: randomUUID(),
      type: 'domain.updated',
      created_at: new Date().toISOString(),
      data: { id: randomUUID(), name: `twice-${world.paths}.hooks.test` },
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
    const rows: { event_id: string }[] = await db.query(`SELECT event_id FROM webhook_messages WHERE webhook_id = $1 AND event_id = $2`, [
      id,
      event.id,
    ]);
    expect(rows).toHaveLength(1);
  });
});
