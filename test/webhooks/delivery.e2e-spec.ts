import { randomUUID } from 'node:crypto';
import { INestMicroservice } from '@nestjs/common';
import { jetstream } from '@nats-io/jetstream';
import { connect, NatsConnection } from '@nats-io/transport-node';
import { DataSource } from 'typeorm';
import { eventSubject } from '@herald/bus';
import { startWebhooks } from '../../apps/webhooks/src/webhooks.app';
import { startTestApi, TestApi, TestTeam } from '../support/api-harness';
import { ReceivedDelivery, verifySignature, WebhookReceiver } from './webhook-receiver';

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
  let webhooks: INestMicroservice;
  let receiver: WebhookReceiver;
  let db: DataSource;
  let nc: NatsConnection;
  let paths = 0;

  beforeAll(async () => {
    api = await startTestApi();
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

  /** A new team with a webhook on its own receiver path. */
  async function teamWithWebhook(events: string[] = ['domain.created']): Promise<{ team: TestTeam; path: string; id: string; secret: string }> {
    const team = await api.team();
    const path = `/hook-${++paths}`;
    const created = await team.resend.webhooks.create({ endpoint: receiver.url(path), events: events as never });
    expect(created.error).toBeNull();
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
    expect(verifySignature(delivery!, 'whsec_' + Buffer.from('wrong').toString('base64'), 'webhook')).toBe(false);
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
    expect((await team.resend.webhooks.create({ endpoint: receiver.url(hanging), events: ['domain.created'] })).error).toBeNull();
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
