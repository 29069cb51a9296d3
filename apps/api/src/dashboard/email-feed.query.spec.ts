import { isHeraldError } from '@herald/core';
import { tsQuery } from '@herald/messages';
import { parseFeedQuery } from './email-feed.query';

const message = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (isHeraldError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  return 'no error';
};

describe('the Emails page query', () => {
  it('reads filters, a recipient search and subject words', () => {
    const id = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
    expect(parseFeedQuery({ limit: '10', last_event: 'delivered', domain_id: id, from: '2026-11-01', q: 'Jane@Example.com' })).toEqual({
      page: { limit: 10, after: null, before: null },
      filter: { lastEvent: 'delivered', since: new Date('2026-11-01'), until: undefined, recipient: 'Jane@Example.com' },
      domainId: id,
      apiKeyId: undefined,
    });
    expect(parseFeedQuery({ q: ' order  shipped ' }).filter.words).toEqual(['order', 'shipped']);
  });

  it('names the parameter that is wrong', () => {
    expect(message(() => parseFeedQuery({ last_event: 'lost' }))).toMatch(/^validation_error: The `last_event` parameter must be one of/);
    expect(message(() => parseFeedQuery({ domain_id: 'x' }))).toBe('invalid_parameter: The `domain_id` parameter must be a valid UUID.');
    expect(message(() => parseFeedQuery({ from: 'yesterday' }))).toMatch(/`from` parameter must be an ISO 8601 date/);
    expect(message(() => parseFeedQuery({ limit: '500' }))).toMatch(/pagination limit/);
  });

  it('turns words into a prefix query for the last one', () => {
    expect(tsQuery(['Order', 'ship'])).toBe('order & ship:*');
    expect(tsQuery(["it's", 'a&b'])).toBe('its & ab:*');
  });
});
