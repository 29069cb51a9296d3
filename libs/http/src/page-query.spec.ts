import { HeraldError } from '@herald/core';
import { parsePage, type PageOptions } from './page-query';

const ID = '4ef9a417-02e9-4d39-ad75-9611e0fcc33c';
const LIMIT = 'The pagination limit must be a number between 1 and 100.';

function failure(query: unknown, options?: PageOptions): { code: string; message: string } {
  try {
    parsePage(query, options);
  } catch (e) {
    if (e instanceof HeraldError) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('did not throw');
}

describe('parsePage, the one page parser of every list', () => {
  it('defaults to 20 without a cursor, and reads limit and one UUID cursor (lowercased)', () => {
    expect(parsePage({})).toEqual({ limit: 20, after: null, before: null });
    expect(parsePage({ limit: ' 7 ', before: ID.toUpperCase() })).toEqual({ limit: 7, after: null, before: ID });
  });

  it('reports the first problem in Resend’s words: limit, then cursors, then both cursors together', () => {
    expect(failure({ limit: '0', after: 'x' })).toEqual({ code: 'validation_error', message: LIMIT });
    expect(failure({ after: 'x' })).toEqual({ code: 'invalid_parameter', message: 'The `after` parameter must be a valid UUID.' });
    expect(failure({ after: ID, before: ID })).toEqual({
      code: 'validation_error',
      message: 'The `after` and `before` parameters cannot be used together.',
    });
  });

  it('answers null for the whole list only where the limit is optional', () => {
    expect(parsePage({}, { limitOptional: true })).toBeNull();
    expect(parsePage({ after: ID }, { limitOptional: true })).toEqual({ limit: 20, after: ID, before: null });
  });

  it('reads a blank limit as no limit only where the list always did', () => {
    expect(failure({ limit: '' })).toEqual({ code: 'validation_error', message: LIMIT });
    expect(parsePage({ limit: '' }, { blankLimitIsDefault: true }).limit).toBe(20);
  });

  it('pages a log forward only, by its own cursor kind', () => {
    const cursor = { valid: (v: string) => /^\d+$/.test(v), described: 'an attempt id', normalize: (v: string) => v };
    expect(parsePage({ after: '42' }, { cursor, forwardOnly: true })).toEqual({ limit: 20, after: '42', before: null });
    expect(failure({ before: '42' }, { cursor, forwardOnly: true }).message).toBe('The `before` parameter is not supported here; page with `after`.');
    expect(failure({ after: 'x' }, { cursor, forwardOnly: true })).toEqual({
      code: 'invalid_parameter',
      message: 'The `after` parameter must be an attempt id.',
    });
  });
});
