import { DataSource } from 'typeorm';
import { HeraldError } from '@herald/core';
import { SuppressionsService } from '@herald/suppressions';
import { startTestApi, type TestApi, type TestTeam } from '../../../test/support/api-harness';
import { newEmailRow, normalizedEmail } from '../../../test/support/email-rows';
import type { ClaimedEmail, EmailOutcome } from './delivery-state.types';
import { emailEvent } from './email-events';
import { EmailStore } from './email.store';

/**
 * A worker records a hard bounce and the suppression it causes in one transaction: the bounce is
 * never on record without the suppression, nor the suppression without the bounce.
 */
describe('EmailStore.record with a write alongside', () => {
  let api: TestApi;
  let team: TestTeam;
  let store: EmailStore;
  let suppressions: SuppressionsService;
  let db: DataSource;

  beforeAll(async () => {
    api = await startTestApi();
    team = await api.team();
    store = api.app.get(EmailStore);
    suppressions = api.app.get(SuppressionsService);
    db = api.app.get(DataSource);
  });

  afterAll(() => api?.close());

  async function claimedEmailTo(address: string): Promise<ClaimedEmail> {
    const row = newEmailRow(team.teamId, normalizedEmail(team.from('hello'), team.domain, { to: [address], recipients: [{ kind: 'to', address }] }));
    await store.insert([row]);
    const { claimed } = await store.claim([row.id], 60, () => []);
    return claimed.get(row.id)!;
  }

  const hardBounce = (email: ClaimedEmail, address: string): EmailOutcome => ({
    emailId: email.id,
    token: email.token,
    updates: [
      { position: email.recipients[0]!.position, status: 'bounced', response: '550 5.1.1 user unknown', mx: 'mx.example.com', nextAttemptAt: null },
    ],
    events: [
      emailEvent('email.bounced', email, [address], new Date(), 'spec', {
        bounce: { type: 'Permanent', subType: 'NoEmail', message: 'user unknown', diagnosticCode: ['smtp; 550 5.1.1 user unknown'] },
      }),
    ],
  });

  const recipientStatus = async (emailId: string): Promise<string> =>
    ((await db.query(`SELECT status FROM email_recipients WHERE email_id = $1`, [emailId])) as { status: string }[])[0]!.status;

  const events = async (emailId: string): Promise<string[]> =>
    ((await db.query(`SELECT type FROM email_events WHERE email_id = $1 ORDER BY created_at`, [emailId])) as { type: string }[]).map((r) => r.type);

  const suppressed = (address: string) =>
    suppressions.get(team.teamId, address).then(
      (entry) => entry,
      (error: unknown) => (error instanceof HeraldError && error.code === 'not_found' ? null : Promise.reject(error)),
    );

  it('commits the outcome and the suppression together, and hands the new events to the write', async () => {
    const address = 'gone@example.com';
    const email = await claimedEmailTo(address);
    let seen: string[][] = [];
    const [fresh] = await store.record([hardBounce(email, address)], async (tx, recorded) => {
      seen = recorded.map((events) => events.map((e) => e.type));
      await suppressions.suppressWithin(tx, team.teamId, address, 'bounce', email.id, 'user unknown');
    });
    expect(seen).toEqual([['email.bounced']]);
    expect(fresh!.map((e) => e.type)).toEqual(['email.bounced']);
    expect(await recipientStatus(email.id)).toBe('bounced');
    expect(await suppressed(address)).toMatchObject({ email: address, origin: 'bounce', source_id: email.id });
  });

  it('records neither when the write alongside fails: the claim stays, for the record to be tried again', async () => {
    const address = 'later@example.com';
    const email = await claimedEmailTo(address);
    await expect(
      store.record([hardBounce(email, address)], async (tx) => {
        await suppressions.suppressWithin(tx, team.teamId, address, 'bounce', email.id, 'user unknown');
        throw new Error('the write alongside failed');
      }),
    ).rejects.toThrow('the write alongside failed');
    expect(await recipientStatus(email.id)).toBe('sending');
    expect(await events(email.id)).not.toContain('email.bounced');
    expect(await suppressed(address)).toBeNull();

    const [fresh] = await store.record([hardBounce(email, address)]);
    expect(fresh!.map((e) => e.type)).toEqual(['email.bounced']);
    expect(await recipientStatus(email.id)).toBe('bounced');
  });
});
