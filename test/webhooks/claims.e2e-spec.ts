import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { EmailPlanes } from '@herald/database';
import { type FanOutEvent, WebhookClaimsRepository, WebhookMessagesRepository } from '@herald/webhooks';
import { call, startTestApi, type TestApi, type TestTeam } from '../support/api-harness';

/**
 * Webhooks are the control plane's and their messages the email plane's (issue 15), so fan-out,
 * the claim and the look-up of webhooks with due messages read the webhooks in statements of
 * their own. What that must keep: only enabled webhooks subscribed to the type get messages; the
 * messages of a webhook disabled after they were made are not delivered (a claim hands them back
 * as they were, and the claims skip them from then on) until it is enabled again; a claim carries
 * the webhook's endpoint and secrets as they are when it is made. No foreign key binds the
 * messages to their webhook either: deleting a webhook deletes its messages after it, and a
 * message made for a webhook deleted meanwhile is deleted when the dispatcher meets it.
 */
describe('webhooks: fan-out and claims read the webhooks apart from their messages', () => {
  let api: TestApi;
  let db: DataSource;
  let messages: WebhookMessagesRepository;
  let claims: WebhookClaimsRepository;
  let team: TestTeam;

  beforeAll(async () => {
    api = await startTestApi({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8' });
    db = api.app.get(DataSource);
    messages = new WebhookMessagesRepository(api.app.get(EmailPlanes), db);
    claims = new WebhookClaimsRepository(api.app.get(EmailPlanes), db);
  });
  beforeEach(async () => {
    // Claims take every team's due messages: each test starts with none, and a team of its own.
    await db.query(`DELETE FROM webhook_messages`);
    team = await api.team();
  });
  afterAll(async () => {
    await api?.close();
  });

  const webhook = async (events: string[] = ['domain.created']): Promise<{ id: string; endpoint: string; secret: string }> => {
    const endpoint = `http://127.0.0.1:9/${randomUUID()}`;
    const created = await call(api.url, team.token, 'POST', '/webhooks', { endpoint, events });
    expect(created.status).toBe(200);
    return { id: created.body.id, endpoint, secret: created.body.signing_secret };
  };
  const setStatus = async (id: string, status: 'enabled' | 'disabled') =>
    expect((await call(api.url, team.token, 'PATCH', `/webhooks/${id}`, { status })).status).toBe(200);
  const event = (type = 'domain.created', teamId = team.teamId): FanOutEvent => ({
    id: randomUUID(),
    teamId,
    type,
    payload: { type, created_at: new Date().toISOString(), data: { id: randomUUID() } },
  });
  /** As stored, to the microsecond. */
  const messagesOf = async (webhookId: string): Promise<{ id: string; status: string; next_attempt_at: string }[]> =>
    db.query(`SELECT id, status, next_attempt_at::text FROM webhook_messages WHERE webhook_id = $1 ORDER BY id`, [webhookId]);
  const claim = (skip: string[] = []) => claims.claimDue(100, 60_000, 100, new Map(), [], skip);
  const remove = async (id: string) => (await call(api.url, team.token, 'DELETE', `/webhooks/${id}`)).status;
  const attemptsOf = async (messageIds: string[]): Promise<unknown[]> =>
    db.query(`SELECT id FROM webhook_attempts WHERE message_id = ANY($1::text[])`, [messageIds]);
  /**
   * Fan-out whose webhook is deleted (through the API) right after it read the subscriptions: the
   * race of a deletion between fan-out's read and its insert.
   */
  const fanOutRacingDeletion = async (webhookId: string, fanned: FanOutEvent): Promise<number> => {
    const racing = Object.assign(Object.create(db) as DataSource, {
      query: async (sql: string, parameters?: unknown[]) => {
        const rows: unknown = await db.query(sql, parameters);
        if (/FROM webhooks/.test(sql)) expect(await remove(webhookId)).toBe(200);
        return rows;
      },
    });
    return new WebhookMessagesRepository(api.app.get(EmailPlanes), racing).fanOut(fanned);
  };

  it('makes messages for the enabled webhooks of the team subscribed to the type only', async () => {
    const created = await webhook(['domain.created', 'domain.deleted']);
    const deleted = await webhook(['domain.deleted']);
    const disabled = await webhook(['domain.created']);
    await setStatus(disabled.id, 'disabled');
    const first = event('domain.created');
    expect(await messages.fanOutMany([first, event('domain.deleted'), event('domain.created', randomUUID()), first])).toEqual([1, 2, 0, 0]);
    expect(await messagesOf(created.id)).toHaveLength(2);
    expect(await messagesOf(deleted.id)).toHaveLength(1);
    expect(await messagesOf(disabled.id)).toHaveLength(0);
    // Seen again: nothing new.
    expect(await messages.fanOut(first)).toBe(0);
  });

  it('hands back the messages of a webhook disabled after they were made, as they were, skips them, and claims them once it is enabled again', async () => {
    const kept = await webhook();
    const stopped = await webhook();
    await messages.fanOut(event());
    await setStatus(stopped.id, 'disabled');
    const before = await messagesOf(stopped.id);

    const first = await claim();
    expect(first.due.map((m) => m.webhookId)).toEqual([kept.id]);
    expect(first.due[0]).toMatchObject({ endpoint: kept.endpoint, signingSecret: kept.secret, attempts: 0 });
    expect(first.stopped).toEqual([stopped.id]);
    expect(await messagesOf(stopped.id)).toEqual(before);
    expect(await claims.webhooksWithDueMessages(10)).toEqual({ due: [], stopped: [stopped.id] });

    // Skipped, the message is not claimed again, nor touched.
    expect(await claim([stopped.id])).toEqual({ due: [], stopped: [] });
    expect(await messagesOf(stopped.id)).toEqual(before);

    await setStatus(stopped.id, 'enabled');
    expect(await claims.webhooksWithDueMessages(10)).toEqual({ due: [stopped.id], stopped: [] });
    const again = await claim();
    expect(again.due.map((m) => m.id)).toEqual(before.map((m) => m.id));
    expect(again.due[0]).toMatchObject({ endpoint: stopped.endpoint, signingSecret: stopped.secret });
  });

  it('claims with the secrets as they are at the claim: a rotation after the fan-out signs with both', async () => {
    const hook = await webhook();
    await messages.fanOut(event());
    const rotated = await call(api.url, team.token, 'POST', `/webhooks/${hook.id}/signing-secret/rotate`);
    expect(rotated.status).toBe(200);
    const { due } = await claim();
    expect(due).toHaveLength(1);
    expect(due[0]).toMatchObject({ signingSecret: rotated.body.signing_secret, previousSecret: hook.secret });
    expect(due[0]!.signingSecret).not.toBe(hook.secret);
  });

  it('looks up the webhooks with due messages a page at a time, up to the limit, past the ones not enabled', async () => {
    const hooks = [await webhook(), await webhook(), await webhook()];
    const off = await webhook();
    await messages.fanOut(event());
    await setStatus(off.id, 'disabled');
    const enabled = hooks.map((h) => h.id).sort();
    const one = await claims.webhooksWithDueMessages(1);
    expect(one.due).toHaveLength(1);
    expect(enabled).toContain(one.due[0]);
    const all = await claims.webhooksWithDueMessages(10);
    expect([...all.due].sort()).toEqual(enabled);
    expect(all.stopped).toEqual([off.id]);
  });

  it('deletes a deleted webhook’s messages and their attempts with it, delivered or not, and no other webhook’s', async () => {
    const doomed = await webhook();
    const kept = await webhook();
    await messages.fanOut(event());
    await messages.fanOut(event());
    const [delivered] = await messagesOf(doomed.id);
    const attempt = { messageId: delivered!.id, attempt: 1, statusCode: 200, error: null, responseExcerpt: '', durationMs: 3, sentAt: new Date() };
    await messages.recordAttempt({ id: delivered!.id, webhookId: doomed.id }, attempt, { status: 'success' }, 60_000);
    const doomedIds = (await messagesOf(doomed.id)).map((m) => m.id);
    expect(await attemptsOf(doomedIds)).toHaveLength(1);

    expect(await remove(doomed.id)).toBe(200);
    expect(await messagesOf(doomed.id)).toEqual([]);
    expect(await attemptsOf(doomedIds)).toEqual([]);
    expect(await messagesOf(kept.id)).toHaveLength(2);
    // Retried, the deletion answers that the webhook is gone and leaves the same.
    expect(await remove(doomed.id)).toBe(404);
    expect(await messagesOf(kept.id)).toHaveLength(2);
  });

  it('deletes at its claim, never delivering it, a message made for a webhook deleted after fan-out read it', async () => {
    const hook = await webhook();
    expect(await fanOutRacingDeletion(hook.id, event())).toBe(1);
    expect(await messagesOf(hook.id)).toHaveLength(1);
    expect(await claim()).toEqual({ due: [], stopped: [] });
    expect(await messagesOf(hook.id)).toEqual([]);
  });

  it('deletes at the look-up of webhooks with due messages a message made for a webhook deleted after fan-out read it', async () => {
    const hook = await webhook();
    const off = await webhook();
    expect(await fanOutRacingDeletion(hook.id, event())).toBe(2);
    await setStatus(off.id, 'disabled');
    expect(await claims.webhooksWithDueMessages(10)).toEqual({ due: [], stopped: [off.id] });
    expect(await messagesOf(hook.id)).toEqual([]);
    // The disabled webhook's message is kept, to be delivered once it is enabled again.
    expect(await messagesOf(off.id)).toHaveLength(1);
  });
});
