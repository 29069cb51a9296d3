import { call, startTestApi, TestApi, TestTeam, UUID } from '../support/api-harness';
import { DatabaseProbe } from '../support/database-probe';
import { DAY, email, HOUR, REJECTED } from '../support/email-validation-cases';

/*
 * Every validation rule of POST /emails, driven over HTTP by the official `resend` SDK, whose
 * `error` is the server's error body verbatim (batch-validation.e2e-spec.ts has those of POST
 * /emails/batch). The unit specs beside the validators pin the exact wording; here each rule must
 * come back with the right status, error name, and a message that names the field.
 */

describe('validation through the resend SDK', () => {
  let api: TestApi;
  let db: DatabaseProbe;
  let acme: TestTeam;
  /** Used only for refused requests, so that it must end up with no email at all. */
  let refused: TestTeam;

  beforeAll(async () => {
    api = await startTestApi();
    db = await DatabaseProbe.open(api.config);
    [acme, refused] = await Promise.all([api.team(), api.team()]);
  });
  afterAll(async () => {
    await db.close();
    await api.close();
  });

  describe('POST /emails refuses', () => {
    it.each(REJECTED)('an email %s', async (_label, patch, { statusCode, name, mentions }) => {
      const { data, error } = await refused.resend.emails.send(email(refused, patch));
      expect(data).toBeNull();
      expect(error).toEqual({ statusCode, name, message: expect.stringContaining(mentions) });
    });

    it('shapes the SDK cannot send: a body that is no object, attachments that are no list', async () => {
      expect(await call(api.url, refused.token, 'POST', '/emails', [email(refused)])).toMatchObject({
        status: 422,
        body: { statusCode: 422, name: 'validation_error', message: 'The request body must be a JSON object.' },
      });
      expect(await call(api.url, refused.token, 'POST', '/emails', { ...email(refused), attachments: { content: 'aGk=' } })).toMatchObject({
        status: 422,
        body: { statusCode: 422, name: 'validation_error', message: 'The `attachments` field must be an array of attachment objects.' },
      });
    });

    it('an email larger than 40 MB, in one real request', async () => {
      // 30 MiB + 3 bytes is 41,943,044 bytes of base64: just over 40 MiB. About 1 s end to end.
      const content = Buffer.alloc(30 * 1024 * 1024 + 3, 7).toString('base64');
      const { error } = await refused.resend.emails.send(email(refused, { attachments: [{ content, filename: 'big.bin' }] }));
      expect(error).toEqual({
        statusCode: 422,
        name: 'validation_error',
        message: expect.stringContaining('The email must not be larger than 40 MB (41943040 bytes) including base64-encoded `attachments`'),
      });
    });

    it('and stores none of them', async () => {
      const { data } = await refused.resend.emails.list();
      expect(data!.data).toEqual([]);
    });
  });

  describe('POST /emails accepts', () => {
    it('to as a string or an array, and a named or quoted from, returning them as given', async () => {
      const named = `Acme <${acme.from('hello')}>`;
      const quoted = `"Acme, Inc." <${acme.from('hello')}>`;
      const one = await acme.resend.emails.send(email(acme, { from: named, to: 'jane@example.com' }));
      const many = await acme.resend.emails.send(
        email(acme, { from: quoted, to: ['jane@example.com', 'Bob <bob@example.com>'], cc: 'carl@example.com' }),
      );
      expect(one.error).toBeNull();
      expect(many.error).toBeNull();
      expect((await acme.resend.emails.get(one.data!.id)).data).toMatchObject({ from: named, to: ['jane@example.com'] });
      expect((await acme.resend.emails.get(many.data!.id)).data).toMatchObject({
        from: quoted,
        to: ['jane@example.com', 'Bob <bob@example.com>'],
        cc: ['carl@example.com'],
      });
    });

    it.each([
      ['in 1 hour', HOUR],
      ['in 2 days', 2 * DAY],
    ])('scheduled_at in natural language (%s)', async (scheduledAt, ahead) => {
      const before = Date.now();
      const sent = await acme.resend.emails.send(email(acme, { scheduledAt }));
      expect(sent.error).toBeNull();
      const { data } = await acme.resend.emails.get(sent.data!.id);
      expect(data!.last_event).toBe('scheduled');
      const at = new Date(data!.scheduled_at!.replace(' ', 'T').replace(/\+00$/, 'Z')).getTime();
      expect(at).toBeGreaterThanOrEqual(before + ahead - 1000);
      expect(at).toBeLessThanOrEqual(Date.now() + ahead + 1000);
    });

    it('attachments in every content form, stored byte for byte', async () => {
      const REPORT_URL = 'https://cdn.acme.test/files/report.pdf';
      const bytes = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 7) % 256));
      const sent = await acme.resend.emails.send(
        email(acme, {
          attachments: [
            { filename: 'base64.bin', content: bytes.toString('base64') },
            { filename: 'array.bin', content: [...bytes] },
            { filename: 'buffer-json.bin', content: bytes.toJSON() },
            // resend@6 turns a real Buffer into base64 itself.
            { filename: 'logo.png', content: bytes, contentId: 'logo-1', contentType: 'image/png' },
            { filename: 'report.pdf', path: REPORT_URL },
          ],
        }),
      );
      expect(sent.error).toBeNull();
      expect(sent.data!.id).toMatch(UUID);
      const octets = { content_type: 'application/octet-stream', content_id: null, path: null, content: bytes, size: 512 };
      expect(await db.attachments(sent.data!.id)).toEqual([
        { position: 0, filename: 'base64.bin', ...octets },
        { position: 1, filename: 'array.bin', ...octets },
        { position: 2, filename: 'buffer-json.bin', ...octets },
        { position: 3, filename: 'logo.png', ...octets, content_type: 'image/png', content_id: 'logo-1' },
        { position: 4, filename: 'report.pdf', ...octets, content_type: 'application/pdf', path: REPORT_URL, content: null, size: 0 },
      ]);
    });
  });
});

describe('the email size limit (MAX_EMAIL_BYTES=2048)', () => {
  let api: TestApi;
  let acme: TestTeam;

  beforeAll(async () => {
    api = await startTestApi({ MAX_EMAIL_BYTES: '2048' });
    acme = await api.team();
  });
  afterAll(() => api.close());

  // Counted: subject + html + text as UTF-8, custom headers, attachments as base64.
  // 1527 bytes travel as 2036 characters of base64; with `<p>x</p>` (8) that leaves 4 for the subject.
  const sized = (subject: string, attachments: { content: string }[]) => email(acme, { subject, html: '<p>x</p>', attachments });
  const bytes = (n: number) => Buffer.alloc(n, 1).toString('base64');

  it('accepts an email of exactly the limit', async () => {
    const { error } = await acme.resend.emails.send(sized('Subj', [{ content: bytes(1527) }]));
    expect(error).toBeNull();
  });

  it('refuses one byte more, naming attachments and the limit', async () => {
    const { error } = await acme.resend.emails.send(sized('Subje', [{ content: bytes(1527) }]));
    expect(error).toEqual({
      statusCode: 422,
      name: 'validation_error',
      message: expect.stringMatching(/\(2048 bytes\) including base64-encoded `attachments`; this one is 2049 bytes\.$/),
    });
  });

  it('counts the attachments together', async () => {
    const half = { content: bytes(900) }; // 1200 base64 characters each: each fits alone, not both
    expect((await acme.resend.emails.send(sized('S', [half]))).error).toBeNull();
    const { error } = await acme.resend.emails.send(sized('S', [half, half]));
    expect(error).toMatchObject({ statusCode: 422, name: 'validation_error', message: expect.stringContaining('2409 bytes') });
  });
});
