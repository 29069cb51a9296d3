import type { INestApplicationContext } from '@nestjs/common';
import { Webhook } from 'standardwebhooks';
import { startWebhooks } from '../../apps/webhooks/src/webhooks.app';
import { DeliveryWorld } from '../support/delivery-world';
import { WebhookReceiver } from '../webhooks/webhook-receiver';

jest.setTimeout(60_000);

/**
 * The delivery engine's events as a customer receives them: sent, delivered, bounced and
 * suppressed, from the worker through the events stream and the webhooks role, signed, in the
 * payload shapes of API.md §9.4.
 */
describe('email events reach the customer’s webhook', () => {
  let world: DeliveryWorld;
  let webhooks: INestApplicationContext;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    world = await DeliveryWorld.start({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8' });
    webhooks = await startWebhooks(world.api.config, {}, { pollIntervalMs: 25, attemptTimeoutMs: 3_000 });
    receiver = await WebhookReceiver.start();
  });

  afterAll(async () => {
    await webhooks?.close();
    await receiver?.close();
    await world?.close();
  });

  const waitFor = async (predicate: () => boolean, what: string): Promise<void> => {
    const deadline = Date.now() + 15_000;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('delivers email.sent, email.delivered, email.bounced and email.suppressed, signed, with Resend’s data', async () => {
    const team = await world.team();
    const hook = await team.resend.webhooks.create({
      endpoint: receiver.url('/emails'),
      events: ['email.sent', 'email.delivered', 'email.bounced', 'email.suppressed'] as never,
    });
    expect(hook.error).toBeNull();
    const verifier = new Webhook(hook.data!.signing_secret);

    const sent = await team.resend.emails.send({
      from: `Acme <${team.from()}>`,
      to: ['delivered@herald.test', 'bounced@herald.test', 'suppressed@herald.test'],
      subject: 'Your receipt',
      text: 'Thanks',
      headers: { 'X-Entity-Ref-ID': 'r-1' },
      tags: [{ name: 'category', value: 'receipt' }],
    });
    expect(sent.error).toBeNull();
    const id = sent.data!.id;
    const forEmail = () => receiver.at('/emails').filter((d) => d.json.data.email_id === id);
    await waitFor(() => new Set(forEmail().map((d) => d.json.type)).size === 4, 'four event types');

    for (const delivery of forEmail()) expect(() => verifier.verify(delivery.body, delivery.headers as Record<string, string>)).not.toThrow();
    const byType = Object.fromEntries(forEmail().map((d) => [d.json.type, d.json]));
    const common = {
      email_id: id,
      from: `Acme <${team.from()}>`,
      subject: 'Your receipt',
      message_id: `<${id}@${team.domain}>`,
      tags: { category: 'receipt' },
      headers: [{ name: 'X-Entity-Ref-ID', value: 'r-1' }],
    };
    expect(byType['email.sent']).toMatchObject({
      created_at: expect.stringMatching(/Z$/),
      data: { ...common, to: ['delivered@herald.test', 'bounced@herald.test', 'suppressed@herald.test'] },
    });
    expect(byType['email.delivered'].data).toMatchObject({ ...common, to: ['delivered@herald.test'] });
    expect(byType['email.bounced'].data).toMatchObject({
      ...common,
      to: ['bounced@herald.test'],
      bounce: { type: 'Permanent', subType: 'General', message: expect.any(String), diagnosticCode: [expect.stringContaining('550 5.1.1')] },
    });
    expect(byType['email.suppressed'].data).toMatchObject({
      ...common,
      to: ['suppressed@herald.test'],
      suppressed: { type: 'OnAccountSuppressionList', reason: 'previous_bounce' },
    });
    // One delivery per event: the outbox, the relay and the stream never double an event.
    expect(forEmail()).toHaveLength(4);
  });

  it('announces a scheduled email with email.scheduled (recorded in its history, delivered to the webhook)', async () => {
    const team = await world.team();
    const hook = await team.resend.webhooks.create({ endpoint: receiver.url('/scheduled'), events: ['email.scheduled'] as never });
    expect(hook.error).toBeNull();
    const sent = await team.resend.emails.send({
      from: team.from(),
      to: 'delivered@herald.test',
      subject: 'Later',
      text: 'Later',
      scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(sent.error).toBeNull();
    const id = sent.data!.id;
    await waitFor(() => receiver.at('/scheduled').some((d) => d.json.data.email_id === id), 'email.scheduled');
    const [delivery] = receiver.at('/scheduled').filter((d) => d.json.data.email_id === id);
    expect(delivery.json).toMatchObject({ type: 'email.scheduled', data: { email_id: id, to: ['delivered@herald.test'], subject: 'Later' } });
    expect((await world.events(id)).map((e) => e.type)).toEqual(['email.scheduled']);
  });
});
