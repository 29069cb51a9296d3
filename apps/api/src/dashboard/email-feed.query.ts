import { z } from 'zod';
import { isUuid } from '@herald/core';
import { fail, isPlainObject, parseOrThrow, parsePage, type PageRequest } from '@herald/http';
import { LAST_EVENTS } from '@herald/emails';
import type { EmailFeedFilter } from '@herald/messages';

const oneString = (field: string) =>
  z
    .unknown()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return undefined;
      if (typeof value !== 'string') return fail(ctx, `The \`${field}\` parameter must be given once.`);
      return value;
    });

const date = (field: string) =>
  oneString(field).transform((value, ctx) => {
    if (value === undefined) return undefined;
    const parsed = /^\d{4}-\d{2}-\d{2}/.test(value) ? new Date(value) : new Date(NaN);
    if (Number.isNaN(parsed.getTime()))
      return fail(ctx, `The \`${field}\` parameter must be an ISO 8601 date, e.g. 2026-11-26 or 2026-11-26T14:00:00Z.`);
    return parsed;
  });

const uuid = (field: string) =>
  oneString(field).transform((value, ctx) => {
    if (value === undefined) return undefined;
    if (!isUuid(value)) return fail(ctx, `The \`${field}\` parameter must be a valid UUID.`, 'invalid_parameter');
    return value.toLowerCase();
  });

const feedQuery = z.object({
  last_event: oneString('last_event').transform((value, ctx) => {
    if (value === undefined) return undefined;
    if (!(LAST_EVENTS as readonly string[]).includes(value))
      return fail(ctx, `The \`last_event\` parameter must be one of: ${LAST_EVENTS.join(', ')}.`);
    return value;
  }),
  domain_id: uuid('domain_id'),
  api_key_id: uuid('api_key_id'),
  from: date('from'),
  to: date('to'),
  q: oneString('q').transform((value, ctx) => {
    if (value === undefined || !value.trim()) return undefined;
    if (value.length > 200) return fail(ctx, 'The `q` parameter must be at most 200 characters.');
    return value.trim();
  }),
});

export interface FeedQuery {
  page: PageRequest;
  filter: Omit<EmailFeedFilter, 'fromDomain'>;
  domainId?: string;
}

/** The Emails page's query: the page (`limit`, `after`, `before`), the filters, and `q` read as an address or words. */
export function parseFeedQuery(query: unknown): FeedQuery {
  const input = isPlainObject(query) ? query : {};
  const page = parsePage({ limit: input['limit'], after: input['after'], before: input['before'] });
  const parsed = parseOrThrow(feedQuery, input);
  const filter: FeedQuery['filter'] = { lastEvent: parsed.last_event, apiKeyId: parsed.api_key_id, since: parsed.from, until: parsed.to };
  if (parsed.q) {
    if (parsed.q.includes('@')) filter.recipient = parsed.q;
    else filter.words = parsed.q.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w));
  }
  return { page, filter, domainId: parsed.domain_id };
}
