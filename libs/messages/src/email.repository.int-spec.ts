import { DataSource } from 'typeorm';
import { newId } from '@herald/core';
import { startTestApi, type TestApi, type TestTeam } from '../../../test/support/api-harness';
import { newEmailRow, normalizedEmail } from '../../../test/support/email-rows';
import { EmailEventsRepository } from './email-events.repository';
import { EmailRepository } from './email.repository';

/** The send path's insert writes every column as given, whatever characters the values hold. */
describe('EmailRepository.insert', () => {
  let api: TestApi;
  let team: TestTeam;
  let emails: EmailRepository;
  let db: DataSource;

  beforeAll(async () => {
    api = await startTestApi();
    team = await api.team();
    emails = api.app.get(EmailRepository);
    db = api.app.get(DataSource);
  });

  afterAll(() => api?.close());

  const email = (overrides: Parameters<typeof normalizedEmail>[2] = {}) => normalizedEmail(team.from('hello'), team.domain, overrides);
  const row = (e: ReturnType<typeof normalizedEmail>, dispatchId?: string) => newEmailRow(team.teamId, e, dispatchId);

  it('keeps quotes, backslashes, braces, commas, NULL-looking text, empty strings and Unicode intact', async () => {
    const tricky = email({
      from: `"O\\"Brien, {Acme}" <${team.from('hello')}>`,
      to: ['"Smith, J" <j@example.com>', 'NULL <null@example.com>'],
      cc: ['back\\slash <b@example.com>'],
      replyTo: ['{braces} <r@example.com>'],
      subject: 'Ünïcødé "quoted" \\ {x,y} NULL',
      html: '<a href="x">\\n</a>',
      text: '',
      headers: { 'X-Odd': 'a "b" \\ c' },
      tags: [{ name: 'k', value: 'v_1' }],
      recipients: [
        { kind: 'to', address: 'j@example.com' },
        { kind: 'to', address: 'null@example.com' },
        { kind: 'cc', address: 'b@example.com' },
      ],
    });
    const plain = email();
    const [first, second] = [row(tricky), row(plain)];
    await emails.insert([first, second]);

    const got = await emails.get(team.teamId, first.id);
    expect(got).toMatchObject({
      from: tricky.from,
      to: tricky.to,
      cc: tricky.cc,
      bcc: null,
      replyTo: tricky.replyTo,
      subject: tricky.subject,
      html: tricky.html,
      text: '',
      headers: tricky.headers,
      tags: tricky.tags,
      lastEvent: 'queued',
    });
    expect(await emails.get(team.teamId, second.id)).toMatchObject({ to: ['jane@example.com'], cc: null, replyTo: null, text: null });
    const recipients = await db.query(`SELECT position, kind, address FROM email_recipients WHERE email_id = $1 ORDER BY position`, [first.id]);
    expect(recipients).toEqual(tricky.recipients.map((r, position) => ({ position, ...r })));
  });

  it('lists the emails of one dispatch in one outbox row, due after the grace period; a scheduled email has its own', async () => {
    const at = new Date(Date.now() + 3_600_000);
    const dispatchId = newId();
    const [first, second, later] = [row(email(), dispatchId), row(email(), dispatchId), row(email({ scheduledAt: at }))];
    const events = await emails.insert([first, second, later]);
    const rows: { id: string; due_at: Date; region: string; email_ids: string[] }[] = await db.query(
      `SELECT id, due_at, region, email_ids FROM email_dispatches WHERE id = ANY($1::uuid[])`,
      [[dispatchId, later.id]],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(dispatchId)?.email_ids).toEqual([first.id, second.id]);
    expect(byId.get(dispatchId)!.due_at.getTime() - Date.now()).toBeGreaterThan((api.config.DISPATCH_GRACE_SECONDS - 5) * 1000);
    expect(byId.get(later.id)).toMatchObject({ email_ids: [later.id], due_at: at, region: 'us-east-1' });
    expect((await emails.get(team.teamId, later.id))?.lastEvent).toBe('scheduled');
    // email.scheduled is stored with the email (the same transaction) and returned to be published.
    expect(events.map((e) => [e.type, e.emailId])).toEqual([['email.scheduled', later.id]]);
    const stored = await db.query(`SELECT email_id, type FROM email_events WHERE email_id = ANY($1::uuid[])`, [[first.id, later.id]]);
    expect(stored).toEqual([{ email_id: later.id, type: 'email.scheduled' }]);
  });

  it('rolls back the emails when their events cannot be stored', async () => {
    const later = row(email({ scheduledAt: new Date(Date.now() + 3_600_000) }));
    const events = api.app.get(EmailEventsRepository);
    const spy = jest.spyOn(events, 'insert').mockRejectedValueOnce(new Error('disk full'));
    try {
      await expect(emails.insert([later])).rejects.toThrow('disk full');
    } finally {
      spy.mockRestore();
    }
    expect(await emails.get(team.teamId, later.id)).toBeNull();
    expect(await db.query(`SELECT 1 FROM email_dispatches WHERE id = $1`, [later.id])).toEqual([]);
  });

  it('writes nothing for no emails', async () => {
    await expect(emails.insert([])).resolves.toEqual([]);
  });
});
