import { call, startTestApi, TestApi, TestTeam, UUID } from '../support/api-harness';
import { email } from '../support/email-validation-cases';

/*
 * The validation rules of POST /emails/batch, driven over HTTP by the official `resend` SDK, whose
 * `error` is the server's error body verbatim (validation.e2e-spec.ts has those of each email).
 */

describe('validation through the resend SDK', () => {
  let api: TestApi;
  /** A paid plan: the free plan's 100 recipients a day would end the batch tests early. */
  let bulk: TestTeam;

  beforeAll(async () => {
    api = await startTestApi();
    bulk = await api.team({ plan: 'pro-50k' });
  });
  afterAll(() => api.close());

  describe('POST /emails/batch', () => {
    it('refuses a body that is not an array, or an empty one', async () => {
      expect(await call(api.url, bulk.token, 'POST', '/emails/batch', email(bulk))).toMatchObject({
        status: 422,
        body: { statusCode: 422, name: 'validation_error', message: 'The request body must be an array of emails.' },
      });
      const empty = await bulk.resend.batch.send([]);
      expect(empty.error).toEqual({ statusCode: 422, name: 'validation_error', message: expect.stringContaining('at least one email') });
    });

    it('refuses more than 100 emails', async () => {
      const { error } = await bulk.resend.batch.send(Array.from({ length: 101 }, () => email(bulk)));
      expect(error).toEqual({
        statusCode: 422,
        name: 'validation_error',
        message: 'The request body must not contain more than 100 emails (it has 101).',
      });
      expect((await bulk.resend.batch.send(Array.from({ length: 100 }, () => email(bulk)))).data!.data).toHaveLength(100);
    });

    it('refuses attachments, naming the email, and lists it in permissive mode', async () => {
      const emails = [email(bulk), email(bulk, { attachments: [{ content: 'aGk=', filename: 'a.txt' }] })];
      const strict = await bulk.resend.batch.send(emails);
      expect(strict.error).toEqual({
        statusCode: 422,
        name: 'validation_error',
        message: 'emails[1]: Invalid `attachments` field. Attachments are not supported in batch emails.',
      });
      const permissive = await bulk.resend.batch.send(emails, { batchValidation: 'permissive' });
      expect(permissive.error).toBeNull();
      expect(permissive.data).toEqual({
        data: [{ id: expect.stringMatching(UUID) }],
        errors: [{ index: 1, message: 'Invalid `attachments` field. Attachments are not supported in batch emails.' }],
      });
    });

    it('keeps the error name of an item in strict mode', async () => {
      const { error } = await bulk.resend.batch.send([email(bulk), email(bulk, { subject: undefined })]);
      expect(error).toEqual({ statusCode: 422, name: 'missing_required_field', message: 'emails[1]: Missing `subject` field.' });
      const from = await bulk.resend.batch.send([email(bulk, { from: 'nobody' })]);
      expect(from.error).toEqual({
        statusCode: 422,
        name: 'invalid_from_address',
        message: expect.stringContaining('emails[0]: Invalid `from` field.'),
      });
    });

    it('refuses an unknown x-batch-validation mode', async () => {
      const { error } = await bulk.resend.batch.send([email(bulk)], { batchValidation: 'lenient' as 'strict' });
      expect(error).toEqual({
        statusCode: 422,
        name: 'validation_error',
        message: 'Invalid `x-batch-validation` header. It must be `strict` or `permissive`.',
      });
    });
  });
});
