import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { startWebhooks } from '../../apps/webhooks/src/webhooks.app';
import { startTestApi, TestApi } from '../support/api-harness';
import { WebhookReceiver } from './webhook-receiver';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The dispatcher's own address check, behind the API's: a hostname is only resolved at
 * delivery, so `localhost` passes the API (whose WEBHOOK_ALLOWED_ADDRESSES allows loopback) and
 * is refused by a dispatcher whose allowlist is empty. Every refused attempt is recorded; the last fails the message.
 */
describe('webhook delivery to a refused address', () => {
  let api: TestApi;
  let webhooks: INestApplicationContext;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    api = await startTestApi({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8,::1' });
    webhooks = await startWebhooks(api.config, {}, { retryScheduleMs: [0, 50, 50], pollIntervalMs: 25, allowedAddresses: [] });
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver?.close();
    await webhooks?.close();
    await api?.close();
  });

  it('records each refused attempt with a clear error and fails the message without connecting', async () => {
    const team = await api.team();
    const endpoint = receiver.url('/ssrf').replace('127.0.0.1', 'localhost');
    const webhook = await team.resend.webhooks.create({ endpoint, events: ['domain.created'] });
    expect(webhook.error).toBeNull();
    expect((await team.resend.domains.create({ name: 'ssrf.hooks.test' })).error).toBeNull();
    const db = api.app.get(DataSource);
    const deadline = Date.now() + 10_000;
    let messages: { id: string; status: string; attempts: number }[] = [];
    while (Date.now() < deadline) {
      messages = await db.query(
        `SELECT id, status, attempts FROM webhook_messages WHERE webhook_id = $1 AND payload->'data'->>'name' = 'ssrf.hooks.test'`,
        [webhook.data!.id],
      );
      if (messages[0]?.status === 'failed') break;
      await sleep(25);
    }
    expect(messages).toEqual([expect.objectContaining({ status: 'failed', attempts: 3 })]);
    const attempts: { status_code: number | null; error: string }[] = await db.query(
      `SELECT status_code, error FROM webhook_attempts WHERE message_id = $1 ORDER BY attempt`,
      [messages[0]!.id],
    );
    expect(attempts).toHaveLength(3);
    for (const a of attempts)
      expect(a).toEqual({ status_code: null, error: expect.stringMatching(/^refused: localhost resolves to loopback address (127\.0\.0\.1|::1)$/) });
    expect(receiver.at('/ssrf')).toEqual([]);
  });
});
