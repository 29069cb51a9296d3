import { parseBatchValidationMode, validateBatchRequest } from './batch-request.validator';
import { errorOf, LIMITS, NOW, validEmail, valueOf } from './validation.fixture';

const batch = (body: unknown) => validateBatchRequest(body, LIMITS, NOW);

describe('validateBatchRequest', () => {
  it('validates each email and keeps input order', () => {
    const { results } = valueOf(batch([validEmail({ to: 'a@x.io' }), validEmail({ to: 'nope' }), validEmail({ subject: undefined })]));
    expect(results).toHaveLength(3);
    expect(results[0]?.ok && results[0].value.to).toEqual(['a@x.io']);
    expect(errorOf(results[1]!)).toEqual({
      code: 'validation_error',
      message: 'Invalid `to` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.',
    });
    expect(errorOf(results[2]!)).toEqual({ code: 'missing_required_field', message: 'Missing `subject` field.' });
  });

  it('supports scheduled_at per email', () => {
    const { results } = valueOf(batch([validEmail({ scheduled_at: 'in 1 min' })]));
    expect(results[0]?.ok && results[0].value.scheduledAt).toEqual(new Date('2026-08-05T10:01:00Z'));
  });

  it('refuses attachments in a batch item, naming the field', () => {
    const { results } = valueOf(batch([validEmail({ attachments: [{ content: 'aGk=', filename: 'a.txt' }] })]));
    expect(errorOf(results[0]!)).toEqual({
      code: 'validation_error',
      message: 'Invalid `attachments` field. Attachments are not supported in batch emails.',
    });
    const empty = valueOf(batch([validEmail({ attachments: [] }), validEmail({ attachments: null })]));
    expect(empty.results.every((r) => r.ok)).toBe(true);
  });

  it.each([
    [validEmail(), 'The request body must be an array of emails.'],
    [undefined, 'The request body must be an array of emails.'],
    [[], 'The request body must contain at least one email.'],
  ])('fails the whole batch for the envelope %j', (body, message) => {
    expect(errorOf(batch(body))).toEqual({ code: 'validation_error', message });
  });

  it('limits the batch size, naming the limit', () => {
    expect(valueOf(batch(Array.from({ length: 100 }, () => validEmail()))).results).toHaveLength(100);
    expect(errorOf(batch(Array.from({ length: 101 }, () => validEmail())))).toEqual({
      code: 'validation_error',
      message: 'The request body must not contain more than 100 emails (it has 101).',
    });
  });

  it('reports a non-object item per index', () => {
    const { results } = valueOf(batch([validEmail(), 'x']));
    expect(results[0]?.ok).toBe(true);
    expect(errorOf(results[1]!)?.message).toBe('The request body must be a JSON object.');
  });
});

describe('parseBatchValidationMode', () => {
  it.each([
    [undefined, 'strict'],
    ['', 'strict'],
    ['strict', 'strict'],
    [' Permissive ', 'permissive'],
    ['STRICT', 'strict'],
  ])('reads %j as %s', (header, mode) => {
    expect(valueOf(parseBatchValidationMode(header))).toBe(mode);
  });

  it.each(['lenient', 'true', 'strict,permissive'])('rejects %j', (header) => {
    expect(errorOf(parseBatchValidationMode(header))).toEqual({
      code: 'validation_error',
      message: 'Invalid `x-batch-validation` header. It must be `strict` or `permissive`.',
    });
  });
});
