import { DataSource } from 'typeorm';
import { newId } from '@herald/core';
import { startTestApi, type TestApi, type TestTeam } from '../../../test/support/api-harness';
import { EmailRepository, type NewEmail } from './email.repository';
import type { NormalizedEmail } from './validation';

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

  const email = (overrides: Partial<NormalizedEmail> = {}): NormalizedEmail => ({
    from: team.from('hello'),
    fromAddress: team.from('hello'),
    fromDomain: team.domain,
    to: ['jane@example.com'],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'Hello',
    html: '<p>hi</p>',
    text: null,
    headers: null,
    attachments: [],
    tags: null,
    scheduledAt: null,
    recipients: [{ kind: 'to', address: 'jane@example.com' }],
    sizeBytes: 0,
    ...overrides,
  });
  const row = (e: NormalizedEmail): NewEmail => ({ id: newId(), teamId: team.teamId, region: 'us-east-1', source: 'api', idempotencyKey: null, email: e });

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

  it('gives each email an outbox row: due after the grace period, or at its scheduled time', async () => {
    const at = new Date(Date.now() + 3_600_000);
    const [now, later] = [row(email()), row(email({ scheduledAt: at }))];
    await emails.insert([now, later]);
    const rows: { email_id: string; due_at: Date; region: string }[] = await db.query(
      `SELECT email_id, due_at, region FROM email_dispatches WHERE email_id = ANY($1::uuid[])`,
      [[now.id, later.id]],
    );
    const due = new Map(rows.map((r) => [r.email_id, r.due_at.getTime()]));
    expect(due.get(later.id)).toBe(at.getTime());
    expect(due.get(now.id)! - Date.now()).toBeGreaterThan((api.config.DISPATCH_GRACE_SECONDS - 5) * 1000);
    expect((await emails.get(team.teamId, later.id))?.lastEvent).toBe('scheduled');
  });

  it('writes nothing for no emails', async () => {
    await expect(emails.insert([])).resolves.toBeUndefined();
  });
});
