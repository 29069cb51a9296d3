import { validateListQuery, validateUpdateEmailRequest } from './email-query.validator';
import { errorOf, LIMITS, NOW, valueOf } from './validation.fixture';

const ID = '4ef9a417-02e9-4d39-ad75-9611e0fcc33c';
const LIMIT_MESSAGE = 'The pagination limit must be a number between 1 and 100.';

describe('validateUpdateEmailRequest', () => {
  const update = (body: unknown) => validateUpdateEmailRequest(body, LIMITS, NOW);

  it('reads scheduled_at and ignores other fields', () => {
    expect(valueOf(update({ scheduled_at: '2026-08-06T09:00:00Z', subject: 'ignored' }))).toEqual({
      scheduledAt: new Date('2026-08-06T09:00:00Z'),
    });
    expect(valueOf(update({ scheduled_at: 'tomorrow at 9am' })).scheduledAt).toEqual(new Date('2026-08-06T09:00:00Z'));
  });

  it('requires scheduled_at', () => {
    for (const body of [{}, { scheduled_at: null }]) {
      expect(errorOf(update(body))).toEqual({ code: 'missing_required_field', message: 'Missing `scheduled_at` field.' });
    }
  });

  it('rejects a body that is not an object and bad dates', () => {
    expect(errorOf(update(undefined))).toEqual({ code: 'validation_error', message: 'The request body must be a JSON object.' });
    expect(errorOf(update({ scheduled_at: '2026-08-01T00:00:00Z' }))).toEqual({
      code: 'validation_error',
      message: 'Invalid `scheduled_at` field. The date must be in the future.',
    });
  });
});

describe('validateListQuery', () => {
  it('defaults to 20 items and no cursor', () => {
    expect(valueOf(validateListQuery({}))).toEqual({ limit: 20, after: null, before: null });
    expect(valueOf(validateListQuery(undefined))).toEqual({ limit: 20, after: null, before: null });
  });

  it('reads limit from a query string or a number', () => {
    expect(valueOf(validateListQuery({ limit: '1' })).limit).toBe(1);
    expect(valueOf(validateListQuery({ limit: ' 100 ' })).limit).toBe(100);
    expect(valueOf(validateListQuery({ limit: 50 })).limit).toBe(50);
  });

  it.each([['0'], ['101'], ['-1'], ['1.5'], ['ten'], [''], [['10', '20']], [1.5], [0]])('rejects limit %j', (limit) => {
    expect(errorOf(validateListQuery({ limit }))).toEqual({ code: 'validation_error', message: LIMIT_MESSAGE });
  });

  it('accepts one UUID cursor, lowercased', () => {
    expect(valueOf(validateListQuery({ after: ID.toUpperCase() }))).toEqual({ limit: 20, after: ID, before: null });
    expect(valueOf(validateListQuery({ before: ID, limit: '5' }))).toEqual({ limit: 5, after: null, before: ID });
    expect(valueOf(validateListQuery({ after: '' })).after).toBeNull();
  });

  it('refuses after and before together', () => {
    expect(errorOf(validateListQuery({ after: ID, before: ID }))).toEqual({
      code: 'validation_error',
      message: 'The `after` and `before` parameters cannot be used together.',
    });
  });

  it.each([
    ['after', 'not-a-uuid'],
    ['before', '123'],
    ['after', [ID, ID]],
  ])('rejects a %s cursor that is not a UUID (%j) as invalid_parameter', (name, value) => {
    expect(errorOf(validateListQuery({ [name]: value }))).toEqual({
      code: 'invalid_parameter',
      message: `The \`${name}\` parameter must be a valid UUID.`,
    });
  });
});
