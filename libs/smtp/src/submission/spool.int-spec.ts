import { randomBytes, randomUUID } from 'node:crypto';
import type Mail from 'nodemailer/lib/mailer';
import { DataSource } from 'typeorm';
import type { Principal } from '@herald/accounts';
import { EmailStore } from '@herald/messages';
import type { TestTeam } from '../../../../test/support/api-harness';
import { accepted, authenticated, compose, refused, startSubmissionSuite, type SubmissionSuite } from '../../../../test/support/smtp-submissions';
import { SPOOL_AFTER_BYTES } from '../message-reader';
import { SMTP_SUBMISSION_REPLIES } from '../smtp-replies';
import type { SmtpEnvelope } from '../submission-port';
import { SmtpSubmissions } from './smtp-submissions.service';

const MAX_BYTES = 8 * 1024 * 1024;

/** A large message's body stored in Postgres as it arrives (MimeSpool), joined into email_mime when the email commits. */
describe('SmtpSubmissions: a spooled message', () => {
  let suite: SubmissionSuite;
  let smtp: SmtpSubmissions;
  let db: DataSource;
  let team: TestTeam;
  let principal: Principal;

  beforeAll(async () => {
    suite = await startSubmissionSuite({ MAX_EMAIL_BYTES: String(MAX_BYTES) });
    smtp = suite.app.get(SmtpSubmissions);
    db = suite.app.get(DataSource);
    team = await suite.api.team();
    principal = await authenticated(smtp, team.token);
  });

  afterAll(() => suite?.close());

  const envelopeTo = (to: string): SmtpEnvelope => ({ mailFrom: team.from(), rcptTo: [to] });
  const message = (to: string, attachment: Buffer, extra: Partial<Mail.Options> = {}) =>
    compose({
      from: team.from(),
      to,
      subject: 'Big',
      text: 'See the attachment',
      attachments: [{ filename: 'a.bin', content: attachment }],
      ...extra,
    });
  /** As the relay does: the head held (header and SPOOL_AFTER_BYTES), the rest written in the relay's chunk sizes. */
  const spooled = (raw: Buffer) => {
    const head = raw.subarray(0, SPOOL_AFTER_BYTES);
    const spool = smtp.spool(head);
    return {
      head,
      spool,
      write: async () => {
        for (let at = head.length; at < raw.length; at += 65_536) await spool.write(raw.subarray(at, at + 65_536));
      },
    };
  };
  const submitSpooled = async (envelope: SmtpEnvelope, raw: Buffer) => {
    const { head, spool, write } = spooled(raw);
    await write();
    return smtp.submit(principal, envelope, head, spool);
  };
  const stored = async (id: string): Promise<Buffer> => (await db.query(`SELECT mime FROM email_mime WHERE email_id = $1`, [id]))[0].mime;
  const chunks = async (uploadId?: string): Promise<number> =>
    Number((await db.query(`SELECT count(*) AS n FROM email_mime_uploads WHERE $1::uuid IS NULL OR upload_id = $1`, [uploadId ?? null]))[0].n);
  const bodyOf = (raw: Buffer) => raw.subarray(raw.indexOf('\r\n\r\n') + 4);

  it('stores the message whole, its header rewritten and its body byte for byte, and deletes the chunks', async () => {
    const raw = await message('ann@example.com', randomBytes(3_000_000), { headers: { 'Herald-Idempotency-Key': `ann-${randomUUID()}` } });
    const id = accepted(await submitSpooled(envelopeTo('ann@example.com'), raw));
    const mime = await stored(id);
    expect(bodyOf(mime).equals(bodyOf(raw))).toBe(true);
    const header = (m: Buffer) => m.subarray(0, m.indexOf('\r\n\r\n')).toString('latin1');
    expect(header(raw)).toMatch(/^herald-idempotency-key:/im);
    expect(header(mime)).toBe(header(raw).replace(/^herald-idempotency-key:.*\r\n/im, ''));
    expect(await chunks()).toBe(0);
  });

  it('is the same message for idempotency as the one held whole', async () => {
    const attachment = randomBytes(2_000_000);
    const options = { headers: { 'Herald-Idempotency-Key': `big-${randomUUID()}` } };
    const first = accepted(await submitSpooled(envelopeTo('bo@example.com'), await message('bo@example.com', attachment, options)));
    // composed again: new boundaries, Date and Message-ID
    expect(accepted(await smtp.submit(principal, envelopeTo('bo@example.com'), await message('bo@example.com', attachment, options)))).toBe(first);
    const other = await message('bo@example.com', randomBytes(2_000_000), options);
    expect(refused(await submitSpooled(envelopeTo('bo@example.com'), other))).toMatchObject({ code: 550, enhanced: '5.7.0' });
  });

  it('is stored intact beside messages held whole submitted at the same time (which the group commit may join)', async () => {
    const small = await Promise.all([1, 2, 3].map((i) => message(`s${i}@example.com`, randomBytes(100))));
    const big = await message('big@example.com', randomBytes(2_000_000));
    const results = await Promise.all([
      submitSpooled(envelopeTo('big@example.com'), big),
      ...small.map((raw, i) => smtp.submit(principal, envelopeTo(`s${i + 1}@example.com`), raw)),
    ]);
    const ids = results.map(accepted);
    expect(bodyOf(await stored(ids[0])).equals(bodyOf(big))).toBe(true);
    for (const [i, raw] of small.entries()) expect(bodyOf(await stored(ids[i + 1])).equals(bodyOf(raw))).toBe(true);
  });

  it('answers 451 and stores nothing when a chunk is missing (Postgres lost its unlogged table)', async () => {
    const raw = await message('cy@example.com', randomBytes(2_500_000));
    const { head, spool, write } = spooled(raw);
    await write();
    // every chunk stored (submit waits for this too), then one lost
    const { chunks: written } = await spool.end();
    await db.query(`DELETE FROM email_mime_uploads WHERE upload_id = $1 AND seq = 1`, [spool.id]);
    expect(await chunks(spool.id)).toBe(written - 1);
    expect(refused(await smtp.submit(principal, envelopeTo('cy@example.com'), head, spool))).toEqual(SMTP_SUBMISSION_REPLIES.storing);
    expect(await db.query(`SELECT 1 FROM email_recipients WHERE address = 'cy@example.com'`)).toEqual([]);
    await spool.discard();
    expect(await chunks(spool.id)).toBe(0);
  });

  it('answers 552 when the head and the spooled rest pass MAX_EMAIL_BYTES', async () => {
    const raw = await message('di@example.com', randomBytes(Math.ceil(MAX_BYTES * 0.75)));
    expect(raw.length).toBeGreaterThan(MAX_BYTES);
    const { head, spool, write } = spooled(raw);
    await write();
    expect(refused(await smtp.submit(principal, envelopeTo('di@example.com'), head, spool))).toEqual(SMTP_SUBMISSION_REPLIES.tooBig(MAX_BYTES));
    await spool.discard();
    expect(await chunks(spool.id)).toBe(0);
  });

  it('sweeps chunks older than any session', async () => {
    const { spool, write } = spooled(await message('ed@example.com', randomBytes(2_000_000)));
    await write();
    await spool.end();
    expect(await chunks(spool.id)).toBeGreaterThan(0);
    const store = suite.app.get(EmailStore);
    expect(await store.sweepMimeUploads(3600)).toBe(0);
    await db.query(`UPDATE email_mime_uploads SET created_at = now() - interval '2 hours' WHERE upload_id = $1`, [spool.id]);
    expect(await store.sweepMimeUploads(3600)).toBeGreaterThan(0);
    expect(await chunks(spool.id)).toBe(0);
  });
});
