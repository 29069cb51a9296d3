import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { EmailPlanes } from '@herald/database';
import { type AttemptOutcome, type MessageSettlement, WebhookHealthNotRecordedError, WebhookMessagesRepository } from '@herald/webhooks';
import { startTestApi, type TestApi, type TestTeam } from '../support/api-harness';

/**
 * Group commit of delivery outcomes: one batch records every attempt, settles every message,
 * and then (on the control plane, after the messages' commit) keeps each endpoint's health
 * exactly as if the outcomes had been recorded one by one in the batch's order (success clears
 * the failing streak, a failure starts it, a streak older than the window disables, a 410
 * disables at once).
 */
describe('webhooks: outcomes recorded in a batch', () => {
  const HOUR = 3_600_000;
  let api: TestApi;
  let db: DataSource;
  let repo: WebhookMessagesRepository;
  let team: TestTeam;

  beforeAll(async () => {
    api = await startTestApi({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.0/8' });
    db = api.app.get(DataSource);
    repo = new WebhookMessagesRepository(api.app.get(EmailPlanes), db);
    team = await api.team();
  });
  afterAll(async () => {
    await api?.close();
  });

  const webhook = async (failingSince: Date | null = null): Promise<string> => {
    const created = await team.resend.webhooks.create({ endpoint: `http://127.0.0.1:9/${randomUUID()}`, events: ['domain.created'] });
    expect(created.error).toBeNull();
    await db.query(`UPDATE webhooks SET failing_since = $2 WHERE id = $1`, [created.data!.id, failingSince]);
    return created.data!.id;
  };
  const message = async (webhookId: string): Promise<string> => {
    const id = `msg_${randomUUID().replace(/-/g, '')}`;
    await db.query(
      `INSERT INTO webhook_messages (id, webhook_id, team_id, event_id, event_type, payload, status, next_attempt_at)
       SELECT $1, w.id, w.team_id, $3, 'domain.created', '{}'::jsonb, 'attempting', now() + interval '1 minute' FROM webhooks w WHERE w.id = $2`,
      [id, webhookId, randomUUID()],
    );
    return id;
  };
  const outcome = async (
    webhookId: string,
    settlement: MessageSettlement,
    statusCode: number | null,
    sentAt = new Date(),
  ): Promise<AttemptOutcome> => {
    const id = await message(webhookId);
    return {
      message: { id, webhookId },
      attempt: {
        messageId: id,
        attempt: 1,
        statusCode,
        error: statusCode === null ? 'connect ECONNREFUSED' : null,
        responseExcerpt: '',
        durationMs: 3,
        sentAt,
      },
      settlement,
    };
  };
  const success = (webhookId: string) => outcome(webhookId, { status: 'success' }, 200);
  const failure = (webhookId: string, sentAt = new Date()) =>
    outcome(webhookId, { status: 'pending', nextAttemptAt: new Date(Date.now() + 5_000) }, 500, sentAt);
  const gone = (webhookId: string) => outcome(webhookId, { status: 'failed', disableWebhook: 'endpoint answered 410 Gone' }, 410);
  const health = async (id: string) =>
    (
      (await db.query(`SELECT status, failing_since, disabled_reason FROM webhooks WHERE id = $1`, [id])) as {
        status: string;
        failing_since: Date | null;
        disabled_reason: string | null;
      }[]
    )[0]!;

  it('records every attempt and settles every message of the batch in one go', async () => {
    const a = await webhook();
    const batch = [await success(a), await failure(a), await gone(await webhook())];
    await repo.recordAttempts(batch, 5 * 24 * HOUR);
    for (const o of batch) {
      const [m] = await db.query(`SELECT status, attempts, next_attempt_at FROM webhook_messages WHERE id = $1`, [o.message.id]);
      expect(m.status).toBe(o.settlement.status);
      expect(m.attempts).toBe(1);
      expect(m.next_attempt_at === null).toBe(o.settlement.status !== 'pending');
      const attempts = await db.query(`SELECT attempt, status_code FROM webhook_attempts WHERE message_id = $1`, [o.message.id]);
      expect(attempts).toEqual([{ attempt: 1, status_code: o.attempt.statusCode }]);
    }
  });

  it('keeps each endpoint’s health in the batch’s order', async () => {
    const since = new Date(Date.now() - HOUR);
    const failThenSucceed = await webhook(since);
    const succeedThenFail = await webhook(since);
    const freshFailure = await webhook();
    const healthy = await webhook(since);
    const firstFailure = new Date(Date.now() - 1_000);
    await repo.recordAttempts(
      [
        await failure(failThenSucceed),
        await success(succeedThenFail),
        await failure(freshFailure, firstFailure),
        await success(healthy),
        await success(failThenSucceed),
        await failure(succeedThenFail, firstFailure),
        await failure(freshFailure),
        await success(healthy),
      ],
      5 * 24 * HOUR,
    );
    expect(await health(failThenSucceed)).toEqual({ status: 'enabled', failing_since: null, disabled_reason: null });
    expect(await health(succeedThenFail)).toEqual({ status: 'enabled', failing_since: firstFailure, disabled_reason: null });
    expect(await health(freshFailure)).toEqual({ status: 'enabled', failing_since: firstFailure, disabled_reason: null });
    expect(await health(healthy)).toEqual({ status: 'enabled', failing_since: null, disabled_reason: null });
  });

  it('disables on a 410 at once and on a streak older than the window, whatever else the batch holds', async () => {
    const gone410 = await webhook();
    const stale = await webhook(new Date(Date.now() - 3 * HOUR));
    const staleButRecovered = await webhook(new Date(Date.now() - 3 * HOUR));
    await repo.recordAttempts(
      [
        await success(gone410),
        await gone(gone410),
        await success(gone410),
        await failure(stale),
        await success(staleButRecovered),
        await failure(staleButRecovered),
      ],
      2 * HOUR,
    );
    expect(await health(gone410)).toEqual({ status: 'disabled', failing_since: null, disabled_reason: 'endpoint answered 410 Gone' });
    expect(await health(stale)).toMatchObject({ status: 'disabled', disabled_reason: 'every delivery failed for 2.0 hours' });
    expect(await health(staleButRecovered)).toMatchObject({ status: 'enabled', disabled_reason: null });
    expect((await health(staleButRecovered)).failing_since).not.toBeNull();
  });

  it('commits the attempts and messages before the health: a health that cannot be written leaves them recorded', async () => {
    const a = await webhook(new Date(Date.now() - HOUR));
    const ok = await success(a);
    // Its webhook id is no uuid, which the health's transaction refuses after the outcomes' commit.
    const other = await success(a);
    const unhealthy: AttemptOutcome = { ...other, message: { id: other.message.id, webhookId: 'not-a-webhook' } };
    await expect(repo.recordAttempts([ok, unhealthy], 5 * 24 * HOUR)).rejects.toBeInstanceOf(WebhookHealthNotRecordedError);
    for (const o of [ok, unhealthy]) {
      const [m] = await db.query(`SELECT status FROM webhook_messages WHERE id = $1`, [o.message.id]);
      expect(m.status).toBe('success');
      expect(await db.query(`SELECT attempt FROM webhook_attempts WHERE message_id = $1`, [o.message.id])).toEqual([{ attempt: 1 }]);
    }
    // The batch's health is one transaction: none of it was written.
    expect((await health(a)).failing_since).not.toBeNull();
  });

  it('records the rest of a batch when one outcome cannot be recorded', async () => {
    const a = await webhook();
    const ok = await success(a);
    const orphan: AttemptOutcome = { ...(await success(a)), message: { id: 'msg_missing', webhookId: a } };
    orphan.attempt = { ...orphan.attempt, messageId: 'msg_missing' };
    await expect(repo.recordAttempts([ok, orphan], 5 * 24 * HOUR)).rejects.toThrow();
    // The dispatcher's group commit then records them one by one: the good one alone succeeds.
    await repo.recordAttempts([ok], 5 * 24 * HOUR);
    const [m] = await db.query(`SELECT status FROM webhook_messages WHERE id = $1`, [ok.message.id]);
    expect(m.status).toBe('success');
  });
});
