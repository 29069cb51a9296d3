import type { TestTeam } from '../support/api-harness';
import type { WebhookReceiver } from './webhook-receiver';
import { BOTH, verifiesWith, waitFor, WebhooksWorld } from './webhooks-world';

/** Replays of webhook events through the API, delivered by the webhooks role to a local receiver. */
describe('webhook delivery', () => {
  let world: WebhooksWorld;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    world = await WebhooksWorld.start();
    ({ receiver } = world);
  });
  afterAll(() => world?.close());
  afterEach(() => world.checkSignatures());

  const teamWithWebhook = (events?: string[]) => world.teamWithWebhook(events);
  const forDomain = (path: string, name: string) => world.forDomain(path, name);
  const createDomain = (team: TestTeam, name?: string) => world.createDomain(team, name);
  const messagesOf = (webhookId: string) => world.messagesOf(webhookId);

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
    // The whole schedule was tried: eight attempts, each one that reached the endpoint answered 503
    // (an attempt whose connection failed first is recorded with its error and no status).
    const attempts = (await team.resend.webhooks.events.attempts.list({ webhookId: id, eventId: messageId })).data!.data;
    expect(attempts).toHaveLength(8);
    const reached = attempts.filter((a) => a.http_status_code !== null);
    expect(reached.every((a) => a.http_status_code === 503)).toBe(true);
    expect(forDomain(path, domain.name)).toHaveLength(reached.length);
    expect((await team.resend.webhooks.events.get({ webhookId: id, eventId: messageId })).data).toMatchObject({
      status: 'failed',
      next_attempt_at: null,
    });
    healthy = true;
    expect((await team.resend.webhooks.events.replay({ webhookId: id, eventId: messageId })).error).toBeNull();
    await waitFor(async () => (await messagesOf(id)).find((m) => m.id === messageId)?.status === 'success', 'success after replay');
    expect(forDomain(path, domain.name).map((d) => d.headers['webhook-id'])).toEqual(new Array(reached.length + 1).fill(messageId));
  });
});
